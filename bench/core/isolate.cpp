// Case isolation: every case runs in a child `gpubench run` process. CUDA state cannot be
// shared across fork(), so the child is a fresh exec of the same binary with the same
// arguments; it re-plans (planning is deterministic) and runs only case N into its own file.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "harness.hpp"
#include "interrupt.hpp"
#include "paths.hpp"
#include "spawn.hpp"

namespace gpubench {
namespace {
namespace fs = std::filesystem;

struct ChildResult {
  bool timed_out = false;
  bool exited = false;
  int code = 0;    // exit status when exited
  int signal = 0;  // terminating signal otherwise
};

ChildResult run_child(const std::string& exe, const std::vector<std::string>& args, double timeout_s) {
  const pid_t pid = spawn_child(exe, args);
  set_interruptible_child(pid);
  ChildResult r;
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout_s > 0 && elapsed > timeout_s) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  set_interruptible_child(0);
  if (!r.timed_out) {
    r.exited = WIFEXITED(status);
    r.code = r.exited ? WEXITSTATUS(status) : 0;
    r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return r;
}

std::vector<nlohmann::ordered_json> child_entries(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return {};
  try {
    auto doc = nlohmann::ordered_json::parse(in);
    return doc.at("benchmarks").get<std::vector<nlohmann::ordered_json>>();
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

RunSummary run_plan_isolated(const std::vector<PlannedCase>& plan, const HarnessOptions& opt,
                             const IsolationOptions& iso, ResultsFile& results) {
  RunSummary summary;
  Recorder recorder(results);
  const std::unique_ptr<RunObserver> observer = make_observer(plan, opt);
  RunObserver& console = *observer;
  const fs::path scratch = temp_folder() / fmt::format("{}{}", kIsolateScratchPrefix, ::getpid());
  fs::create_directories(scratch);
  // Removed on every way out: here when the loop ends or throws, by the interruption handler
  // on a signal, and by the next isolated run's start after a SIGKILL (cmd_run).
  struct ScratchGuard {
    fs::path dir;
    explicit ScratchGuard(fs::path d) : dir(std::move(d)) { set_interrupt_scratch_folder(dir.string()); }
    ~ScratchGuard() {
      set_interrupt_scratch_folder("");
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } guard(scratch);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedCase& c = plan[i];
    console.started(i);
    const fs::path out = scratch / fmt::format("case-{}.json", i);
    std::vector<std::string> args = iso.child_args;
    args.insert(args.end(), {"--isolated-case", std::to_string(i), "--isolated-out", out.string(), "--quiet"});
    const ChildResult r = run_child(iso.executable, args, iso.case_timeout_s);
    std::vector<nlohmann::ordered_json> entries = r.exited ? child_entries(out) : std::vector<nlohmann::ordered_json>{};
    fs::remove(out);
    if (entries.empty()) {
      std::string reason;
      if (r.timed_out) {
        reason = fmt::format("timed out after {:g} s ({}); the case's process was killed", iso.case_timeout_s,
                             iso.timeout_is_default ? "--isolate's default case timeout; set one with --case-timeout"
                                                    : "--case-timeout");
      } else if (!r.exited) {
        reason = fmt::format("the case's process crashed: signal {} ({})", r.signal, ::strsignal(r.signal));
      } else {
        reason = fmt::format("the case's process exited with status {} and wrote no result", r.code);
      }
      entries.push_back(failure_entry(c, i, reason));
    }
    std::string status = "ok";
    for (auto& e : entries) {
      e["family_index"] = i;  // each child numbered its only case 0
      const std::string s = e["gpubench"].value("status", "failed");
      if (s == "failed" || (s == "skipped" && status == "ok")) status = s;
      recorder.add(*c.suite, e);
    }
    if (status == "ok") ++summary.ok;
    if (status == "skipped") ++summary.skipped;
    if (status == "failed") ++summary.failed;
    console.finished(i, recorded_entries(results, entries.size()));
  }
  console.done();
  return summary;
}

double default_case_timeout_s(const MeasureOptions& m, int repetitions) {
  return 300 + 20 * (m.warmup_s + m.min_time_s * std::max(repetitions, 1));
}

}  // namespace gpubench
