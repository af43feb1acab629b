#include "interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace gpubench {
namespace {

std::atomic<pid_t> g_child{0};
char g_message[4096] = {};  // prepared outside the handler: only write(2) happens inside
std::size_t g_message_len = 0;

void on_signal(int sig) {
  if (pid_t child = g_child.load(); child > 0) ::kill(-child, SIGKILL);
  const char* name = sig == SIGINT ? "gpubench: interrupted (SIGINT); " : "gpubench: terminated (SIGTERM); ";
  (void)!::write(STDERR_FILENO, "\n", 1);
  (void)!::write(STDERR_FILENO, name, std::strlen(name));
  (void)!::write(STDERR_FILENO, g_message, g_message_len);
  ::_exit(128 + sig);
}

sigset_t interrupt_set() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  return s;
}

}  // namespace

void install_interrupt_handlers(const std::string& results_path) {
  const std::string msg = "every finished case is in " + results_path + "\n";
  g_message_len = std::min(msg.size(), sizeof g_message);
  std::memcpy(g_message, msg.data(), g_message_len);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void set_interruptible_child(pid_t pid) { g_child.store(pid); }

InterruptsHeld::InterruptsHeld() {
  sigset_t s = interrupt_set();
  held_ = pthread_sigmask(SIG_BLOCK, &s, nullptr) == 0;
}

InterruptsHeld::~InterruptsHeld() {
  if (!held_) return;
  sigset_t s = interrupt_set();
  pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
}

}  // namespace gpubench
