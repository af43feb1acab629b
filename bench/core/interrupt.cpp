#include "interrupt.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>

namespace gpubench {
namespace {

std::atomic<pid_t> g_child{0};
std::atomic<void (*)()> g_restore{nullptr};
std::atomic<bool> g_installed{false};
char g_message[4096] = {};  // prepared outside the handler: only async-signal-safe calls inside
std::size_t g_message_len = 0;

// The cleanup registry: fixed storage, written outside the handler with signals held.
constexpr std::size_t kMaxFiles = 8, kMaxPath = 4096;
std::array<std::array<char, kMaxPath>, kMaxFiles> g_files{};
std::array<char, kMaxPath> g_scratch{};
constexpr std::size_t kMaxFolders = 4;
std::array<std::array<char, kMaxPath>, kMaxFolders> g_folders{};  // removed whole on interruption
std::atomic<int> g_scratch_fd{-1};

const char* describe(int sig) {
  switch (sig) {
    case SIGINT: return "gpubench: interrupted (SIGINT); ";
    case SIGTERM: return "gpubench: terminated (SIGTERM); ";
    case SIGHUP: return "gpubench: hung up (SIGHUP); ";
    case SIGPIPE: return "gpubench: output closed (SIGPIPE: the reader of stdout or stderr went away); ";
    default: return "gpubench: ended by a signal; ";
  }
}

// Removes what is in the open folder `fd`, sub-folders to `depth` levels, with system calls
// only (getdents64, openat, unlinkat: async-signal-safe).
void clear_tree(int fd, int depth) {
  alignas(8) char buf[4096];
  // Passes over the folder until one removes nothing ("." and ".." always remain); bounded, as
  // an entry that cannot be removed must not keep the handler here.
  for (int pass = 0; pass < 64; ++pass) {
    ::lseek(fd, 0, SEEK_SET);
    bool removed = false;
    while (true) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
        unsigned short reclen = 0;
        std::memcpy(&reclen, buf + off + 16, sizeof reclen);
        const unsigned char type = static_cast<unsigned char>(buf[off + 18]);
        const char* name = buf + off + 19;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) {
          if (type == DT_DIR && depth > 0) {
            const int sub = ::openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
              clear_tree(sub, depth - 1);
              ::close(sub);
            }
            if (::unlinkat(fd, name, AT_REMOVEDIR) == 0) removed = true;
          } else if (::unlinkat(fd, name, 0) == 0) {
            removed = true;
          }
        }
        off += reclen;
      }
    }
    if (!removed) break;
  }
}

constexpr int kScratchDepth = 4;  // a generated dataset: its folder, images/, and room to spare

// Empties and removes the scratch folder and the registered folders.
void clear_scratch() {
  if (const int fd = g_scratch_fd.load(); fd >= 0) {
    clear_tree(fd, kScratchDepth);
    ::rmdir(g_scratch.data());
  }
  for (const auto& d : g_folders) {
    if (d[0] == '\0') continue;
    const int fd = ::open(d.data(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    clear_tree(fd, kScratchDepth);
    ::close(fd);
    ::rmdir(d.data());
  }
}

void on_signal(int sig) {
  // Settings first: whatever else fails below, the GPUs must not stay capped or locked.
  void (*restore)() = g_restore.exchange(nullptr);
  const bool restored = restore != nullptr;
  if (restored) restore();
  if (pid_t child = g_child.load(); child > 0) {
    ::kill(-child, SIGKILL);
    ::waitpid(child, nullptr, 0);  // it must be gone before its files are removed
  }
  clear_scratch();
  run_interrupt_cleanup();
  const char* name = describe(sig);
  (void)!::write(STDERR_FILENO, "\n", 1);
  (void)!::write(STDERR_FILENO, name, std::strlen(name));
  if (restored) {
    static const char kRestored[] = "power limits and clocks put back as they were; ";
    (void)!::write(STDERR_FILENO, kRestored, sizeof kRestored - 1);
  }
  (void)!::write(STDERR_FILENO, g_message, g_message_len);
  ::_exit(128 + sig);
}

sigset_t interrupt_set() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  return s;
}

// A fatal signal (a crash, an abort) ends the process whatever we do; the GPUs' settings are put
// back first, best effort (the registered restore makes a few NVML calls), then the signal's
// default action runs (SA_RESETHAND), core dump and all.
void on_fatal_signal(int sig) {
  if (void (*restore)() = g_restore.exchange(nullptr)) {
    static const char kFatal[] = "\ngpubench: fatal signal; putting power limits and clocks back first\n";
    (void)!::write(STDERR_FILENO, kFatal, sizeof kFatal - 1);
    restore();
  }
  ::raise(sig);
}

void install_fatal_restore_handlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction old {};
    // A handler someone else installed (a sanitizer, a debugger's) stays.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(sig, &sa, nullptr);
  }
}

