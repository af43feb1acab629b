#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/common/grid.hpp"
#include "kernels/train/train_kernels.cuh"

namespace gpubench::kernels::train {
namespace {

__device__ __forceinline__ float ld(const float* p, std::int64_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __half* p, std::int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float* p, std::int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half* p, std::int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void st(__nv_bfloat16* p, std::int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }

constexpr int kBlock = 256;

// Element-wise kernels: grid-stride beyond 65535 * 16 blocks. Row kernels: one block per row,
// striding by gridDim.x (kernels/common/grid.hpp on the limits).
unsigned grid_for(std::int64_t n) { return capped_grid(n, kBlock, 65535 * 16); }
unsigned rows_grid(std::int64_t rows) { return capped_grid(rows, 1, kMaxGridX); }

#define ROW_STRIDE(row, rows) for (std::int64_t row = blockIdx.x; row < (rows); row += gridDim.x)

#define GRID_STRIDE(i, n) \
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n); i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// Block-wide sum of one float per thread (blockDim.x a multiple of 32, at most 1024).
__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) total += warp_sums[w];
  return total;
}

__device__ float block_max(float v) {
  __shared__ float warp_max[32];
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) warp_max[warp] = v;
  __syncthreads();
  float m = -INFINITY;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) m = fmaxf(m, warp_max[w]);
  return m;
}

template <class T>
__global__ void cast_k(const float* src, T* dst, std::int64_t n) {
  GRID_STRIDE(i, n) st(dst, i, src[i]);
}

template <class T>
__global__ void embedding_fwd_k(const std::int32_t* tok, const T* wte, const T* wpe, T* x, std::int64_t rows,
                                std::int64_t seq, std::int64_t c) {
  GRID_STRIDE(i, rows * c) {
    const std::int64_t r = i / c, j = i % c;
    st(x, i, ld(wte, static_cast<std::int64_t>(tok[r]) * c + j) + ld(wpe, (r % seq) * c + j));
  }
}

template <class T>
__global__ void embedding_bwd_k(const std::int32_t* tok, const T* dx, float* dwte, float* dwpe, std::int64_t rows,
                                std::int64_t seq, std::int64_t c) {
  GRID_STRIDE(i, rows * c) {
    const std::int64_t r = i / c, j = i % c;
    const float d = ld(dx, i);
    atomicAdd(dwte + static_cast<std::int64_t>(tok[r]) * c + j, d);
    atomicAdd(dwpe + (r % seq) * c + j, d);
  }
}

// One block per row.
template <class T>
__global__ void layernorm_fwd_k(const T* x, const T* g, const T* b, T* y, float* mean, float* rstd, std::int64_t n,
                                std::int64_t c) {
  ROW_STRIDE(row, n) {
    const T* xr = x + row * c;
    float s = 0;
    for (std::int64_t j = threadIdx.x; j < c; j += blockDim.x) s += ld(xr, j);
    const float mu = block_sum(s) / static_cast<float>(c);
    float ss = 0;
    for (std::int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const float d = ld(xr, j) - mu;
      ss += d * d;
    }
    const float rs = rsqrtf(block_sum(ss) / static_cast<float>(c) + 1e-5f);
    for (std::int64_t j = threadIdx.x; j < c; j += blockDim.x) st(y + row * c, j, (ld(xr, j) - mu) * rs * ld(g, j) + ld(b, j));
    if (threadIdx.x == 0) {
      mean[row] = mu;
      rstd[row] = rs;
    }
  }
}

// Input gradient, one block per row (dg and db are layernorm_param_grad_k's).
template <class T>
__global__ void layernorm_bwd_k(const T* dy, const T* x, const float* mean, const float* rstd, const T* g, T* dx,
                                std::int64_t n, std::int64_t c) {
  ROW_STRIDE(row, n) {
    const T* xr = x + row * c;
    const T* dyr = dy + row * c;
    const float mu = mean[row], rs = rstd[row];
    float a = 0, bsum = 0;
    for (std::int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const float xhat = (ld(xr, j) - mu) * rs, dxhat = ld(dyr, j) * ld(g, j);
      a += dxhat;
      bsum += dxhat * xhat;
    }
    const float mean_dxhat = block_sum(a) / static_cast<float>(c);
    const float mean_dxhat_xhat = block_sum(bsum) / static_cast<float>(c);
    for (std::int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const float xhat = (ld(xr, j) - mu) * rs, dxhat = ld(dyr, j) * ld(g, j);
      st(dx + row * c, j, ld(dx + row * c, j) + rs * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
    }
  }
}

// dg[j] += sum_i dy[i, j] xhat[i, j], db[j] += sum_i dy[i, j]: one thread per column over a slice
// of rows (blockIdx.y), coalesced across columns; one atomic per column and slice.
template <class T>
__global__ void layernorm_param_grad_k(const T* dy, const T* x, const float* mean, const float* rstd, float* dg,
                                       float* db, std::int64_t n, std::int64_t c, std::int64_t rows_per) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= c) return;
  const std::int64_t r0 = blockIdx.y * rows_per, r1 = r0 + rows_per < n ? r0 + rows_per : n;
  float sg = 0, sb = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    const float d = ld(dy, r * c + j);
    sg += d * (ld(x, r * c + j) - mean[r]) * rstd[r];
    sb += d;
  }
  atomicAdd(dg + j, sg);
  atomicAdd(db + j, sb);
}

