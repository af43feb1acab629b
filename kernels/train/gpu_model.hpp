#pragma once
// The train models (model_config.hpp) on a CUDA device: the same math as ReferenceModel, with
// matmuls through cuBLASLt (kernels/blas/cublaslt.hpp) and the rest in train_kernels.cu.
// No harness dependency: other code (a data-loading benchmark, say) can build a model on a
// device and run steps on its own batches.
//
//   GpuModel m(config, GpuPrecision::BF16, /*seed=*/1, stream);
//   m.upload({batch});                 // micro-batches, host -> device
//   m.step(AdamW{});                   // zero grads, forward + backward per micro-batch, AdamW
//
// Precisions: fp32 (TF32 off), tf32 (fp32 storage, TF32 Tensor Core matmuls), fp16 and bf16
// (activations and a weight copy in the 16-bit type, fp32 accumulation in every matmul and
// kernel; fp32 master weights, gradients and AdamW state; fp16 with dynamic loss scaling), and
// fp8: bf16 as above, except that every linear layer's three GEMMs (forward, data and weight
// gradients) run in fp8 through cuBLASLt with per-tensor current scaling (Transformer Engine's
// recipe, kernels/common/fp8_scaling.hpp): X and W in E4M3, dY in E5M2, each tensor's amax
// reduced and its codes written (transposed where the GEMM contracts over its rows) by
// kernels inside the step, the descales given to cuBLASLt as scale pointers. Attention's batched
// products and the tied LM head stay in bf16, as in the CPU emulation the step is verified
// against (ops_reference.hpp, LinearInputs::Fp8). Needs sm_89 or newer and every linear
// dimension (rows, in, out) a multiple of 16 (fp8_dims_error).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/device_buffer.hpp"
#include "kernels/train/loss_scaler.hpp"
#include "kernels/train/model_config.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::blas {
struct LtProblem;
}

namespace gpubench::kernels::train {

enum class GpuPrecision { FP32, TF32, FP16, BF16, FP8 };


// The three fp8 GEMMs of a linear layer Y[n, out] = X[n, in] W[in, out] as cuBLASLt problems,
// every operand K-major (TN): forward Y = Xq (W^T)q^T (E4M3 x E4M3, bf16 out); data gradient
// dX = dYq Wq^T (E5M2 x E4M3, bf16 out); weight gradient dW += (X^T)q (dY^T)q^T (E4M3 x E5M2,
// fp32 C and D, beta 1). Row-major as the model writes them; to_lt_problem swaps them into
// cuBLASLt's column-major terms. Pure, unit-tested.
blas::LtProblem fp8_forward_problem(std::int64_t n, std::int64_t in, std::int64_t out);
blas::LtProblem fp8_dgrad_problem(std::int64_t n, std::int64_t in, std::int64_t out);
blas::LtProblem fp8_wgrad_problem(std::int64_t n, std::int64_t in, std::int64_t out);

// A row-major product C[m, n] (ldc, batch stride sc) = alpha op(A) op(B) + beta C over `batch`
// matrices, as the models write them.
struct RowMajorGemm {
  bool ta = false, tb = false;
  std::int64_t m = 0, n = 0, k = 0;
  double alpha = 1;
  std::int64_t lda = 0, sa = 0, ldb = 0, sb = 0;
  double beta = 0;
  std::int64_t ldc = 0, sc = 0, batch = 1;
};
// The column-major cuBLASLt problem computing it: C^T = op(B)^T op(A)^T, so cuBLASLt's A is the
// row-major B and its B the row-major A (pass the pointers swapped). c_f32: C and D in fp32
// whatever the input type (the weight gradients of the 16-bit modes).
blas::LtProblem to_lt_problem(const RowMajorGemm& g, GpuPrecision p, bool c_f32);

// attention=fused (ModelConfig::attention) on a GPU: a fused kernel the caller provides (the
// train suite passes cuDNN's SDPA, bench/suites/train/fused_attention_cudnn.cpp), so this model
// depends on no attention library. Causal, scale 1/sqrt(D), over packed [B, H, T, D] tensors of
// the model's 16-bit type. forward writes O and one fp32 log-sum-exp per row (stats, [B, H, T]),
// which the model keeps per layer instead of the [T x T] probabilities; backward reads Q, K, V,
// O, dO and the stats and writes dQ, dK and dV. Both enqueue on the model's stream.
class FusedAttention {
 public:
  virtual ~FusedAttention() = default;
  virtual void forward(const void* q, const void* k, const void* v, void* o, float* stats) = 0;
  virtual void backward(const void* q, const void* k, const void* v, const void* o, const void* d_o, const float* stats,
                        void* dq, void* dk, void* dv) = 0;
  virtual std::int64_t memory_bytes() const = 0;  // device memory it holds (workspaces)
  virtual std::string description() const = 0;   // the engine or plan it runs, for the results
};

// cudaMalloc failed for lack of memory (kernels/common/device_buffer.hpp; the caller turns it
// into a skip, or a failed trial of the largest-batch search).
using DeviceOutOfMemory = kernels::DeviceOutOfMemory;

// A contiguous range of the flat parameter buffer, in elements.
struct FlatRange {
  std::int64_t offset = 0, count = 0;
};

class GpuModel {
 public:
  // `layout`: where each tensor lives in the flat buffers (parameters, gradients, AdamW moments),
  // param_layout(c) when null; a data-parallel step passes one with extra padding so that each
  // gradient bucket divides evenly among the ranks (the same tensors in the same order, each at a
  // multiple of kParamAlign, none overlapping).
  // `attention`: required when c.attention is Fused (and c a transformer), unused otherwise;
  // std::invalid_argument when it is missing, or fused attention is asked of fp32 or tf32.
  GpuModel(const ModelConfig& c, GpuPrecision p, std::uint64_t seed, cudaStream_t stream,
           const ParamLayout* layout = nullptr, std::unique_ptr<FusedAttention> attention = nullptr);
  ~GpuModel();
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  const ModelConfig& config() const { return c_; }
  const ParamLayout& layout() const { return layout_; }

