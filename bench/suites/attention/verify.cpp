// Verification of attention outputs against the double-precision naive kernels (attention.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "bench/suites/attention/attention.hpp"

namespace gpubench::suites::attention {
namespace {

namespace ka = kernels::attention;

// Compares `n` values of `got` with `want`: |got - want| <= tolerance * (|want| + rms(want)),
// the RMS making entries near zero (a random sum's) no stricter than the tensor's typical size.
// With `row` > 0 the RMS is each run of `row` values' own (a query row of O).
void compare(const char* name, const float* got, const std::vector<double>& want, double tolerance, Verification& v,
             std::size_t row = 0) {
  const std::size_t n = row > 0 ? row : want.size();
  std::vector<double> rms(want.empty() ? 0 : (want.size() + n - 1) / n);
  for (std::size_t r = 0; r < rms.size(); ++r) {
    double ss = 0;
    const std::size_t end = std::min(want.size(), (r + 1) * n);
    for (std::size_t i = r * n; i < end; ++i) ss += want[i] * want[i];
    rms[r] = std::sqrt(ss / static_cast<double>(end - r * n));
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = got[i], w = want[i], rms_i = rms[i / n];
    double err;
    if (std::isinf(w) && g == w) {
      err = 0;  // a query that sees no key: LSE -inf on both sides
    } else {
      err = std::abs(g - w) / (tolerance * (std::abs(w) + rms_i + 1e-30));
    }
    ++v.checked;
    if (!(err <= 1)) {
      if (v.passed) v.detail = fmt::format("{}[{}] = {:.9g}, reference {:.9g}", name, i, g, w);
      v.passed = false;
    }
    if (std::isfinite(err)) v.max_error = std::max(v.max_error, err);
    else v.max_error = INFINITY;
  }
}

std::vector<double> widen(const float* p, std::int64_t n) { return std::vector<double>(p, p + n); }

}  // namespace

std::vector<std::pair<std::int64_t, std::int64_t>> reference_units(std::int64_t batch, std::int64_t kv_heads,
                                                                   double work) {
  const std::int64_t n = batch * kv_heads;
  std::vector<std::pair<std::int64_t, std::int64_t>> units;
  auto add = [&](std::int64_t i) {
    const std::pair<std::int64_t, std::int64_t> u{i / kv_heads, i % kv_heads};
    if (std::find(units.begin(), units.end(), u) == units.end()) units.push_back(u);
  };
  if (n <= 0) return units;
  add(0);
  add(n - 1);
  // Evenly spread middle units, as many as the budget and the cap allow.
  std::size_t want = units.size();
  while (want < kMaxReferenceUnits && want < static_cast<std::size_t>(n) &&
         static_cast<double>(want + 1) * work <= kReferenceWorkBudget) {
    ++want;
  }
  const std::size_t middle = want - units.size();
  for (std::size_t m = 1; m <= middle; ++m) {
    add(static_cast<std::int64_t>(m) * (n - 1) / static_cast<std::int64_t>(middle + 1));
  }
  return units;
}

Verification verify_against_reference(const AttentionSpec& s, const float* q, const float* k, const float* v,
                                      const float* dout, const std::int32_t* page_table, const Outputs& got,
                                      double tolerance, bool o_row_rms) {
  const ka::Shape& sh = s.shape;
  const std::int64_t G = sh.group(), sq = sh.seq_q, skv = sh.seq_kv, d = sh.head_dim;
  const ka::Unit u{G, sq, skv, d, sh.causal};
  const bool fwd = s.direction != Direction::Backward, bwd = s.direction != Direction::Forward;
  Verification result;
  result.passed = true;
  const double work = 4.0 * static_cast<double>(G * sq) * static_cast<double>(skv * d) * (bwd ? 3.5 : 1.0);
  const std::vector<std::pair<std::int64_t, std::int64_t>> units = reference_units(sh.batch, sh.kv_heads, work);
  result.method = fmt::format("naive attention in double (OpenBLAS dgemm) on {} of {} (batch, KV head) units (the first, "
                              "the last and evenly spread ones within {:g} FLOPs): {}",
                              units.size(), sh.batch * sh.kv_heads, kReferenceWorkBudget,
                              bwd ? "dQ, dK, dV" : "O and LSE");
  for (const auto& [b, hk] : units) {
    const std::int64_t h0 = b * sh.heads + hk * G, qo = h0 * sq * d;
    const std::vector<double> qd = widen(q + qo, G * sq * d);
    // K and V of this unit as contiguous rows (gathered through the page table when paged).
    std::vector<double> kd(static_cast<std::size_t>(skv * d)), vd(kd.size());
    ka::KvRows<float> kr{k + (b * sh.kv_heads + hk) * skv * d, d, sh.kv_heads, hk, sh.page_size, nullptr}, vr = kr;
    vr.base = v + (b * sh.kv_heads + hk) * skv * d;
    if (sh.page_size > 0) {
      kr.base = k;
      vr.base = v;
      kr.table = vr.table = page_table + b * sh.pages_per_sequence();
    }
    for (std::int64_t t = 0; t < skv; ++t) {
      for (std::int64_t c = 0; c < d; ++c) {
        kd[static_cast<std::size_t>(t * d + c)] = kr.row(t)[c];
        vd[static_cast<std::size_t>(t * d + c)] = vr.row(t)[c];
      }
    }
    std::vector<double> od(qd.size()), lsed(static_cast<std::size_t>(G * sq));
    if (s.decode) {
      const ka::KvRows<double> kc{kd.data(), d, 1, 0, 0, nullptr}, vc{vd.data(), d, 1, 0, 0, nullptr};
      ka::decode_naive(u, qd.data(), kc, vc, od.data(), lsed.data());
    } else {
      ka::naive_forward(u, qd.data(), kd.data(), vd.data(), od.data(), lsed.data());
    }
    const std::string at = fmt::format(" (batch {}, KV head {})", b, hk);
    if (fwd) {
      compare(("O" + at).c_str(), got.o + qo, od, tolerance, result, o_row_rms ? static_cast<std::size_t>(d) : 0);
      compare(("LSE" + at).c_str(), got.lse + h0 * sq, lsed, tolerance, result);
    }
    if (bwd) {
      const std::vector<double> dod = widen(dout + qo, G * sq * d);
      std::vector<double> dqd(qd.size()), dkd(kd.size()), dvd(kd.size());
      ka::naive_backward(u, qd.data(), kd.data(), vd.data(), od.data(), lsed.data(), dod.data(), dqd.data(), dkd.data(),
                         dvd.data());
      const std::int64_t kvo = (b * sh.kv_heads + hk) * skv * d;
      compare(("dQ" + at).c_str(), got.dq + qo, dqd, tolerance, result);
      compare(("dK" + at).c_str(), got.dk + kvo, dkd, tolerance, result);
      compare(("dV" + at).c_str(), got.dv + kvo, dvd, tolerance, result);
    }
  }
  return result;
}

// fp16/bf16: the outputs are rounded to the element type (2^-9 relative for bf16, 2^-12 for fp16)
// after fp32 accumulation; the backward's gradients sum over a sequence first, so they get more
// room. fp8 (E4M3, 3 mantissa bits): cuDNN rounds twice, the probabilities P before the P.V
// product and O itself, each up to 2^-4 relative; the reference is exact attention on the
// dequantised inputs, so only those roundings and the accumulation differ. An emulation of those
// roundings with this project's E4M3 conversion (tests/unit/test_attention.cpp, and s 1k-8k by
// hand: worst 0.12 of |reference| + the row's RMS) is passed by 0.25 with room, while a wrong
// scale, head or mask is not.
double cudnn_tolerance(const std::string& dtype, bool backward) {
  if (dtype == "fp8-e4m3") return 0.25;
  return (dtype == "bf16" ? 2e-2 : 1e-2) * (backward ? 2.5 : 1.0);
}

}  // namespace gpubench::suites::attention