__device__ __forceinline__ float gelu_tanh_arg(float v) { return 0.7978845608028654f * (v + 0.044715f * v * v * v); }

template <class T>
__global__ void gelu_fwd_k(const T* x, T* y, std::int64_t n) {
  GRID_STRIDE(i, n) {
    const float v = ld(x, i);
    st(y, i, 0.5f * v * (1 + tanhf(gelu_tanh_arg(v))));
  }
}

template <class T>
__global__ void gelu_bwd_k(const T* x, const T* dy, T* dx, std::int64_t n) {
  GRID_STRIDE(i, n) {
    const float v = ld(x, i), th = tanhf(gelu_tanh_arg(v));
    const float du = 0.7978845608028654f * (1 + 3 * 0.044715f * v * v);
    st(dx, i, ld(dy, i) * (0.5f * (1 + th) + 0.5f * v * (1 - th * th) * du));
  }
}

template <class T>
__global__ void bias_add_k(T* y, const T* b, std::int64_t n, std::int64_t out) {
  GRID_STRIDE(i, n * out) st(y, i, ld(y, i) + ld(b, i % out));
}

// One thread per column, a slice of rows per blockIdx.y; atomics combine the slices.
template <class T>
__global__ void bias_grad_k(const T* dy, float* db, std::int64_t n, std::int64_t out, std::int64_t rows_per) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= out) return;
  const std::int64_t r0 = blockIdx.y * rows_per, r1 = r0 + rows_per < n ? r0 + rows_per : n;
  float s = 0;
  for (std::int64_t r = r0; r < r1; ++r) s += ld(dy, r * out + j);
  atomicAdd(db + j, s);
}

template <class T>
__global__ void residual_add_k(const T* a, const T* b, T* y, std::int64_t n) {
  GRID_STRIDE(i, n) st(y, i, ld(a, i) + ld(b, i));
}

// One block per row.
template <class T>
__global__ void softmax_fwd_k(T* s, std::int64_t rows, std::int64_t seq) {
  ROW_STRIDE(row, rows) {
    const std::int64_t last = row % seq;
    T* r = s + row * seq;
    float m = -INFINITY;
    for (std::int64_t j = threadIdx.x; j <= last; j += blockDim.x) m = fmaxf(m, ld(r, j));
    m = block_max(m);
    float sum = 0;
    for (std::int64_t j = threadIdx.x; j <= last; j += blockDim.x) sum += __expf(ld(r, j) - m);
    sum = block_sum(sum);
    for (std::int64_t j = threadIdx.x; j < seq; j += blockDim.x) st(r, j, j <= last ? __expf(ld(r, j) - m) / sum : 0.f);
  }
}

template <class T>
__global__ void softmax_bwd_k(const T* p, T* d, std::int64_t rows, std::int64_t seq) {
  ROW_STRIDE(row, rows) {
    const std::int64_t last = row % seq;
    const T* pr = p + row * seq;
    T* dr = d + row * seq;
    float dot = 0;
    for (std::int64_t j = threadIdx.x; j <= last; j += blockDim.x) dot += ld(pr, j) * ld(dr, j);
    dot = block_sum(dot);
    for (std::int64_t j = threadIdx.x; j < seq; j += blockDim.x) st(dr, j, j <= last ? ld(pr, j) * (ld(dr, j) - dot) : 0.f);
  }
}