  // Copies accum micro-batches to the device (once; steps reuse them).
  void upload(const std::vector<Batch>& micro);
  // mlp: replaces uploaded micro-batch `micro`'s inputs with `features` (B x C floats in device
  // memory), enqueued on the model's stream (cast where the model computes in 16 bits). A
  // data-loading consumer trains on its own batches this way.
  void set_inputs(std::size_t micro, const float* features);

  // The phases of one step, enqueued on the stream. forward() also computes the loss gradient
  // (fused softmax cross-entropy), scaled by the loss scale / accum.
  void zero_grads();
  void forward(std::size_t micro);
  void backward(std::size_t micro);
  // Called by backward() after each of its stages has been enqueued, with the stage's index in
  // backward_stages(config()): from then on the gradients of every tensor at or after that
  // stage's frontier hold their final values for this micro-batch (once the stream gets there).
  // A data-parallel step records an event there and starts the complete buckets' collectives.
  void set_backward_hook(std::function<void(std::size_t stage)> hook) { hook_ = std::move(hook); }
  // fp16: checks every gradient for overflow (synchronizes), updates the loss scaler and skips
  // the update on overflow. Returns whether the update was applied.
  bool optimizer_step(const AdamW& hp);
  // AdamW on `ranges` of the flat buffers only (ZeRO-1: this rank's shard of each bucket), and
  // without the 16-bit weight copy's refresh (the caller gathers the parameters first, then
  // calls refresh_weight_copy()). fp16: the overflow check covers `ranges`; `combine_overflow`
  // gets the device int flag (1: overflow) to combine with the other ranks' before it is read.
  bool optimizer_step(const AdamW& hp, const std::vector<FlatRange>& ranges,
                      const std::function<void(int* device_flag)>& combine_overflow);
  void refresh_weight_copy();
  // All phases of one optimizer step.
  bool step(const AdamW& hp);

  // While on, the phases record events around every attention block (forward and backward) and
  // every dense product (the linear layers with their bias and, under fp8, their scaling; the
  // LM head); op_seconds() (synchronizes) sums what was recorded since op timing was turned on.
  // For a pass outside the measured runs: the events sit between the step's kernels.
  void set_op_timing(bool on);
  OpSeconds op_seconds();

  // Mean loss over the micro-batches since zero_grads() (synchronizes).
  double loss();
  // Parameter gradients, unscaled (divided by the loss scale), in double (synchronizes); in
  // layout() order (param_layout(config()) unless another layout was given).
  std::vector<double> gradients();
  // The fp32 (master) parameters in double, in layout() order (synchronizes).
  std::vector<double> parameters();
  // The flat fp32 buffers (layout().total elements) and the stream the model enqueues on.
  float* gradient_buffer();
  float* parameter_buffer();
  cudaStream_t stream() const;
  const LossScaler& scaler() const { return scaler_; }
  // Bytes of device memory this model allocated (buffers, the cuBLASLt workspace and the fused
  // attention's workspaces).
  std::int64_t memory_bytes() const;
  // The fused attention's description, or "" for the unfused one.
  std::string attention_description() const;

 private:
  struct Impl;
  void block_forward(std::int64_t l, bool stop_before_fc2);
  void block_backward(std::int64_t l);

  ModelConfig c_;
  ParamLayout layout_;
  LossScaler scaler_;
  std::int64_t allocated_ = 0;
  std::function<void(std::size_t)> hook_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpubench::kernels::train
