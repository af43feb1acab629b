// The infer model's device kernels (infer_kernels.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/common/grid.hpp"
#include "kernels/common/random.hpp"
#include "kernels/infer/infer_kernels.cuh"

namespace gpubench::kernels::infer {
namespace {

__device__ __forceinline__ float ld(const __half* p, std::int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(__half* p, std::int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void st(__nv_bfloat16* p, std::int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }

constexpr int kBlock = 256;
unsigned rows_grid(std::int64_t rows) { return capped_grid(rows, 1, kMaxGridX); }
unsigned grid_for(std::int64_t n) { return capped_grid(n, kBlock, 65535 * 16); }

#define ROW_STRIDE(row, rows) for (std::int64_t row = blockIdx.x; row < (rows); row += gridDim.x)
#define GRID_STRIDE(i, n) \
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n); i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// Pool row of token `pos` of sequence `seq` (CacheView).
__device__ __forceinline__ std::int64_t cache_row(const CacheView& c, std::int32_t seq, std::int64_t pos) {
  return static_cast<std::int64_t>(c.table[seq * c.max_pages + pos / c.page_size]) * c.page_size + pos % c.page_size;
}

template <class T>
__global__ void embed_k(const std::int32_t* tokens, const T* wte, T* x, std::int64_t rows, std::int64_t c) {
  GRID_STRIDE(i, rows * c) x[i] = wte[static_cast<std::int64_t>(tokens[i / c]) * c + i % c];
}

// One block per row; sum of squares in fp32 over the block.
template <class T>
__global__ void rmsnorm_k(const T* x, const T* g, T* y, std::int64_t rows, std::int64_t c, float eps) {
  __shared__ float partial[kBlock / 32];
  ROW_STRIDE(r, rows) {
    float ss = 0;
    for (std::int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      const float v = ld(x, r * c + i);
      ss += v * v;
    }
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    __syncthreads();  // partial may still be read for the previous row
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = ss;
    __syncthreads();
    float total = 0;
    for (int w = 0; w < kBlock / 32; ++w) total += partial[w];
    const float scale = rsqrtf(total / static_cast<float>(c) + eps);
    for (std::int64_t i = threadIdx.x; i < c; i += blockDim.x) st(y, r * c + i, ld(x, r * c + i) * scale * ld(g, i));
  }
}

// One block per row: first the rotation of every (head, pair) of q and k, then (after a barrier)
// K and V copied into the cache.
template <class T>
__global__ void rope_cache_k(T* qkv, const std::int32_t* row_seq, const std::int32_t* row_pos, std::int64_t rows,
                             std::int64_t hq, std::int64_t hk, std::int64_t d, double theta, bool rotate, CacheView c) {
  const std::int64_t ld_qkv = (hq + 2 * hk) * d, half = d / 2;
  ROW_STRIDE(r, rows) {
    T* row = qkv + r * ld_qkv;
    const std::int64_t pos = row_pos[r];
    if (rotate) {
      for (std::int64_t u = threadIdx.x; u < (hq + hk) * half; u += blockDim.x) {
        const std::int64_t h = u / half, i = u % half;
        // The angle in double, as the CPU path: pos * theta^(-2i/d).
        const double a = static_cast<double>(pos) * pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        double sn, cs;
        sincos(a, &sn, &cs);
        const float x0 = ld(row, h * d + i), x1 = ld(row, h * d + i + half);
        st(row, h * d + i, x0 * static_cast<float>(cs) - x1 * static_cast<float>(sn));
        st(row, h * d + i + half, x1 * static_cast<float>(cs) + x0 * static_cast<float>(sn));
      }
      __syncthreads();
    }
    const std::int64_t dst = cache_row(c, row_seq[r], pos) * c.kv_dim;
    for (std::int64_t i = threadIdx.x; i < c.kv_dim; i += blockDim.x) {
      static_cast<T*>(c.k)[dst + i] = row[hq * d + i];
      static_cast<T*>(c.v)[dst + i] = row[(hq + hk) * d + i];
    }
    __syncthreads();
  }
}

// Lane l's PER consecutive elements of a head vector, as floats: one 16-, 8- or 4-byte load where
// PER elements of T make one (the offsets are multiples of PER: d = 32 PER, kv_dim a multiple
// of d), element loads otherwise.
template <int PER, class T>
__device__ __forceinline__ void load_lane(const T* p, float (&out)[PER]) {
  constexpr int bytes = PER * static_cast<int>(sizeof(T));
  if constexpr (bytes == 16 || bytes == 8 || bytes == 4) {
    using V = std::conditional_t<bytes == 16, uint4, std::conditional_t<bytes == 8, uint2, unsigned>>;
    const V u = *reinterpret_cast<const V*>(p);
    const T* e = reinterpret_cast<const T*>(&u);
    for (int i = 0; i < PER; ++i) out[i] = ld(e, i);
  } else {
    for (int i = 0; i < PER; ++i) out[i] = ld(p, i);
  }
}

// Flash-decoding: block b runs unit b / splits ((row, q head)) over split b % splits of its keys,
// [sp * kps, min((sp + 1) * kps, pos + 1)) (every key with one split). 4 warps; lane l of a warp
// holds dims [l * PER, (l + 1) * PER) of q and of its accumulator, d = 32 PER <= 256. Warp w runs
// the online softmax over keys j = j0 + w, j0 + w + 4, ...: s_j = q . k_j / sqrt(d) (the lanes'
// partial products summed by shuffles); m' = max(m, s_j), l = l e^(m - m') + e^(s_j - m'),
// acc = acc e^(m - m') + e^(s_j - m') v_j. The four (m, l, acc) are combined: M = max m_w,
// L = sum l_w e^(m_w - M), A = sum acc_w e^(m_w - M). One split: att = A / L; more: the partial
// (M, L, A) goes to part[b] (d + 2 floats) for attention_combine_k (model.hpp's
// attention_partial / combine_partials are the CPU reference).
constexpr int kAttnWarps = 4, kMaxPer = 8;
template <int PER, class T>
__global__ void __launch_bounds__(kAttnWarps * 32)
    paged_attention_k(const T* qkv, T* att, const std::int32_t* row_seq, const std::int32_t* row_pos, std::int64_t rows,
                      std::int64_t hq, std::int64_t hk, CacheView c, std::int64_t splits, std::int64_t kps, float* part) {
  constexpr std::int64_t d = 32 * PER;
  __shared__ float m_s[kAttnWarps], l_s[kAttnWarps];
  __shared__ float acc_s[kAttnWarps][d];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t ld_qkv = (hq + 2 * hk) * d, g_size = hq / hk;
  const float scale = rsqrtf(static_cast<float>(d));
  const T* kp = static_cast<const T*>(c.k);
  const T* vp = static_cast<const T*>(c.v);
  for (std::int64_t b = blockIdx.x; b < rows * hq * splits; b += gridDim.x) {
    const std::int64_t unit = b / splits, sp = b % splits;
    const std::int64_t r = unit / hq, h = unit % hq, g = h / g_size;
    const std::int32_t seq = row_seq[r];
    const std::int64_t pos = row_pos[r];
    const std::int64_t j0 = splits == 1 ? 0 : sp * kps;
    const std::int64_t j1 = splits == 1 || (sp + 1) * kps > pos + 1 ? pos + 1 : (sp + 1) * kps;
    float q[PER], acc[PER], kv[PER];
    load_lane<PER>(qkv + r * ld_qkv + h * d + lane * PER, q);
    for (int i = 0; i < PER; ++i) acc[i] = 0;
    float m = -INFINITY, l = 0;
    for (std::int64_t j = j0 + warp; j < j1; j += kAttnWarps) {
      const std::int64_t base = cache_row(c, seq, j) * c.kv_dim + g * d + lane * PER;
      load_lane<PER>(kp + base, kv);
      float dot = 0;
      for (int i = 0; i < PER; ++i) dot += q[i] * kv[i];
      for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
      const float sj = dot * scale, m_new = fmaxf(m, sj);
      const float old = __expf(m - m_new), p = __expf(sj - m_new);
      l = l * old + p;
      load_lane<PER>(vp + base, kv);
      for (int i = 0; i < PER; ++i) acc[i] = acc[i] * old + p * kv[i];
      m = m_new;
    }
    if (lane == 0) {
      m_s[warp] = m;
      l_s[warp] = l;
    }
    for (int i = 0; i < PER; ++i) acc_s[warp][lane * PER + i] = acc[i];
    __syncthreads();
    float big = -INFINITY;
    for (int w = 0; w < kAttnWarps; ++w) big = fmaxf(big, m_s[w]);
    float total = 0;
    for (int w = 0; w < kAttnWarps; ++w) total += m_s[w] == -INFINITY ? 0.0f : l_s[w] * __expf(m_s[w] - big);
    float* slot = splits > 1 ? part + b * (d + 2) : nullptr;
    if (splits > 1 && threadIdx.x == 0) {
      slot[0] = big;  // -inf: an empty split (a row shorter than the step's longest)
      slot[1] = total;
    }
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
      float o = 0;
      for (int w = 0; w < kAttnWarps; ++w) o += m_s[w] == -INFINITY ? 0.0f : acc_s[w][i] * __expf(m_s[w] - big);
      if (splits == 1) st(att, r * hq * d + h * d + i, o / total);
      else slot[2 + i] = o;
    }
    __syncthreads();  // the shared arrays are rewritten for the next unit
  }
}

// One block per unit: the splits' partials combined, M = max m_s, att = sum A_s e^(m_s - M) /
// sum L_s e^(m_s - M), empty splits (m_s = -inf) skipped.
template <class T>
__global__ void attention_combine_k(const float* part, T* att, std::int64_t units, std::int64_t d, std::int64_t splits) {
  ROW_STRIDE(u, units) {
    const float* p = part + u * splits * (d + 2);
    float big = -INFINITY;
    for (std::int64_t s = 0; s < splits; ++s) big = fmaxf(big, p[s * (d + 2)]);
    float total = 0;
    for (std::int64_t s = 0; s < splits; ++s) {
      const float ms = p[s * (d + 2)];
      if (ms != -INFINITY) total += p[s * (d + 2) + 1] * __expf(ms - big);
    }
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
      float o = 0;
      for (std::int64_t s = 0; s < splits; ++s) {
        const float ms = p[s * (d + 2)];
        if (ms != -INFINITY) o += p[s * (d + 2) + 2 + i] * __expf(ms - big);
      }
      st(att, u * d + i, o / total);
    }
  }
}

template <class T>
__global__ void swiglu_k(const T* gu, T* out, std::int64_t rows, std::int64_t f) {
  GRID_STRIDE(i, rows * f) {
    const std::int64_t r = i / f, j = i % f;
    const float g = ld(gu, r * 2 * f + j);
    st(out, i, g / (1.0f + __expf(-g)) * ld(gu, r * 2 * f + f + j));
  }
}

template <class T>
__global__ void fill_weights_k(T* dst, std::int64_t n, std::uint64_t seed, std::int64_t offset, double scale, double shift) {
  GRID_STRIDE(i, n) {
    const double v = shift + scale * static_cast<double>(uniform_value(seed, static_cast<std::uint64_t>(offset + i)));
    st(dst, i, __double2float_rn(v));
  }
}

template <class T>
__global__ void gather_rows_k(const T* x, const std::int32_t* index, T* y, std::int64_t n, std::int64_t c) {
  GRID_STRIDE(i, n * c) y[i] = x[static_cast<std::int64_t>(index[i / c]) * c + i % c];
}

// One block per row: each thread's best (value, index) over a strided pass, then a block
// reduction keeping the larger value and, on ties, the smaller index (the first maximum, as
// std::max_element). Rows holding NaN: some index (the engines' logits are checked finite).
__global__ void argmax_rows_k(const float* logits, std::int32_t* out, std::int64_t rows, std::int64_t vocab) {
  __shared__ float best_v[kBlock / 32];
  __shared__ std::int32_t best_i[kBlock / 32];
  ROW_STRIDE(r, rows) {
    const float* row = logits + r * vocab;
    float v = -INFINITY;
    std::int32_t at = 0x7fffffff;
    for (std::int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
      const float x = row[i];
      if (at == 0x7fffffff || x > v) {  // the thread's first value seeds the pair
        v = x;
        at = static_cast<std::int32_t>(i);
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, v, o);
      const std::int32_t oi = __shfl_xor_sync(0xffffffffu, at, o);
      if (ov > v || (!(ov < v) && oi < at)) {
        v = ov;
        at = oi;
      }
    }
    __syncthreads();  // the shared pairs may still be read for the previous row
    if (threadIdx.x % 32 == 0) {
      best_v[threadIdx.x / 32] = v;
      best_i[threadIdx.x / 32] = at;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      float bv = best_v[0];
      std::int32_t bi = best_i[0];
      for (int w = 1; w < kBlock / 32; ++w) {
        if (best_v[w] > bv || (!(best_v[w] < bv) && best_i[w] < bi)) {
          bv = best_v[w];
          bi = best_i[w];
        }
      }
      out[r] = bi == 0x7fffffff ? 0 : bi;
    }
  }
}

// Calls f with a null pointer of the element type of `t`.
template <class F>
cudaError_t dispatch(DType t, F&& f) {
  if (t == DType::BF16) f(static_cast<__nv_bfloat16*>(nullptr));
  else if (t == DType::F16) f(static_cast<__half*>(nullptr));
  else return cudaErrorInvalidValue;  // fp32 is the CPU path's
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_embed(DType t, const std::int32_t* tokens, const void* wte, void* x, std::int64_t rows,
                         std::int64_t c, cudaStream_t s) {
  if (rows * c == 0) return cudaSuccess;
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    embed_k<<<grid_for(rows * c), kBlock, 0, s>>>(tokens, static_cast<const T*>(wte), static_cast<T*>(x), rows, c);
  });
}