template <class T>
__global__ void cross_entropy_k(T* logits, const std::int32_t* targets, std::int64_t n, std::int64_t v, float scale,
                                double* loss_sum) {
  ROW_STRIDE(row, n) {
    T* r = logits + row * v;
    float m = -INFINITY;
    for (std::int64_t j = threadIdx.x; j < v; j += blockDim.x) m = fmaxf(m, ld(r, j));
    m = block_max(m);
    float sum = 0;
    for (std::int64_t j = threadIdx.x; j < v; j += blockDim.x) sum += __expf(ld(r, j) - m);
    sum = block_sum(sum);
    const std::int32_t y = targets[row];
    if (threadIdx.x == 0) atomicAdd(loss_sum, static_cast<double>(logf(sum) - (ld(r, y) - m)));
    __syncthreads();  // everyone has read r[y] before it is overwritten
    const float f = scale / static_cast<float>(n);
    for (std::int64_t j = threadIdx.x; j < v; j += blockDim.x) {
      st(r, j, f * (__expf(ld(r, j) - m) / sum - (j == y ? 1.f : 0.f)));
    }
  }
}

__global__ void adamw_k(float* p, const float* g, float* m, float* v, std::int64_t n, AdamWArgs a) {
  GRID_STRIDE(i, n) {
    const float gi = g[i] * a.grad_scale;
    float pi = p[i];
    pi -= a.lr * a.weight_decay * pi;
    const float mi = a.beta1 * m[i] + (1 - a.beta1) * gi;
    const float vi = a.beta2 * v[i] + (1 - a.beta2) * gi * gi;
    pi -= a.lr * (mi / a.c1) / (sqrtf(vi / a.c2) + a.eps);
    m[i] = mi;
    v[i] = vi;
    p[i] = pi;
  }
}

__global__ void overflow_k(const float* g, std::int64_t n, int* flag) {
  GRID_STRIDE(i, n) {
    if (!isfinite(g[i])) *flag = 1;
  }
}

// i runs over the packed [B, H, T, D] index.
template <class T>
__global__ void split_heads_k(const T* src, std::int64_t ld, std::int64_t off, T* dst, std::int64_t batch,
                              std::int64_t seq, std::int64_t heads, std::int64_t d) {
  GRID_STRIDE(i, batch * heads * seq * d) {
    const std::int64_t e = i % d, t = (i / d) % seq, h = (i / (d * seq)) % heads, b = i / (d * seq * heads);
    dst[i] = src[(b * seq + t) * ld + off + h * d + e];
  }
}

template <class T>
__global__ void merge_heads_k(const T* src, T* dst, std::int64_t ld, std::int64_t off, std::int64_t batch,
                              std::int64_t seq, std::int64_t heads, std::int64_t d) {
  GRID_STRIDE(i, batch * heads * seq * d) {
    const std::int64_t e = i % d, t = (i / d) % seq, h = (i / (d * seq)) % heads, b = i / (d * seq * heads);
    dst[(b * seq + t) * ld + off + h * d + e] = src[i];
  }
}

// Calls f with a typed null pointer of the compute type, for dispatch.
template <class F>
cudaError_t dispatch(DType t, F&& f) {
  switch (t) {
    case DType::F32: f(static_cast<float*>(nullptr)); break;
    case DType::F16: f(static_cast<__half*>(nullptr)); break;
    case DType::BF16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
  }
  return cudaGetLastError();
}

}  // namespace

std::size_t dtype_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

#define T_OF(tag) std::remove_pointer_t<decltype(tag)>

cudaError_t launch_cast_from_f32(DType t, const float* src, void* dst, std::int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  return dispatch(t, [&](auto tag) { cast_k<<<grid_for(n), kBlock, 0, s>>>(src, static_cast<T_OF(tag)*>(dst), n); });
}

cudaError_t launch_embedding_forward(DType t, const std::int32_t* tokens, const void* wte, const void* wpe, void* x,
                                     std::int64_t batch, std::int64_t seq, std::int64_t c, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    embedding_fwd_k<<<grid_for(batch * seq * c), kBlock, 0, s>>>(tokens, static_cast<const T*>(wte),
                                                                 static_cast<const T*>(wpe), static_cast<T*>(x),
                                                                 batch * seq, seq, c);
  });
}

cudaError_t launch_embedding_backward(DType t, const std::int32_t* tokens, const void* dx, float* dwte, float* dwpe,
                                      std::int64_t batch, std::int64_t seq, std::int64_t c, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    embedding_bwd_k<<<grid_for(batch * seq * c), kBlock, 0, s>>>(tokens, static_cast<const T*>(dx), dwte, dwpe,
                                                                 batch * seq, seq, c);
  });
}

cudaError_t launch_layernorm_forward(DType t, const void* x, const void* g, const void* b, void* y, float* mean,
                                     float* rstd, std::int64_t n, std::int64_t c, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    layernorm_fwd_k<<<rows_grid(n), kBlock, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(g),
                                                    static_cast<const T*>(b), static_cast<T*>(y), mean, rstd, n, c);
  });
}

