// attention=fused on CUDA in a build without the cuDNN frontend: the cases are planned skipped
// (train_suite.cpp, through the attention suite's cudnn_unavailable()), so this is not reached.
#include <stdexcept>

#include "bench/suites/train/cuda_step_common.hpp"

namespace gpubench::suites::train {

std::unique_ptr<kernels::train::FusedAttention> make_fused_attention(const ModelConfig&, bool, cudaStream_t) {
  throw std::logic_error("train: attention=fused on CUDA needs the cuDNN frontend, which this build does not have");
}

}  // namespace gpubench::suites::train
