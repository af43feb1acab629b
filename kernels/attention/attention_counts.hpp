#pragma once
// What an attention mask admits, and the FLOPs that follow from it: the one count of attention
// arithmetic in gpubench (the attention suite's CPU and cuDNN providers, the train step's fused
// and unfused attention, the infer suite's prefill and decode). Plain arithmetic, no BLAS.
//
// A mask admits (query i, key j) of one (batch, head), i < seq_q and j < seq_kv, when
//   None:               always
//   CausalBottomRight:  j <= i + seq_kv - seq_q  (the last query sees every key: FlashAttention
//                       >= 2.1, cuDNN's set_causal_mask_bottom_right, the CPU kernels, and a
//                       prefill of seq_q new tokens over seq_kv = cached + seq_q keys)
//   CausalTopLeft:      j <= i                    (cuDNN's set_causal_mask; the first query sees
//                       the first key)
// The two causal masks are the same mask when seq_q == seq_kv. With bottom-right and
// seq_q > seq_kv the first seq_q - seq_kv queries see no key at all; with top-left and
// seq_q < seq_kv the last seq_kv - seq_q keys are seen by no query.
#include <cstdint>

namespace gpubench::kernels::attention {

enum class Mask { None, CausalBottomRight, CausalTopLeft };

// Keys query i (0 <= i < seq_q) sees: the admitted j form the prefix [0, visible_keys).
std::int64_t visible_keys(std::int64_t i, std::int64_t seq_q, std::int64_t seq_kv, Mask mask);

// The (query, key) pairs one (batch, head) admits, exactly: the sum over i of visible_keys.
// With m = min(seq_q, seq_kv):
//   None:         seq_q * seq_kv
//   bottom-right: m (m + 1) / 2 + m (seq_kv - m)   (seq_q <= seq_kv: seq_q (seq_kv - seq_q) + seq_q (seq_q + 1) / 2;
//                                                   seq_q >  seq_kv: seq_kv (seq_kv + 1) / 2)
//   top-left:     m (m + 1) / 2 + (seq_q - m) seq_kv
std::int64_t admitted_pairs(std::int64_t seq_q, std::int64_t seq_kv, Mask mask);

// FLOPs over the admitted pairs, 2 per multiply-add, for `batch_heads` (batch x query heads;
// grouped-query heads count as full heads: the arithmetic is per query head):
//   forward  = 2 * (head_dim + head_dim_v) * pairs * batch_heads  (S = Q K^T and O = P V)
//   backward = 2.5 x forward  (dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q, and S recomputed:
//              FlashAttention's benchmarks/benchmark_attn.py; a backward that keeps P (the
//              materialised one) runs 2 x forward of them, attention_backward_flops_kept_p)
//   decode   = the forward of one query over seq_kv cached keys
double attention_forward_flops(std::int64_t batch_heads, std::int64_t seq_q, std::int64_t seq_kv, std::int64_t head_dim,
                               std::int64_t head_dim_v, Mask mask);
double attention_backward_flops(std::int64_t batch_heads, std::int64_t seq_q, std::int64_t seq_kv, std::int64_t head_dim,
                                std::int64_t head_dim_v, Mask mask);
double attention_backward_flops_kept_p(std::int64_t batch_heads, std::int64_t seq_q, std::int64_t seq_kv,
                                       std::int64_t head_dim, std::int64_t head_dim_v, Mask mask);
double attention_decode_flops(std::int64_t batch_heads, std::int64_t seq_kv, std::int64_t head_dim, std::int64_t head_dim_v);

}  // namespace gpubench::kernels::attention
