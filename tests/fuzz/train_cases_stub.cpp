// The train suite's cases (the CPU reference needs OpenBLAS, the GPU step nvcc-built kernels),
// for the fuzz build only: planning, which the fuzzers drive, never makes a case.
#include <stdexcept>

#include "bench/suites/train/train.hpp"

namespace gpubench::suites::train {

std::unique_ptr<Case> make_cpu_case(const ModelConfig&, double) { throw std::logic_error("fuzz build: no train cases"); }
std::unique_ptr<Case> make_cpu_dp_case(const ModelConfig&, DpMode, double) {
  throw std::logic_error("fuzz build: no train cases");
}
std::unique_ptr<Case> make_cuda_case(const DeviceInfo&, const ModelConfig&, Precision, bool, double, bool) {
  throw std::logic_error("fuzz build: no train cases");
}
std::unique_ptr<Case> make_cuda_dp_case(const DeviceInfo&, const ModelConfig&, Precision, DpMode, double) {
  throw std::logic_error("fuzz build: no train cases");
}
nlohmann::ordered_json library_versions() { return {{"openblas", "fuzz"}, {"cublaslt", "fuzz"}}; }

}  // namespace gpubench::suites::train
