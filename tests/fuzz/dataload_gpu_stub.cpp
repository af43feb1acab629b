// The dataload suite's train consumer (the CPU reference model needs OpenBLAS), for the fuzz build
// only: planning, which the fuzzers drive, never makes a case or a consumer. The CUDA side
// (gpu.cpp: nvcc-built kernels, the GPU train model) is bench/suites/dataload/gpu_none.cpp, the
// main build's stand-in without CUDA.
#include <stdexcept>

#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/pipeline.hpp"

namespace gpubench::suites::dataload {
namespace {
[[noreturn]] void no_consumer() { throw std::logic_error("fuzz build: no train consumer"); }
}  // namespace

kernels::train::ModelConfig train_consumer_model(int, int) { no_consumer(); }
std::unique_ptr<Consumer> make_host_train_consumer(int, int, kernels::dataload::OutType) { no_consumer(); }

}  // namespace gpubench::suites::dataload
