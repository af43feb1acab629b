#pragma once
// cuDNN's fused SDPA through the cuDNN frontend's graph API, shared by the attention suite's
// `cudnn` provider (attention_cudnn.cpp) and the train suite's fused attention on CUDA
// (bench/suites/train/fused_attention_cudnn.cpp). Compiled only with the frontend's headers
// (GPUBENCH_WITH_CUDNN); the frontend loads libcudnn itself at run time
// (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING), so gpubench links no cuDNN.
#include <cudnn_frontend.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "kernels/attention/sdpa_plan.hpp"

namespace gpubench::suites::attention {

// libcudnn.so.9 (and the shared CUDA runtime the frontend needs) opened once for the process;
// the reason when it cannot be.
const std::optional<std::string>& cudnn_load_error();

// Throws std::runtime_error("cuDNN <what>: <message>") when `e` is bad.
void check(cudnn_frontend::error_t e, const std::string& what);

// The element type of Q, K, V, O and the gradients.
enum class Io { F16, BF16, E4M3 };
Io io_of(const std::string& dtype);  // the attention suite's dtype names: fp16, bf16, fp8-e4m3
std::size_t io_bytes(Io io);
// Bytes of one element of a plan tensor (I/O in `io`, fp32 stats and scales, int32 tables).
std::size_t element_bytes(kernels::attention::SdpaTensorKind kind, Io io);

// The frontend graph of a plan (sdpa_plan.hpp), built for the handle's device with heuristic
// mode A; std::runtime_error naming the stage cuDNN refused.
std::shared_ptr<cudnn_frontend::graph::Graph> build_graph(const kernels::attention::SdpaPlan& plan, Io io,
                                                          cudnnHandle_t handle);

}  // namespace gpubench::suites::attention
