// The attention suite's CPU case (its kernels need OpenBLAS), for the fuzz build only: planning,
// which the fuzzers drive, never makes a case. (attention_cudnn_none.cpp stands for the cuDNN one.)
#include <stdexcept>

#include "bench/suites/attention/attention.hpp"

namespace gpubench::suites::attention {

std::unique_ptr<Case> make_cpu_case(const AttentionSpec&) { throw std::logic_error("fuzz build: no attention cases"); }

}  // namespace gpubench::suites::attention
