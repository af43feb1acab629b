#pragma once
// Interruptions during a run (SIGINT, SIGTERM, SIGHUP, and SIGPIPE when whoever reads stdout or
// stderr goes away, as in `gpubench run | head`): the results file is only ever replaced whole
// (see results.hpp), so the handler kills the isolated child case, if any, and waits for it,
// removes the run's temporary files and folders (registered below) and its lock file, says
// where the finished cases are, and exits with 128 + the signal number (129, 130, 141, 143).
// Signals are held back while the results file is being replaced, so an interruption never
// lands between write and rename.
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace gpubench {

// `pipe`: SIGPIPE too (not under MPI, whose transports may rely on their own handling).
// A signal the parent set to be ignored stays ignored (install_unless_ignored).
void install_interrupt_handlers(const std::string& results_path, bool pipe = true);
// sigaction(sig, &sa) unless `sig` is ignored now: what the parent ignored (nohup's SIGHUP, a
// shell's `trap '' INT`, a service manager's SIGPIPE) must stay ignored, or `nohup gpubench ... &`
// would die at logout. Every handler gpubench installs for an interruption goes through it.
void install_unless_ignored(int sig, const struct sigaction& sa);
// The process group of the running isolated case (0: none), killed on interruption.
void set_interruptible_child(pid_t pid);

// Machine settings the run changed and must put back (power limits, locked clocks: see
// power_control.hpp): the handler calls `restore` first, before it kills a child or removes
// files, and says so. One at a time; nullptr unregisters. `restore` must be async-signal-safe
// in practice (no allocation, no locks).
void set_interrupt_restore(void (*restore)());
// Calls the registered restore now (once) and unregisters it: for a command with its own
// signal handling (soak) whose last-resort path ends the process without unwinding.
// While a restore is registered, fatal signals (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) call it
// first, best effort, and then end the process the default way; so does an MPI abort
// (mpi::Session::abort_run).
void run_interrupt_restore();

// For a command that stops gracefully on a signal (soak: a flag, then the worker returns): once
// `stop` is set, the work has `seconds` to end (this object destroyed); if it has not (a GPU
// hung in a synchronize), the registered restore runs from this thread, so power limits and
// clocks are back within `seconds` of the signal whether or not the worker ever returns.
class RestoreWatchdog {
 public:
  RestoreWatchdog(const std::atomic<bool>& stop, double seconds);
  ~RestoreWatchdog();
  RestoreWatchdog(const RestoreWatchdog&) = delete;
  RestoreWatchdog& operator=(const RestoreWatchdog&) = delete;
  bool restored() const { return restored_.load(); }  // the deadline passed and it restored

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> restored_{false};
  std::thread thread_;  // last: started once the members above exist
};
// Whether install_interrupt_handlers has run in this process.
bool interrupt_handlers_installed();

// Files the handler unlinks (a lock file; at most 8), and one scratch folder whose entries
// (plain files) and the folder itself it removes. Registered and removed by their owners.
void add_interrupt_cleanup(const std::string& file);
void remove_interrupt_cleanup(const std::string& file);
// A folder the interruption handler removes whole (its files and sub-folders), as a generated
// dataset in the temporary folder (up to 4 at once).
void add_interrupt_cleanup_folder(const std::string& dir);
void remove_interrupt_cleanup_folder(const std::string& dir);
// Removes the registered files now (unlink only: async-signal-safe), for a command with its own
// signal handling whose last-resort path ends the process without unwinding (soak).
void run_interrupt_cleanup();
void set_interrupt_scratch_folder(const std::string& dir);  // "" unregisters

// Blocks SIGINT, SIGTERM and SIGHUP for its lifetime (delivered when it ends).
class InterruptsHeld {
 public:
  InterruptsHeld();
  ~InterruptsHeld();
  InterruptsHeld(const InterruptsHeld&) = delete;
  InterruptsHeld& operator=(const InterruptsHeld&) = delete;

 private:
  bool held_ = false;
};

}  // namespace gpubench
