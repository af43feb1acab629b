#include "spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace gpubench {

pid_t spawn_child(const std::string& exe, const std::vector<std::string>& args, const SpawnOptions& o) {
  // Everything the child needs is built before fork: the child only execs.
  std::vector<std::string> storage{o.argv0};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  // The parent's environment, each of o.env replacing the variable of its name.
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var(*e);
    const std::string name = var.substr(0, var.find('='));
    bool replaced = false;
    for (const std::string& v : o.env) replaced = replaced || v.substr(0, v.find('=')) == name;
    if (!replaced) env_storage.push_back(var);
  }
  env_storage.insert(env_storage.end(), o.env.begin(), o.env.end());
  std::vector<char*> envp;
  for (std::string& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent is already gone
    if (o.sigint_default) {  // sigaction and sigprocmask are async-signal-safe
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      ::sigaction(SIGINT, &dfl, nullptr);
      sigset_t mask;
      sigemptyset(&mask);
      sigaddset(&mask, SIGINT);
      ::sigprocmask(SIG_UNBLOCK, &mask, nullptr);
    }
    if (!o.log.empty()) {
      const int fd = ::open(o.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
    }
    ::execve(exe.c_str(), argv.data(), envp.data());
    std::fprintf(stderr, "gpubench: cannot run %s: %s\n", exe.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: no race with a signal sent right after
  return pid;
}

}  // namespace gpubench