cudaError_t launch_rmsnorm(DType t, const void* x, const void* g, void* y, std::int64_t rows, std::int64_t c,
                           double eps, cudaStream_t s) {
  if (rows == 0) return cudaSuccess;
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    rmsnorm_k<<<rows_grid(rows), kBlock, 0, s>>>(static_cast<const T*>(x), static_cast<const T*>(g), static_cast<T*>(y),
                                                 rows, c, static_cast<float>(eps));
  });
}

cudaError_t launch_rope_and_cache(DType t, void* qkv, const std::int32_t* row_seq, const std::int32_t* row_pos,
                                  std::int64_t rows, std::int64_t hq, std::int64_t hk, std::int64_t d, double theta,
                                  bool rotate, const CacheView& cache, cudaStream_t s) {
  if (rows == 0) return cudaSuccess;
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    rope_cache_k<<<rows_grid(rows), kBlock, 0, s>>>(static_cast<T*>(qkv), row_seq, row_pos, rows, hq, hk, d, theta,
                                                    rotate, cache);
  });
}

cudaError_t launch_paged_attention(DType t, const void* qkv, void* att, const std::int32_t* row_seq,
                                   const std::int32_t* row_pos, std::int64_t rows, std::int64_t hq, std::int64_t hk,
                                   std::int64_t d, const CacheView& cache, const AttentionSplitArgs& split,
                                   cudaStream_t s) {
  if (rows * hq == 0) return cudaSuccess;
  if (d % 32 != 0 || d / 32 > kMaxPer || hq % hk != 0) return cudaErrorInvalidValue;
  const std::int64_t splits = split.splits < 1 ? 1 : split.splits;
  if (splits > 1 && (split.keys_per_split < 1 || split.partials == nullptr)) return cudaErrorInvalidValue;
  const std::int64_t blocks = rows * hq * splits;
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    auto go = [&](auto per) {
      paged_attention_k<decltype(per)::value, T><<<capped_grid(blocks, 1, kMaxGridX), kAttnWarps * 32, 0, s>>>(
          static_cast<const T*>(qkv), static_cast<T*>(att), row_seq, row_pos, rows, hq, hk, cache, splits,
          split.keys_per_split, split.partials);
    };
    switch (d / 32) {
      case 1: go(std::integral_constant<int, 1>{}); break;
      case 2: go(std::integral_constant<int, 2>{}); break;
      case 3: go(std::integral_constant<int, 3>{}); break;
      case 4: go(std::integral_constant<int, 4>{}); break;
      case 5: go(std::integral_constant<int, 5>{}); break;
      case 6: go(std::integral_constant<int, 6>{}); break;
      case 7: go(std::integral_constant<int, 7>{}); break;
      default: go(std::integral_constant<int, 8>{}); break;
    }
    if (splits > 1) {
      attention_combine_k<<<rows_grid(rows * hq), kBlock, 0, s>>>(split.partials, static_cast<T*>(att), rows * hq, d,
                                                                   splits);
    }
  });
}