cudaError_t launch_layernorm_backward(DType t, const void* dy, const void* x, const float* mean, const float* rstd,
                                      const void* g, void* dx, float* dg, float* db, std::int64_t n, std::int64_t c,
                                      cudaStream_t s) {
  // Slices of at least 256 rows, more past 16.7M rows so that gridDim.y stays within 65535.
  const RowSlices slices = row_slices(n, 256);
  const dim3 grid(capped_grid(c, kBlock, kMaxGridX), slices.slices);
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    layernorm_bwd_k<<<rows_grid(n), kBlock, 0, s>>>(static_cast<const T*>(dy), static_cast<const T*>(x), mean, rstd,
                                                    static_cast<const T*>(g), static_cast<T*>(dx), n, c);
    layernorm_param_grad_k<<<grid, kBlock, 0, s>>>(static_cast<const T*>(dy), static_cast<const T*>(x), mean, rstd, dg,
                                                   db, n, c, slices.rows_per);
  });
}

cudaError_t launch_gelu_forward(DType t, const void* x, void* y, std::int64_t n, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    gelu_fwd_k<<<grid_for(n), kBlock, 0, s>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
  });
}

cudaError_t launch_gelu_backward(DType t, const void* x, const void* dy, void* dx, std::int64_t n, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    gelu_bwd_k<<<grid_for(n), kBlock, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx), n);
  });
}

cudaError_t launch_bias_add(DType t, void* y, const void* b, std::int64_t n, std::int64_t out, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    bias_add_k<<<grid_for(n * out), kBlock, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(b), n, out);
  });
}

cudaError_t launch_bias_grad(DType t, const void* dy, float* db, std::int64_t n, std::int64_t out, cudaStream_t s) {
  const RowSlices slices = row_slices(n, 256);  // see launch_layernorm_backward
  const dim3 grid(capped_grid(out, kBlock, kMaxGridX), slices.slices);
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    bias_grad_k<<<grid, kBlock, 0, s>>>(static_cast<const T*>(dy), db, n, out, slices.rows_per);
  });
}

cudaError_t launch_residual_add(DType t, const void* a, const void* b, void* y, std::int64_t n, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    residual_add_k<<<grid_for(n), kBlock, 0, s>>>(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), n);
  });
}

cudaError_t launch_causal_softmax_forward(DType t, void* s_, std::int64_t rows, std::int64_t seq, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    softmax_fwd_k<<<rows_grid(rows), kBlock, 0, s>>>(static_cast<T*>(s_), rows, seq);
  });
}

cudaError_t launch_causal_softmax_backward(DType t, const void* p, void* d, std::int64_t rows, std::int64_t seq,
                                           cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    softmax_bwd_k<<<rows_grid(rows), kBlock, 0, s>>>(static_cast<const T*>(p), static_cast<T*>(d), rows, seq);
  });
}

cudaError_t launch_cross_entropy(DType t, void* logits, const std::int32_t* targets, std::int64_t n, std::int64_t v,
                                 float grad_scale, double* loss_sum, cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    cross_entropy_k<<<rows_grid(n), kBlock, 0, s>>>(static_cast<T*>(logits), targets, n, v, grad_scale, loss_sum);
  });
}

cudaError_t launch_adamw(float* p, const float* g, float* m, float* v, std::int64_t n, const AdamWArgs& a,
                         cudaStream_t s) {
  adamw_k<<<grid_for(n), kBlock, 0, s>>>(p, g, m, v, n, a);
  return cudaGetLastError();
}

cudaError_t launch_split_heads(DType t, const void* src, std::int64_t ld, std::int64_t off, void* dst,
                               std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t d,
                               cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    split_heads_k<<<grid_for(batch * heads * seq * d), kBlock, 0, s>>>(static_cast<const T*>(src), ld, off,
                                                                       static_cast<T*>(dst), batch, seq, heads, d);
  });
}

cudaError_t launch_merge_heads(DType t, const void* src, void* dst, std::int64_t ld, std::int64_t off,
                               std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t d,
                               cudaStream_t s) {
  return dispatch(t, [&](auto tag) {
    using T = T_OF(tag);
    merge_heads_k<<<grid_for(batch * heads * seq * d), kBlock, 0, s>>>(static_cast<const T*>(src),
                                                                       static_cast<T*>(dst), ld, off, batch, seq,
                                                                       heads, d);
  });
}

cudaError_t launch_overflow_check(const float* g, std::int64_t n, int* flag, cudaStream_t s) {
  overflow_k<<<grid_for(n), kBlock, 0, s>>>(g, n, flag);
  return cudaGetLastError();
}

}  // namespace gpubench::kernels::train