void copy_path(std::array<char, kMaxPath>& to, const std::string& from) {
  const std::size_t n = std::min(from.size(), kMaxPath - 1);
  std::memcpy(to.data(), from.data(), n);
  to[n] = '\0';
}

// The registries' fixed slots, written outside the handler with signals held.
template <std::size_t N>
void add_to(std::array<std::array<char, kMaxPath>, N>& slots, const std::string& path) {
  InterruptsHeld hold;
  for (auto& slot : slots) {
    if (slot[0] == '\0') {
      copy_path(slot, path);
      return;
    }
  }
}

template <std::size_t N>
void remove_from(std::array<std::array<char, kMaxPath>, N>& slots, const std::string& path) {
  InterruptsHeld hold;
  for (auto& slot : slots) {
    if (slot[0] != '\0' && path == slot.data()) slot[0] = '\0';
  }
}

}  // namespace

void install_unless_ignored(int sig, const struct sigaction& sa) {
  struct sigaction old {};
  if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) return;
  sigaction(sig, &sa, nullptr);
}

void install_interrupt_handlers(const std::string& results_path, bool pipe) {
  const std::string msg = results_path.empty() ? "nothing was written\n" : "every finished case is in " + results_path + "\n";
  {
    InterruptsHeld hold;
    g_message_len = std::min(msg.size(), sizeof g_message);
    std::memcpy(g_message, msg.data(), g_message_len);
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);  // one handler at a time
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGHUP);
  sigaddset(&sa.sa_mask, SIGPIPE);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) install_unless_ignored(sig, sa);
  if (pipe) install_unless_ignored(SIGPIPE, sa);
  g_installed.store(true);
}

void set_interrupt_restore(void (*restore)()) {
  if (restore != nullptr) install_fatal_restore_handlers();
  g_restore.store(restore);
}
void run_interrupt_restore() {
  if (void (*restore)() = g_restore.exchange(nullptr)) restore();
}
bool interrupt_handlers_installed() { return g_installed.load(); }

void set_interruptible_child(pid_t pid) { g_child.store(pid); }

void add_interrupt_cleanup(const std::string& file) { add_to(g_files, file); }
void remove_interrupt_cleanup(const std::string& file) { remove_from(g_files, file); }

void run_interrupt_cleanup() {
  for (const auto& f : g_files) {
    if (f[0] != '\0') ::unlink(f.data());
  }
}

void add_interrupt_cleanup_folder(const std::string& dir) { add_to(g_folders, dir); }
void remove_interrupt_cleanup_folder(const std::string& dir) { remove_from(g_folders, dir); }

void set_interrupt_scratch_folder(const std::string& dir) {
  InterruptsHeld hold;
  if (const int old = g_scratch_fd.exchange(-1); old >= 0) ::close(old);
  g_scratch[0] = '\0';
  if (dir.empty()) return;
  copy_path(g_scratch, dir);
  g_scratch_fd.store(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

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

namespace gpubench {

RestoreWatchdog::RestoreWatchdog(const std::atomic<bool>& stop, double seconds)
    : thread_([this, &stop, seconds] {
        std::unique_lock<std::mutex> lock(mutex_);
        // Wake every 50 ms to look at the flag a signal handler sets (it cannot notify).
        while (!done_ && !stop.load()) cv_.wait_for(lock, std::chrono::milliseconds(50));
        if (done_) return;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
        // Stopped, and the work did not return within the allowance (a kernel that never ends, a
        // synchronize that never returns): the settings go back now, not at a SIGKILL's mercy.
        if (g_restore.load() != nullptr) {
          static const char kLine[] =
              "gpubench: the work did not stop in time after the signal; power limits and clocks put back now\n";
          (void)!::write(STDERR_FILENO, kLine, sizeof kLine - 1);
          run_interrupt_restore();
          restored_.store(true);
        }
      }) {}

RestoreWatchdog::~RestoreWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace gpubench