cudaError_t launch_swiglu(DType t, const void* gu, void* out, std::int64_t rows, std::int64_t f, cudaStream_t s) {
  if (rows * f == 0) return cudaSuccess;
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    swiglu_k<<<grid_for(rows * f), kBlock, 0, s>>>(static_cast<const T*>(gu), static_cast<T*>(out), rows, f);
  });
}

cudaError_t launch_fill_weights(DType t, void* dst, std::int64_t n, std::uint64_t seed, std::int64_t offset,
                                double scale, double shift, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    fill_weights_k<<<grid_for(n), kBlock, 0, s>>>(static_cast<T*>(dst), n, seed, offset, scale, shift);
  });
}

cudaError_t launch_argmax_rows(const float* logits, std::int32_t* out, std::int64_t rows, std::int64_t vocab,
                               cudaStream_t s) {
  if (rows == 0) return cudaSuccess;
  if (vocab < 1 || vocab > 0x7ffffffe) return cudaErrorInvalidValue;
  argmax_rows_k<<<rows_grid(rows), kBlock, 0, s>>>(logits, out, rows, vocab);
  return cudaGetLastError();
}

cudaError_t launch_gather_rows(DType t, const void* x, const std::int32_t* index, void* y, std::int64_t n,
                               std::int64_t c, cudaStream_t s) {
  if (n * c == 0) return cudaSuccess;
  return dispatch(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    gather_rows_k<<<grid_for(n * c), kBlock, 0, s>>>(static_cast<const T*>(x), index, static_cast<T*>(y), n, c);
  });
}

}  // namespace gpubench::kernels::infer
