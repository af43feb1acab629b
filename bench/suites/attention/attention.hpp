#pragma once
// The `attention` suite: scaled dot-product attention, prefill (forward, backward or both) and
// decode (one query token per sequence over a contiguous or paged KV cache). On the CPU the
// `flash` (tiled, online softmax) and `naive` (materialised scores) providers in fp32; every
// case is verified against a double-precision reference first. docs/suite-attention.md.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/core/case.hpp"
#include "bench/core/suite.hpp"
#include "kernels/attention/attention_host.hpp"

namespace gpubench::suites::attention {

enum class Direction { Forward, Backward, ForwardBackward };

struct AttentionSpec {
  std::string provider;  // cudnn | flash | naive
  std::string dtype;     // fp32 | fp16 | bf16 | fp8-e4m3
  bool decode = false;   // phase=decode: one query token per sequence, seq_q = 1
  Direction direction = Direction::Forward;
  kernels::attention::Shape shape;
  int threads = 0;  // CPU providers: 0 = every CPU this process may use
};

AttentionSpec spec_from(const Point& point);
std::string direction_name(Direction d);

// FLOPs of one run (prefill; FlashAttention's counting per admitted (query, key) pair,
// attention_counts.hpp), with the CPU kernels' mask (bottom-right when causal) or `mask` (the
// cuDNN graph's).
double run_flops(const AttentionSpec& s);
double run_flops(const AttentionSpec& s, kernels::attention::Mask mask);

// The input values (uniform, counter-based): Q scaled by kQueryGain so the softmax is not
// nearly flat (scores with a standard deviation near 1.3 at any head_dim), K, V and dO in [-1, 1).
inline constexpr float kQueryGain = 4.0f;
void fill_inputs(const AttentionSpec& s, float* q, float* k, float* v, float* dout);

// The (batch, KV head) units verify_against_reference checks, in order: the first and the last
// always (one unit only when there is one), then units spread evenly between them while the
// reference's work stays within kReferenceWorkBudget FLOPs in all, at most kMaxReferenceUnits.
// `work` is one unit's reference FLOPs. Pure, unit-tested.
inline constexpr double kReferenceWorkBudget = 8e9;
inline constexpr std::size_t kMaxReferenceUnits = 4;
std::vector<std::pair<std::int64_t, std::int64_t>> reference_units(std::int64_t batch, std::int64_t kv_heads,
                                                                   double work);

// Checks a case's outputs against kernels::attention's naive kernels in double on the
// reference_units (batch, KV head) units (each with all its query heads): forward O and
// LSE; backward dQ, dK and dV (from the reference's own forward). `q`, `k`, `v`, `dout` are the
// inputs (K and V as page pools with `page_table` when paged); `tolerance` is relative to
// |reference| + the unit's RMS of that tensor (with `o_row_rms`, O's against the RMS of each
// query row of O: fp8, whose rounding error scales with a row's own values, and a causal mask's
// first rows, which average few keys, hold larger values than the tensor's RMS).
struct Outputs {
  const float *o = nullptr, *lse = nullptr, *dq = nullptr, *dk = nullptr, *dv = nullptr;
};
Verification verify_against_reference(const AttentionSpec& s, const float* q, const float* k, const float* v,
                                      const float* dout, const std::int32_t* page_table, const Outputs& got,
                                      double tolerance, bool o_row_rms = false);

// The cudnn provider's tolerance for `dtype` (verify_against_reference's; docs/suite-attention.md):
// fp16 1e-2, bf16 2e-2 (x 2.5 for a backward's gradients); fp8-e4m3 forward 0.25 with O's row RMS.
double cudnn_tolerance(const std::string& dtype, bool backward);

std::unique_ptr<Case> make_cpu_case(const AttentionSpec& spec);

// The `cudnn` provider (attention_cudnn.cpp with the cuDNN frontend, else attention_cudnn_none.cpp):
// why it cannot run in this process (not built; libcudnn.so.9 not loadable), the loaded cuDNN's
// version, and its case (fp16/bf16 on a CUDA device).
bool cudnn_built();
std::optional<std::string> cudnn_unavailable();
std::string cudnn_version_text();
std::unique_ptr<Case> make_cudnn_case(const DeviceInfo& device, const AttentionSpec& spec);
std::unique_ptr<Suite> make_suite();

}  // namespace gpubench::suites::attention
