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
//
// fp8 (E4M3) forward (sdpa_fp8_forward_plan): Q, K, V and O are E4M3 codes with one scale per
// tensor (value = code x descale); cuDNN also quantises the softmax probabilities P to E4M3
// (Scale_S) before the P.V product, and reports the largest |P| and |O| (Amax_S, Amax_O).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/attention/attention_host.hpp"

namespace gpubench::kernels::attention {

enum class SdpaTensorKind { Io, Float, Int32 };  // Io: the case's element type (fp16/bf16/fp8 e4m3)

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
  // fp8: the per-tensor scales (inputs, fp32 [1,1,1,1]) and the amax outputs.
  kUidDescaleQ, kUidDescaleK, kUidDescaleV, kUidDescaleS, kUidScaleS, kUidScaleO, kUidAmaxS, kUidAmaxO,
};

// E4M3's largest finite value (OCP FP8: 1.75 x 2^8).
inline constexpr double kE4M3Max = 448;

// The per-tensor scale that maps a tensor whose largest magnitude is `amax` into E4M3: the largest
// power of two s with amax x s <= 448. A power of two, so descale = 1 / s is exact in fp32 and the
// dequantised value code x descale is exactly what cuDNN multiplies. Throws for amax <= 0 or not finite.
float fp8_e4m3_scale(double amax);

// The scales of an fp8 forward: Q, K, V (from their amax), S (the probabilities: 256, a power of
// two below 448, so P <= 1 never saturates, whether cuDNN scales P before or after normalising),
// O (|O| <= max |V|: O's rows are convex combinations of V's, so V's scale).
struct Fp8Scales {
  float q = 1, k = 1, v = 1, s = 256, o = 1;
};
Fp8Scales fp8_scales(double amax_q, double amax_k, double amax_v);

struct SdpaPlan {
  bool backward = false;
  std::vector<SdpaTensor> inputs, outputs;
  float attn_scale = 1;
  bool causal_bottom_right = false;
  // fp8: the causal mask aligned top-left instead (the same mask when seq_q == seq_kv; cuDNN's fp8
  // forward takes a bottom-right one on Blackwell only), and the values of the scale inputs by UID.
  bool causal_top_left = false;
  bool fp8 = false;
  std::vector<std::pair<std::int64_t, float>> scale_values;
  // Paged K and V (decode): cuDNN reads them through the page tables, which it takes only with
  // a padding mask, hence the sequence-length tensors (every sequence full length here).
  bool paged = false;
  std::int64_t max_seq_len_kv = 0;
  const SdpaTensor& tensor(std::int64_t uid) const;  // throws std::out_of_range
};

// The mask the plan asks cuDNN for (the FLOP count's, attention_counts.hpp): top-left where
// causal_top_left (set_causal_mask), else bottom-right where causal_bottom_right, else none.
Mask plan_mask(const SdpaPlan& p);

// The forward (prefill, or decode with seq_q = 1; paged when page_size > 0): Q, K, V in, O and
// Stats out.
SdpaPlan sdpa_forward_plan(const Shape& s);
// The backward: Q, K, V, O, dO and Stats in; dQ, dK, dV out (contiguous K and V only).
SdpaPlan sdpa_backward_plan(const Shape& s);
// The fp8 (E4M3) forward of a prefill (contiguous K and V; throws std::invalid_argument when
// paged): Q, K, V and the six scale inputs (Descale_Q/K/V/S = 1 / the scale, Scale_S, Scale_O, as
// `scales` says) in; O, Stats, Amax_S and Amax_O out.
SdpaPlan sdpa_fp8_forward_plan(const Shape& s, const Fp8Scales& scales);

// Why cuDNN's fp8 forward cannot run a case, or nothing: the rules of the cuDNN frontend 1.32.0's
// support check (include/cudnn_frontend/node/sdpa_support_surface.h, the FP8 branch): Hopper
// (sm_90) or newer; head_dim a multiple of 16, up to 256 on Hopper and 128 on Blackwell (256 with
// cuDNN 9.26+); a bottom-right causal mask (seq_q != seq_kv) on Blackwell with cuDNN 9.7+ only;
// cuDNN 9.1.0 or newer, not 9.10.0. And what gpubench builds: the prefill forward (no backward,
// no decode over a paged cache). `cudnn_version` (cudnnGetVersion's) is checked when given: the
// plan knows the device, only the run knows the loaded library.
std::optional<std::string> fp8_forward_unsupported(int cc_major, int cc_minor, const Shape& s, bool decode,
                                                   bool backward, std::optional<std::size_t> cudnn_version);

}  // namespace gpubench::kernels::attention
