// The `cudnn` provider in a build without the cuDNN frontend's headers (attention_cudnn.cpp is
// the real one): the suite plans CUDA devices as not applicable with this reason.
#include <stdexcept>

#include "bench/suites/attention/attention.hpp"

namespace gpubench::suites::attention {

std::optional<std::string> cudnn_unavailable() {
  return "this build has no cuDNN frontend (scripts/lib.sh installs its headers into build/deps/cudnn_frontend; "
         "configure again with them)";
}

bool cudnn_built() { return false; }

std::string cudnn_version_text() { return "not built"; }

std::unique_ptr<Case> make_cudnn_case(const DeviceInfo&, const AttentionSpec&) {
  throw std::logic_error("attention: the cudnn provider is not built");
}

}  // namespace gpubench::suites::attention
