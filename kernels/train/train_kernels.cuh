#pragma once
// Device kernels of the train step (everything but the matmuls, which go through cuBLASLt).
// Activations are in the step's compute type (DType: fp32, fp16 or bf16; fp32 math inside
// every kernel); parameter gradients, LayerNorm statistics, master weights and AdamW state are
// fp32. Each launcher's math is that of the same-named function in ops_reference.hpp, the
// plain C++ reference the GPU step is verified against; casts round to nearest even
// (kernels/common/float_formats.hpp) and the overflow check is loss_scaler.hpp's has_overflow.
// Launchers return the launch's error (cudaSuccess when nothing was launched, n == 0).
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpubench::kernels::train {

enum class DType { F32, F16, BF16 };
std::size_t dtype_bytes(DType t);

cudaError_t launch_cast_from_f32(DType t, const float* src, void* dst, std::int64_t n, cudaStream_t s);
cudaError_t launch_embedding_forward(DType t, const std::int32_t* tokens, const void* wte, const void* wpe, void* x,
                                     std::int64_t batch, std::int64_t seq, std::int64_t c, cudaStream_t s);
// dwte, dwpe (fp32) += scattered dx (atomics).
cudaError_t launch_embedding_backward(DType t, const std::int32_t* tokens, const void* dx, float* dwte, float* dwpe,
                                      std::int64_t batch, std::int64_t seq, std::int64_t c, cudaStream_t s);
cudaError_t launch_layernorm_forward(DType t, const void* x, const void* g, const void* b, void* y, float* mean,
                                     float* rstd, std::int64_t n, std::int64_t c, cudaStream_t s);
// dx (compute type) += ..., dg, db (fp32) += ... (atomics over rows).
cudaError_t launch_layernorm_backward(DType t, const void* dy, const void* x, const float* mean, const float* rstd,
                                      const void* g, void* dx, float* dg, float* db, std::int64_t n, std::int64_t c,
                                      cudaStream_t s);
cudaError_t launch_gelu_forward(DType t, const void* x, void* y, std::int64_t n, cudaStream_t s);
cudaError_t launch_gelu_backward(DType t, const void* x, const void* dy, void* dx, std::int64_t n, cudaStream_t s);
// y[i, j] += b[j] (b in the compute type): the linear layers' bias.
cudaError_t launch_bias_add(DType t, void* y, const void* b, std::int64_t n, std::int64_t out, cudaStream_t s);
// db[j] (fp32) += sum over rows i of dy[i, j].
cudaError_t launch_bias_grad(DType t, const void* dy, float* db, std::int64_t n, std::int64_t out, cudaStream_t s);
cudaError_t launch_residual_add(DType t, const void* a, const void* b, void* y, std::int64_t n, cudaStream_t s);
// rows of T scores each; row r is query position r % T (causal mask j <= r % T). In place.
cudaError_t launch_causal_softmax_forward(DType t, void* s_, std::int64_t rows, std::int64_t seq, cudaStream_t s);
// In place dP -> dS.
cudaError_t launch_causal_softmax_backward(DType t, const void* p, void* d, std::int64_t rows, std::int64_t seq,
                                           cudaStream_t s);
// Fused softmax cross-entropy and its gradient: loss_sum (double) += sum over rows of
// -log softmax(logits)[y]; logits overwritten with grad_scale * (softmax - onehot) / n.
cudaError_t launch_cross_entropy(DType t, void* logits, const std::int32_t* targets, std::int64_t n, std::int64_t v,
                                 float grad_scale, double* loss_sum, cudaStream_t s);
// AdamW on fp32 master weights and state, gradient multiplied by grad_scale first; c1, c2 the
// bias corrections 1 - beta^t.
struct AdamWArgs {
  float lr, beta1, beta2, eps, weight_decay, c1, c2, grad_scale;
};
cudaError_t launch_adamw(float* p, const float* g, float* m, float* v, std::int64_t n, const AdamWArgs& a,
                         cudaStream_t s);
// Attention heads: split gathers part `off` of rows of width `ld` ([B*T, ld], head h at columns
// off + h*D) into packed [B, H, T, D]; merge scatters it back (overwriting). With them the
// score and value products are strided-batched GEMMs over B*H packed matrices.
cudaError_t launch_split_heads(DType t, const void* src, std::int64_t ld, std::int64_t off, void* dst,
                               std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t d,
                               cudaStream_t s);
cudaError_t launch_merge_heads(DType t, const void* src, void* dst, std::int64_t ld, std::int64_t off,
                               std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t d,
                               cudaStream_t s);
// *flag = 1 when any of the n values is inf or NaN (flag is not cleared first).
cudaError_t launch_overflow_check(const float* g, std::int64_t n, int* flag, cudaStream_t s);

}  // namespace gpubench::kernels::train
