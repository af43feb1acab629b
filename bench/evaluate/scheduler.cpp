#include "bench/evaluate/scheduler.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace gpubench::evaluate {
namespace {

pid_t start(const std::string& exe, const Worker& w) {
  // argv[0]: gpubench for our own executable, else the program's name (mpirun).
  const std::size_t slash = exe.rfind('/');
  std::vector<std::string> storage{exe == "/proc/self/exe" ? "gpubench" : exe.substr(slash == std::string::npos ? 0 : slash + 1)};
  storage.insert(storage.end(), w.args.begin(), w.args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  // The environment, built before fork (the child only execs): the parent's, each of w.env
  // replacing the variable of its name.
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var(*e);
    const std::string name = var.substr(0, var.find('='));
    bool replaced = false;
    for (const std::string& o : w.env) replaced = replaced || o.substr(0, o.find('=')) == name;
    if (!replaced) env_storage.push_back(var);
  }
  env_storage.insert(env_storage.end(), w.env.begin(), w.env.end());
  std::vector<char*> envp;
  for (std::string& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("evaluate: fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: SIGINT reaches the worker and whatever it started
    // An orphaned worker would go on holding its GPU: it dies with the parent, even on SIGKILL.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (!w.log.empty()) {
      const int fd = ::open(w.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
    }
    ::execve(exe.c_str(), argv.data(), envp.data());
    std::fprintf(stderr, "evaluate: cannot run %s: %s\n", exe.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
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
