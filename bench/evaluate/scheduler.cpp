#include "bench/evaluate/scheduler.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "bench/core/spawn.hpp"

namespace gpubench::evaluate {
namespace {

pid_t start(const std::string& exe, const Worker& w) {
  // argv[0]: gpubench for our own executable, else the program's name (mpirun).
  const std::size_t slash = exe.rfind('/');
  SpawnOptions o;
  o.argv0 = exe == "/proc/self/exe" ? "gpubench" : exe.substr(slash == std::string::npos ? 0 : slash + 1);
  o.env = w.env;
  o.log = w.log;
  o.sigint_default = true;  // run_workers stops a worker with SIGINT (it keeps what it finished)
  return spawn_child(exe, w.args, o);
}

}  // namespace

std::vector<WorkerResult> run_workers(const std::string& exe, const std::vector<Worker>& workers,
                                      std::optional<Clock::time_point> stop_at, double grace_s,
                                      const std::atomic<bool>* stop) {
  const Clock::time_point begin = Clock::now();
  std::vector<pid_t> pids;
  std::vector<WorkerResult> results(workers.size());
  try {
    for (const Worker& w : workers) pids.push_back(start(exe, w));
  } catch (...) {
    for (pid_t p : pids) ::kill(-p, SIGKILL);
    for (pid_t p : pids) ::waitpid(p, nullptr, 0);
    throw;
  }
  std::size_t running = pids.size();
  bool interrupted = false;
  std::optional<Clock::time_point> kill_at;
  while (running > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (pids[i] <= 0) continue;
      int status = 0;
      const pid_t done = ::waitpid(pids[i], &status, WNOHANG);
      if (done != pids[i]) continue;
      WorkerResult& r = results[i];
      r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      r.stopped = interrupted;
      r.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
      pids[i] = 0;
      --running;
    }
    if (running == 0) break;
    const Clock::time_point now = Clock::now();
    if (!interrupted && ((stop_at && now >= *stop_at) || (stop != nullptr && stop->load()))) {
      interrupted = true;  // gpubench ends on SIGINT keeping every finished case
      for (pid_t p : pids)
        if (p > 0) ::kill(-p, SIGINT);
      kill_at = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_s));
    }
    if (kill_at && now >= *kill_at) {
      for (pid_t p : pids)
        if (p > 0) ::kill(-p, SIGKILL);
      kill_at.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return results;
}

}  // namespace gpubench::evaluate
