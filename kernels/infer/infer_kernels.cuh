#pragma once
// Device kernels of the infer model's forward (everything but the matmuls, which go through
// cuBLASLt): activations and weights in the step's 16-bit type (kernels/train's DType F16 or
// BF16), fp32 math inside every kernel. Each launcher's math is that of the same-named
// operation of model.hpp's Engine, the CPU path the GPU one is verified against (through the
// double reference). Launchers return the launch's error (cudaSuccess when there is no work).
//
// The KV cache: per layer, K and V pools of rows (page * page_size + offset) of kv_dim values;
// `table` is [sequences][max_pages] int32 (page ids; unused entries anything), `row_seq` and
// `row_pos` give each step row's sequence and position.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/train/train_kernels.cuh"

namespace gpubench::kernels::infer {

using train::DType;

// x[r, :] = wte[tokens[r], :].
cudaError_t launch_embed(DType t, const std::int32_t* tokens, const void* wte, void* x, std::int64_t rows,
                         std::int64_t c, cudaStream_t s);
// y = x / sqrt(mean(x^2) + eps) * g, per row.
cudaError_t launch_rmsnorm(DType t, const void* x, const void* g, void* y, std::int64_t rows, std::int64_t c,
                           double eps, cudaStream_t s);
// Rotary embedding of each row's q and k heads in qkv [rows, (hq + 2 hk) d] (in place), then the
// row's (rotated) K and its V written into the cache pools at its sequence and position.
struct CacheView {
  void* k = nullptr;  // this layer's pools
  void* v = nullptr;
  const std::int32_t* table = nullptr;
  std::int64_t page_size = 0, max_pages = 0, kv_dim = 0;
};
cudaError_t launch_rope_and_cache(DType t, void* qkv, const std::int32_t* row_seq, const std::int32_t* row_pos,
                                  std::int64_t rows, std::int64_t hq, std::int64_t hk, std::int64_t d, double theta,
                                  bool rotate, const CacheView& cache, cudaStream_t s);
// att[r, h*d:(h+1)*d] = softmax over keys j <= row_pos[r] of (q . k_j / sqrt(d)) applied to v_j,
// q head h reading KV head h / (hq / hk), keys and values gathered through the page table.
// Flash-decoding: `split.splits` blocks of 4 warps per (row, head), each an online softmax over
// split.keys_per_split consecutive keys (each warp every 4th of them, lanes reading their head
// dims with vector loads), the partials (split.partials: rows x hq x splits x (d + 2) floats)
// combined by a second kernel; one split: every key in one block, no partials. model.hpp's
// attention_split chooses the split, attention_partial / combine_partials are its CPU
// reference. d a multiple of 32, at most 256.
struct AttentionSplitArgs {
  std::int64_t splits = 1, keys_per_split = 0;
  float* partials = nullptr;
};
cudaError_t launch_paged_attention(DType t, const void* qkv, void* att, const std::int32_t* row_seq,
                                   const std::int32_t* row_pos, std::int64_t rows, std::int64_t hq, std::int64_t hk,
                                   std::int64_t d, const CacheView& cache, const AttentionSplitArgs& split,
                                   cudaStream_t s);
// out[r, i] = silu(gu[r, i]) * gu[r, f + i].
cudaError_t launch_swiglu(DType t, const void* gu, void* out, std::int64_t rows, std::int64_t f, cudaStream_t s);
// dst[i] = shift + scale * uniform_value(seed, offset + i) for i < n, in double, then rounded to
// float and to the element type: the host's random_weights<float> rounded the same way.
cudaError_t launch_fill_weights(DType t, void* dst, std::int64_t n, std::uint64_t seed, std::int64_t offset,
                                double scale, double shift, cudaStream_t s);
// out[r] = the index of the largest of logits[r, 0..vocab) (fp32), the first on ties: greedy
// sampling on the device (argmax_rows in model.hpp is its CPU twin). One block per row.
cudaError_t launch_argmax_rows(const float* logits, std::int32_t* out, std::int64_t rows, std::int64_t vocab,
                               cudaStream_t s);
// y[i, :] = x[index[i], :], n rows of c.
cudaError_t launch_gather_rows(DType t, const void* x, const std::int32_t* index, void* y, std::int64_t n,
                               std::int64_t c, cudaStream_t s);

}  // namespace gpubench::kernels::infer
