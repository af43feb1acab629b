#pragma once
// Exception types that carry a meaning the CLI and the harness act on.
#include <stdexcept>
#include <string>

namespace gpubench {

// Bad input from the user: the CLI prints the message on one line and exits with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A case that cannot run here (unsupported combination, out of memory, missing library).
// The harness records it as skipped with this reason and the run continues.
struct CaseSkipped : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace gpubench
