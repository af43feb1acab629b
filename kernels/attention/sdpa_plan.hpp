#pragma once
// What the cuDNN provider asks cuDNN's fused SDPA for, as plain data: every tensor of the graph
// (name, UID, dimensions, strides, kind) and the options (scale, mask alignment, paging). The
// cuDNN frontend graph is built from it (bench/suites/attention/attention_cudnn.cpp, compiled
// only with the frontend), so the shapes, strides, UIDs and the paged-KV layout are unit-tested
// without a GPU or cuDNN.
//
// Layouts are the CPU kernels' (attention_host.hpp): Q, O, dO, dQ [b][h][s_q][d]; K, V, dK, dV
// [b][h_kv][s_kv][d]; a paged K and V [pages][h_kv][page_size][d] with page tables [b][1][pages
// per sequence][1] (int32, one for K and one for V: the same table here); Stats (cuDNN's name
// for the log-sum-exp of each row, fp32) [b][h][s_q][1]. cuDNN takes grouped-query heads from
// K's and V's head dimension (h_kv < h).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention/attention_host.hpp"

namespace gpubench::kernels::attention {

enum class SdpaTensorKind { Io, Float, Int32 };  // Io: the case's element type (fp16/bf16)

struct SdpaTensor {
  std::string name;
  std::int64_t uid = 0;
  std::vector<std::int64_t> dim, stride;
  SdpaTensorKind kind = SdpaTensorKind::Io;
  std::int64_t elements() const;  // the product of dim (the buffer a dense tensor needs)
};

// UIDs of the variant pack, fixed so a case can fill it by name.
enum SdpaUid : std::int64_t {
  kUidQ = 1, kUidK, kUidV, kUidO, kUidStats, kUidSeqQ, kUidSeqKv, kUidPageTableK, kUidPageTableV,
  kUidDO, kUidDQ, kUidDK, kUidDV,
};

struct SdpaPlan {
  bool backward = false;
  std::vector<SdpaTensor> inputs, outputs;
  float attn_scale = 1;
  bool causal_bottom_right = false;
  // Paged K and V (decode): cuDNN reads them through the page tables, which it takes only with
  // a padding mask, hence the sequence-length tensors (every sequence full length here).
  bool paged = false;
  std::int64_t max_seq_len_kv = 0;
  const SdpaTensor& tensor(std::int64_t uid) const;  // throws std::out_of_range
};

// The forward (prefill, or decode with seq_q = 1; paged when page_size > 0): Q, K, V in, O and
// Stats out.
SdpaPlan sdpa_forward_plan(const Shape& s);
// The backward: Q, K, V, O, dO and Stats in; dQ, dK, dV out (contiguous K and V only).
SdpaPlan sdpa_backward_plan(const Shape& s);

}  // namespace gpubench::kernels::attention
