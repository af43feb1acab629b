#pragma once
// Scaled dot-product attention on the CPU: the materialised ("naive") algorithm and the tiled
// online-softmax one of FlashAttention (Dao et al. 2022, "FlashAttention: Fast and
// Memory-Efficient Exact Attention with IO-Awareness"; the backward as in FlashAttention-2,
// Dao 2023), forward and backward, causal or not, with grouped-query heads; and one decode step
// (one query token per sequence) over a contiguous or paged KV cache.
//
// The math, per batch b and query head h (its KV head is h / (heads / kv_heads)):
//   S = scale * Q K^T            [seq_q x seq_kv], scale = 1 / sqrt(head_dim)
//   P = softmax_rows(mask(S))     mask: causal drops key j for query i when j > i + seq_kv - seq_q
//                                 (aligned bottom-right, as FlashAttention >= 2.1 and cuDNN do)
//   O = P V,  LSE_i = log(sum_j exp(S_ij))  (the forward keeps LSE for the backward)
// Backward, given dO:  D_i = sum_d dO_id O_id,  dV = P^T dO,  dP = dO V^T,
//   dS = P o (dP - D),  dQ = scale dS K,  dK = scale dS^T Q  (dK, dV summed over a group's heads).
// A query that sees no key (causal with seq_q > seq_kv) gets O = 0 and gradients 0.
//
// Layouts (row-major, dense): Q, O, dO, dQ [batch][heads][seq_q][head_dim]; K, V, dK, dV
// [batch][kv_heads][seq_kv][head_dim]; LSE [batch][heads][seq_q]. A paged cache (decode) holds
// K and V as [pages][kv_heads][page_size][head_dim] with a page table [batch][seq_kv / page_size]
// of page indices: token t of sequence b lives in page table[b][t / page_size], slot t % page_size.
//
// The naive kernels are templates (float: the `naive` provider; double: the reference every
// case is verified against). Their matrix products go through OpenBLAS; the tiled kernel's
// per-tile products do too (as PyTorch's CPU flash attention calls its BLAS per block).
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/attention/attention_counts.hpp"

namespace gpubench::kernels::attention {

struct Shape {
  std::int64_t batch = 1, heads = 1, kv_heads = 1, seq_q = 1, seq_kv = 1, head_dim = 64;
  bool causal = false;
  std::int64_t page_size = 0;  // decode: > 0 for a paged KV cache

