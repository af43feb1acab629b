// The dataload suite's CUDA side (gpu.cpp: nvcc-built kernels, the GPU train model) and its
// train consumer (the CPU reference model needs OpenBLAS), for the fuzz build only: planning,
// which the fuzzers drive, never makes a case or a consumer.
#include <stdexcept>

#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/pipeline.hpp"

namespace gpubench::suites::dataload {
namespace {
[[noreturn]] void no_cases() { throw std::logic_error("fuzz build: no dataload GPU cases or train consumer"); }
}  // namespace

std::unique_ptr<BatchMemory> pinned_memory() { no_cases(); }
std::unique_ptr<Consumer> make_gpu_consumer(const DeviceInfo&, const GpuConsumerSpec&) { no_cases(); }
std::unique_ptr<Case> make_gpu_case(const DeviceInfo&, const Config&) { no_cases(); }
kernels::train::ModelConfig train_consumer_model(int, int) { no_cases(); }
std::unique_ptr<Consumer> make_host_train_consumer(int, int, kernels::dataload::OutType) { no_cases(); }

}  // namespace gpubench::suites::dataload
