#pragma once
// One child process the way gpubench starts its children (an isolated case, an evaluate
// worker): a fresh exec (CUDA state cannot cross fork()), in its own process group (a timeout or
// an interruption signals all of it), dying with its parent even on SIGKILL (an orphan would go
// on holding its GPU).
#include <sys/types.h>

#include <string>
#include <vector>

namespace gpubench {

struct SpawnOptions {
  std::string argv0 = "gpubench";  // the child's argv[0]
  std::vector<std::string> env;    // NAME=VALUE over the parent's environment
  std::string log;                 // stdout and stderr go here ("" keeps the parent's)
  // The child starts with SIGINT at its default action and unblocked, whatever the parent
  // inherited (a shell's background job, nohup and an earlier handler leave it ignored, and an
  // ignored signal stays ignored across exec): for children the parent stops with SIGINT, as
  // evaluate stops a worker past its budget so that it keeps what it finished.
  bool sigint_default = false;
};

// Starts `exe` with `args` after argv[0]; its pid. Throws std::runtime_error when fork fails; a
// child that cannot exec exits 127.
pid_t spawn_child(const std::string& exe, const std::vector<std::string>& args, const SpawnOptions& options = {});

}  // namespace gpubench
