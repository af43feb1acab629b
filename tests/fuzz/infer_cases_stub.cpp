// The infer suite's CPU cases (the model needs OpenBLAS), for the fuzz build only: planning, which
// the fuzzers drive, never makes a case. (cuda_none.cpp stands for the CUDA ones.)
#include <stdexcept>

#include "bench/suites/infer/infer.hpp"

namespace gpubench::suites::infer {

std::unique_ptr<Case> make_cpu_case(const InferSpec&) { throw std::logic_error("fuzz build: no infer cases"); }
std::unique_ptr<Case> make_serve_case(const InferSpec&) { throw std::logic_error("fuzz build: no infer cases"); }
const MemoryCeiling& host_memory_ceiling() { throw std::logic_error("fuzz build: no infer cases"); }

}  // namespace gpubench::suites::infer
