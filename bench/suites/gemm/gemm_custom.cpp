// Placeholder for gpubench's own GEMM kernels (the `custom:<variant>` providers): the gemm
// kernels work replaces this file. Until then there are no variants to select.
#include "bench/suites/gemm/gemm.hpp"

namespace gpubench::suites::gemm {

std::vector<std::string> custom_variants() { return {}; }

std::optional<std::string> custom_unsupported(const DeviceInfo&, const GemmProblem&, const std::string& variant) {
  return "custom:" + variant + " is not built";
}

std::unique_ptr<Case> make_custom_case(const DeviceInfo&, const GemmProblem&, const std::string&) { return nullptr; }

}  // namespace gpubench::suites::gemm