  std::int64_t group() const { return heads / kv_heads; }  // query heads per KV head
  // The kernels' mask: causal is aligned bottom-right (attention_counts.hpp).
  Mask mask() const { return causal ? Mask::CausalBottomRight : Mask::None; }
  // Keys query i may see: min(seq_kv, i + 1 + seq_kv - seq_q) when causal (0 if negative).
  std::int64_t visible_keys(std::int64_t i) const;
  double scale() const;
  std::int64_t q_elements() const { return batch * heads * seq_q * head_dim; }
  std::int64_t kv_elements() const { return batch * kv_heads * seq_kv * head_dim; }
  std::int64_t lse_elements() const { return batch * heads * seq_q; }
  std::int64_t pages_per_sequence() const { return page_size > 0 ? seq_kv / page_size : 0; }
};

// FLOPs of the shape as FlashAttention's benchmarks/benchmark_attn.py counts them per pair,
// over the pairs the mask admits exactly (attention_counts.hpp): forward
// 2 * b * h * (head_dim + head_dim_v) * admitted_pairs(seq_q, seq_kv, mask) (two matrix
// products); backward 2.5 x forward (five products, one recomputing S). A decode (seq_q = 1)
// is its forward. `mask` defaults to the kernels' (s.mask()); the cuDNN provider passes the mask
// of the graph it built (sdpa_plan.hpp: plan_mask).
double forward_flops(const Shape& s);
double forward_flops(const Shape& s, Mask mask);
double backward_flops(const Shape& s);
double backward_flops(const Shape& s, Mask mask);
// Bytes one decode step must move at least: K and V of every cached token once, Q read and O
// written, the page table; `element_bytes` is the size of one stored value.
double decode_bytes(const Shape& s, int element_bytes);

// Where one (batch, KV head) unit's keys and values live: contiguous [seq_kv][head_dim], or paged.
template <class T>
struct KvRows {
  const T* base = nullptr;            // contiguous: this unit's first row; paged: the page pool
  std::int64_t head_dim = 0, kv_heads = 1, kv_head = 0, page_size = 0;
  const std::int32_t* table = nullptr;  // paged: this sequence's row of the page table
  const T* row(std::int64_t t) const {
    if (page_size == 0) return base + t * head_dim;
    const std::int64_t page = table[t / page_size];
    return base + ((page * kv_heads + kv_head) * page_size + t % page_size) * head_dim;
  }
};

// ---- One (batch, KV head) unit: its `group` query heads share the unit's K and V. ----
// q, o, lse, dout, dq point at the unit's first query head (heads of a group are adjacent);
// k, v, dk, dv at the unit's KV head.
struct Unit {
  std::int64_t group = 1, seq_q = 1, seq_kv = 1, head_dim = 64;
  bool causal = false;
  Shape shape() const;
};

template <class T>
void naive_forward(const Unit& u, const T* q, const T* k, const T* v, T* o, T* lse);
template <class T>
void naive_backward(const Unit& u, const T* q, const T* k, const T* v, const T* o, const T* lse, const T* dout, T* dq,
                    T* dk, T* dv);

// Tiled forward of query rows [row_begin, row_end) of one query head (fp32): the scores never
// exist beyond one kTileQ x kTileKv tile.
void flash_forward_rows(const Unit& u, const float* q_head, const float* k, const float* v, float* o_head,
                        float* lse_head, std::int64_t row_begin, std::int64_t row_end);
// Tiled backward of one unit (every query head of the group, every tile): dq, dk, dv overwritten.
void flash_backward(const Unit& u, const float* q, const float* k, const float* v, const float* o, const float* lse,
                    const float* dout, float* dq, float* dk, float* dv);

// One decode step of one unit: each of the group's query heads (one token each) over seq_kv
// cached tokens. flash: blocks of kDecodeBlock tokens with the online softmax; naive: every
// score materialised, then the softmax, then the weighted sum.
void decode_flash(const Unit& u, const float* q, const KvRows<float>& k, const KvRows<float>& v, float* o,
                  float* lse);
template <class T>
void decode_naive(const Unit& u, const T* q, const KvRows<T>& k, const KvRows<T>& v, T* o, T* lse);

inline constexpr std::int64_t kTileQ = 128, kTileKv = 256, kDecodeBlock = 64;

// ---- Whole tensors, the units spread over `parallel` (runs f(t) for t < threads). ----
enum class Algorithm { Naive, Flash };
using Parallel = std::function<void(int threads, const std::function<void(int)>& f)>;

struct Tensors {
  const float *q = nullptr, *k = nullptr, *v = nullptr, *dout = nullptr;
  float *o = nullptr, *lse = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
  const std::int32_t* page_table = nullptr;  // decode with page_size > 0: [batch][pages_per_sequence]
};

void forward(Algorithm a, const Shape& s, const Tensors& t, int threads, const Parallel& parallel);
void backward(Algorithm a, const Shape& s, const Tensors& t, int threads, const Parallel& parallel);
void decode(Algorithm a, const Shape& s, const Tensors& t, int threads, const Parallel& parallel);

// A page table that scatters each sequence's pages over the pool (a fixed permutation of
// batch * pages_per_sequence pages from `seed`), so the decode gathers for real.
std::vector<std::int32_t> scattered_page_table(const Shape& s, std::uint64_t seed);

// exp(x) for x <= 0 in float, vectorisable (range reduction to [-ln2/2, ln2/2] and a degree-6
// polynomial; relative error below 2e-7). x below -87 is taken as -87 (about 1.6e-38): callers
// zero masked entries themselves.
void exp_nonpositive(float* x, std::int64_t n);

}  // namespace gpubench::kernels::attention
