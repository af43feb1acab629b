#pragma once
// One worker process per GPU, all at once, as mpirun starts one rank per GPU: the screen's time
// is one worker's, whatever the GPU count. Each worker is a fresh exec of gpubench (CUDA state
// cannot cross fork()) in its own process group, dying with its parent, with stdout and stderr
// in a log file. At `stop_at` every worker still running gets SIGINT (gpubench keeps every case
// it finished), then SIGKILL `grace_s` later.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::evaluate {

struct Worker {
  std::vector<std::string> args;  // argv after the executable's name
  std::string log;                // stdout and stderr go here ("" keeps the parent's)
  std::vector<std::string> env;   // NAME=VALUE set for it over the parent's environment (NCCL_ALGO=Ring)
};

struct WorkerResult {
  int exit_code = -1;   // the exit status, or -1 when it ended by a signal
  int signal = 0;       // the signal that ended it
  bool stopped = false; // it was still running at stop_at
  double seconds = 0;   // from the start of all workers to its end
};

using Clock = std::chrono::steady_clock;

// Starts every worker, waits for all, returns their results in order. `executable` is the path
// exec'd (gpubench's /proc/self/exe; a test gives a stand-in).
// `stop`, when given and set (an interruption of the caller), stops them as stop_at does.
std::vector<WorkerResult> run_workers(const std::string& executable, const std::vector<Worker>& workers,
                                      std::optional<Clock::time_point> stop_at = std::nullopt, double grace_s = 10,
                                      const std::atomic<bool>* stop = nullptr);

}  // namespace gpubench::evaluate
