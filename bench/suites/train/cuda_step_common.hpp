#pragma once
// What the single-device GPU step (cuda_step.cpp) and the data-parallel one (cuda_dp_step.cpp)
// share: the model's precision, each rank's micro-batches, the memory guard, the first-loss
// check, and which failures are skips.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/device.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/train/train.hpp"
#include "kernels/blas/cublaslt.hpp"
#include "kernels/train/gpu_model.hpp"

namespace gpubench::suites::train {

kernels::train::GpuPrecision gpu_precision(Precision p);

// attention=fused on CUDA: cuDNN's SDPA for the step's shape (fused_attention_cudnn.cpp; a build
// without the cuDNN frontend plans those cases skipped). CaseSkipped when libcudnn cannot be
// loaded or cuDNN has no engine for the shape.
std::unique_ptr<kernels::train::FusedAttention> make_fused_attention(const ModelConfig& c, bool bf16,
                                                                     cudaStream_t stream);
// What a step does when cuDNN refuses its fused graph at run time (verify.hpp's
// on_fused_refused): `attention_given` says whether --axis attention=fused was explicit; once a
// model fell back, `note` holds why (and the step runs attention=unfused from then on).
struct FusedFallback {
  bool attention_given = true;
  std::string note;
};
// The step's model at `p`, with the fused attention its configuration asks for. cuDNN refusing
// the fused graph (CaseSkipped) is a skip when `fallback` is null or the attention was given;
// otherwise the model is built unfused and fallback->note says why.
std::unique_ptr<kernels::train::GpuModel> make_gpu_model(const ModelConfig& c, Precision p, cudaStream_t stream,
                                                         const kernels::train::ParamLayout* layout = nullptr,
                                                         FusedFallback* fallback = nullptr);

// Rank r's micro-batches: seeds after the ranks before it, so rank 0 trains on the single-device
// step's data and the global batch is every rank's in rank order.
std::vector<kernels::train::Batch> rank_batches(const ModelConfig& c, int rank);

// Beyond the device's memory even at 2 bytes per element (estimated in double, so absurd sizes
// cannot overflow the allocation arithmetic): the step cannot run there.
bool too_large_for(const ModelConfig& c, const DeviceInfo& device);
// CaseSkipped saying how much the step needs, when too_large_for.
void skip_when_too_large(const ModelConfig& c, const DeviceInfo& device);

// The benchmark configuration's first loss: finite and within 25% of log(vocab) (small initial
// weights predict near-uniformly). The failure's detail, or nullopt.
std::optional<std::string> first_loss_problem(double loss, std::int64_t vocab);
inline constexpr const char* kFirstLossMethod = "benchmark configuration: first loss finite and within 25% of log(vocab)";

// Runs f(); out of device memory and matmuls cuBLASLt does not support are skips, everything
// else propagates.
template <class F>
auto skip_on_oom(F&& f) {
  try {
    return f();
  } catch (const kernels::train::DeviceOutOfMemory& e) {
    throw CaseSkipped(e.what());
  } catch (const blas::LtError& e) {
    if (e.unsupported()) throw CaseSkipped(std::string("cuBLASLt: ") + e.what());
    throw;
  }
}

}  // namespace gpubench::suites::train
