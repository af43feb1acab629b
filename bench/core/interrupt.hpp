#pragma once
// SIGINT and SIGTERM during a run: the results file is only ever replaced whole (see
// results.hpp), so the handler kills the isolated child case, if any, says where the finished
// cases are, and exits with 128 + the signal number (130, 143). Signals are held back while the
// results file is being replaced, so an interruption never lands between write and rename.
#include <sys/types.h>

#include <string>

namespace gpubench {

void install_interrupt_handlers(const std::string& results_path);
// The process group of the running isolated case (0: none), killed on interruption.
void set_interruptible_child(pid_t pid);

// Blocks SIGINT and SIGTERM for its lifetime (delivered when it ends).
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
