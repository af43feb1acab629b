#pragma once
// Plain C++ references of every op of a training step, in float or double, row-major.
// Matmuls go through OpenBLAS (cblas_sgemm / cblas_dgemm); the rest are simple loops.
// Backward ops ACCUMULATE into parameter gradients (dW, db, dgamma, dbeta: +=) so micro-steps
// of gradient accumulation add up; activation gradients are overwritten unless noted.
// Each op's math is in the comment beside it; tests/unit/test_train_ops.cpp checks every
// backward against central finite differences of its forward in double.
#include <cstdint>
#include <vector>

namespace gpubench::kernels::train {

using idx = std::int64_t;

// Row-major C[m, n] = alpha * op(A) op(B) + beta * C, op = transpose when ta / tb.
// A is [m, k] (or [k, m] when ta) with leading dimension lda; likewise B, C.
template <class T>
void gemm(bool ta, bool tb, idx m, idx n, idx k, T alpha, const T* a, idx lda, const T* b, idx ldb, T beta, T* c,
          idx ldc);

// The FLOPs (2 m n k per gemm) every gemm() call has done since the last reset, for the test
// that the documented FLOP formula counts exactly what the implementation runs.
double matmul_flops_counted();
void reset_matmul_flops_counted();

// Emulated low-precision inputs of the linear layers' GEMMs (issue 30), for the reference step:
//   Bf16: X, W and dY rounded to bf16 (nearest even);
//   Fp8:  Transformer Engine's per-tensor current scaling: each input tensor scaled by
//         fp8_max / amax(tensor), rounded to E4M3 (X and W, forward and backward; max 448) or
//         E5M2 (dY; max 57344), and divided back, so the GEMM sees exactly the values an fp8
//         GEMM with those scale factors would.
// The GEMM itself, and every op that is not a linear layer (attention's batched matmuls, the
// LM head, norms, softmax, the optimizer), stay in the reference's precision. Per thread, set
// while a ScopedLinearInputs lives.
enum class LinearInputs { Exact, Bf16, Fp8 };
LinearInputs linear_inputs();
class ScopedLinearInputs {
 public:
  explicit ScopedLinearInputs(LinearInputs mode);
  ~ScopedLinearInputs();
  ScopedLinearInputs(const ScopedLinearInputs&) = delete;
  ScopedLinearInputs& operator=(const ScopedLinearInputs&) = delete;

 private:
  LinearInputs saved_;
};
// `n` values as the current emulation stores them (a copy; `gradient`: dY's format under Fp8).
template <class T>
std::vector<T> emulate_linear_input(const T* v, idx n, bool gradient);

// Linear: Y[N, out] = X[N, in] W[in, out] + b (b may be null).
template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* y, idx n, idx in, idx out);
// dX = dY W^T (skipped when dx is null); dW += X^T dY; db += sum over rows of dY (db may be null).
template <class T>
void linear_backward(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, idx n, idx in, idx out);

// GELU, tanh form (Hendrycks & Gimpel 2016, as GPT-2): y = 0.5 x (1 + tanh(u)),
// u = sqrt(2/pi) (x + 0.044715 x^3); dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx,
// du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
template <class T>
void gelu_forward(const T* x, T* y, idx n);
template <class T>
void gelu_backward(const T* x, const T* dy, T* dx, idx n);  // dx = dy * gelu'(x)

// LayerNorm over the last dimension: mean = sum x / C, rstd = 1 / sqrt(var + eps) with the
// biased variance, xhat = (x - mean) rstd, y = xhat * g + b. eps = 1e-5.
inline constexpr double kLayerNormEps = 1e-5;
template <class T>
void layernorm_forward(const T* x, const T* g, const T* b, T* y, T* mean, T* rstd, idx n, idx c);
// dx += rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) with dxhat = dy * g
// (accumulates: dx is the residual stream's gradient); dg += sum dy xhat; db += sum dy.
template <class T>
void layernorm_backward(const T* dy, const T* x, const T* mean, const T* rstd, const T* g, T* dx, T* dg, T* db, idx n,
                        idx c);

// Causal softmax of one T x T score block in place: row i keeps columns j <= i,
// P_ij = exp(S_ij - max_j S_ij) / sum_j exp(...), and P_ij = 0 for j > i.
template <class T>
void causal_softmax_forward(T* s, idx t);
// In place dP -> dS: dS_ij = P_ij (dP_ij - sum_k P_ik dP_ik).
template <class T>
void causal_softmax_backward(const T* p, T* d, idx t);

// Causal multi-head self-attention. qkv[B*T, 3C] holds q | k | v, head h at columns
// [h D, (h+1) D) of each part (D = C / H). Per batch and head: S = q k^T / sqrt(D),
// P = causal_softmax(S) (kept in p[B, H, T, T]), out[B*T, C] head h = P v.
template <class T>
void attention_forward(const T* qkv, T* p, T* out, idx batch, idx t, idx c, idx heads);
// dqkv (overwritten) from dout: dv = P^T dout, dP = dout v^T, dS = softmax_backward(P, dP),
// dq = dS k / sqrt(D), dk = dS^T q / sqrt(D). scratch holds T*T values.
template <class T>
void attention_backward(const T* dout, const T* qkv, const T* p, T* dqkv, T* scratch, idx batch, idx t, idx c,
                        idx heads);

// The same attention without the [T x T] probabilities (fused_attention.cpp): per (batch, head)
// the tiled online-softmax kernel of kernels/attention (float) or its materialised reference
// (double, the oracle), keeping each row's log-sum-exp lse[B, H, T]; the backward recomputes the
// probabilities from it and reads the forward's output `out`.
template <class T>
void fused_attention_forward(const T* qkv, T* lse, T* out, idx batch, idx t, idx c, idx heads);
template <class T>
void fused_attention_backward(const T* dout, const T* qkv, const T* out, const T* lse, T* dqkv, idx batch, idx t,
                              idx c, idx heads);

// Softmax cross-entropy, mean over the n rows: loss = -(1/n) sum_i log softmax(logits_i)[y_i].
// Overwrites logits with the probabilities; returns the loss (accumulated in double).
template <class T>
double cross_entropy_forward(T* logits, const std::int32_t* targets, idx n, idx v);
// From the probabilities: dlogits = scale * (p - onehot(y)) / n, in place.
template <class T>
void cross_entropy_backward(T* probs, const std::int32_t* targets, idx n, idx v, double scale);

// Embedding: x[b, t] = wte[token[b, t]] + wpe[t]; backward scatters dx into dwte and dwpe.
template <class T>
void embedding_forward(const std::int32_t* tokens, const T* wte, const T* wpe, T* x, idx batch, idx t, idx c);
template <class T>
void embedding_backward(const std::int32_t* tokens, const T* dx, T* dwte, T* dwpe, idx batch, idx t, idx c);

// y = a + b, elementwise (the residual connections).
template <class T>
void residual_add(const T* a, const T* b, T* y, idx n);

// AdamW (Loshchilov & Hutter 2019, decoupled weight decay, in PyTorch's torch.optim.AdamW
// order): with the step count t starting at 1,
//   p -= lr * wd * p;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
// grad_scale multiplies g first (1 / loss scale for the fp16 path).
struct AdamW {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
};
template <class T>
void adamw_step(T* p, const T* g, T* m, T* v, idx n, const AdamW& hp, std::int64_t t, double grad_scale = 1);

}  // namespace gpubench::kernels::train
