// Attention kernels (kernels/attention) and the suite's counting and verification
// (bench/suites/attention): the tiled kernel against the materialised one, both against a
// scalar reference written here, the backward against finite differences, decode over a
// scattered paged cache against the contiguous one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "bench/suites/attention/attention.hpp"
#include "kernels/attention/attention_host.hpp"
#include "kernels/attention/sdpa_plan.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/train/verify.hpp"
#include "kernels/common/float_formats.hpp"
#include "kernels/common/random.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench {
namespace {

namespace ka = kernels::attention;
namespace sa = suites::attention;

ka::Shape shape(std::int64_t b, std::int64_t h, std::int64_t hkv, std::int64_t sq, std::int64_t skv, std::int64_t d,
                bool causal, std::int64_t page = 0) {
  ka::Shape s;
  s.batch = b;
  s.heads = h;
  s.kv_heads = hkv;
  s.seq_q = sq;
  s.seq_kv = skv;
  s.head_dim = d;
  s.causal = causal;
  s.page_size = page;
  return s;
}

std::vector<float> random(std::int64_t n, std::uint64_t seed, float gain = 1.0f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = gain * kernels::uniform_value(seed, static_cast<std::uint64_t>(i));
  return v;
}

// The definition, one query at a time, in double: no BLAS, no tiles, no shared code.
struct Plain {
  std::vector<double> o, lse;
};
Plain plain_attention(const ka::Shape& s, const std::vector<float>& q, const std::vector<float>& k,
                      const std::vector<float>& v) {
  Plain r;
  r.o.assign(static_cast<std::size_t>(s.q_elements()), 0.0);
  r.lse.assign(static_cast<std::size_t>(s.lse_elements()), 0.0);
  const std::int64_t d = s.head_dim;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    for (std::int64_t h = 0; h < s.heads; ++h) {
      const std::int64_t hk = h / (s.heads / s.kv_heads);
      for (std::int64_t i = 0; i < s.seq_q; ++i) {
        const float* qi = &q[static_cast<std::size_t>(((b * s.heads + h) * s.seq_q + i) * d)];
        std::vector<double> score;
        for (std::int64_t j = 0; j < s.seq_kv; ++j) {
          if (s.causal && j > i + s.seq_kv - s.seq_q) break;
          const float* kj = &k[static_cast<std::size_t>(((b * s.kv_heads + hk) * s.seq_kv + j) * d)];
          double dot = 0;
          for (std::int64_t c = 0; c < d; ++c) dot += double(qi[c]) * kj[c];
          score.push_back(dot / std::sqrt(double(d)));
        }
        const std::size_t row = static_cast<std::size_t>((b * s.heads + h) * s.seq_q + i);
        if (score.empty()) {
          r.lse[row] = -std::numeric_limits<double>::infinity();
          continue;
        }
        double m = score[0], sum = 0;
        for (double x : score) m = std::max(m, x);
        for (double x : score) sum += std::exp(x - m);
        r.lse[row] = m + std::log(sum);
        for (std::size_t j = 0; j < score.size(); ++j) {
          const float* vj = &v[static_cast<std::size_t>(((b * s.kv_heads + hk) * s.seq_kv + std::int64_t(j)) * d)];
          for (std::int64_t c = 0; c < d; ++c) r.o[row * std::size_t(d) + std::size_t(c)] += std::exp(score[j] - m) / sum * vj[c];
        }
      }
    }
  }
  return r;
}

ka::Parallel serial() {
  return [](int n, const std::function<void(int)>& f) {
    for (int t = 0; t < n; ++t) f(t);
  };
}

// Runs f(t) on n real threads: the drivers' units must not share what they write.
ka::Parallel threaded() {
  return [](int n, const std::function<void(int)>& f) {
    std::vector<std::thread> ts;
    for (int t = 1; t < n; ++t) ts.emplace_back(f, t);
    f(0);
    for (auto& t : ts) t.join();
  };
}

template <class A, class B>
double max_rel(const A& got, const B& want) {
  double scale = 0, worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) scale = std::max(scale, std::abs(double(want[i])));
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(double(want[i])) && double(got[i]) == double(want[i])) continue;
    worst = std::max(worst, std::abs(double(got[i]) - double(want[i])) / (scale + 1e-30));
  }
  return worst;
}

struct Outs {
  std::vector<float> o, lse, dq, dk, dv;
};
Outs run(ka::Algorithm a, const ka::Shape& s, const std::vector<float>& q, const std::vector<float>& k,
        const std::vector<float>& v, const std::vector<float>& dout, int threads = 1) {
  Outs r;
  r.o.resize(q.size());
  r.lse.resize(static_cast<std::size_t>(s.lse_elements()));
  r.dq.resize(q.size());
  r.dk.resize(k.size());
  r.dv.resize(k.size());
  ka::Tensors t{q.data(), k.data(), v.data(), dout.data(), r.o.data(), r.lse.data(), r.dq.data(), r.dk.data(), r.dv.data(), nullptr};
  const ka::Parallel p = threads > 1 ? threaded() : serial();
  ka::forward(a, s, t, threads, p);
  ka::backward(a, s, t, threads, p);
  return r;
}

// ---- counting ----

// Verification's units: the first and the last always (a long fp8 forward, whose reference
// is over the budget, is still checked on two units of its 32), more spread between them within
// the budget, never one twice.
TEST(AttentionVerify, ReferenceUnitsAreFirstLastAndSpreadWithinTheBudget) {
  using suites::attention::kMaxReferenceUnits;
  using suites::attention::kReferenceWorkBudget;
  using suites::attention::reference_units;
  using U = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(reference_units(1, 1, 1e12), (U{{0, 0}}));
  EXPECT_EQ(reference_units(4, 8, 3.4e10), (U{{0, 0}, {3, 7}}));  // b 4, 8 KV heads, s 8192 hd 128
  EXPECT_EQ(reference_units(4, 8, 1e6), (U{{0, 0}, {3, 7}, {1, 2}, {2, 4}}));
  EXPECT_EQ(reference_units(1, 3, 1e6), (U{{0, 0}, {0, 2}, {0, 1}}));
  EXPECT_EQ(reference_units(2, 1, 1e6), (U{{0, 0}, {1, 0}}));
  EXPECT_EQ(reference_units(4, 8, kReferenceWorkBudget / 3.5).size(), 3u);
  for (std::int64_t b = 1; b <= 5; ++b) {
    for (std::int64_t h = 1; h <= 9; ++h) {
      for (const double w : {1e3, 1e9, 3e9, 1e11}) {
        const U u = reference_units(b, h, w);
        ASSERT_GE(u.size(), std::min<std::size_t>(2, static_cast<std::size_t>(b * h)));
        ASSERT_LE(u.size(), kMaxReferenceUnits);
        const std::set<std::pair<std::int64_t, std::int64_t>> distinct(u.begin(), u.end());
        ASSERT_EQ(distinct.size(), u.size());
        for (const auto& [ub, uh] : u) {
          ASSERT_TRUE(ub >= 0 && ub < b && uh >= 0 && uh < h);
        }
        if (u.size() > 2) {
          ASSERT_LE(static_cast<double>(u.size()) * w, kReferenceWorkBudget);
        }
      }
    }
  }
}

TEST(AttentionCounts, FlopsAsFlashAttentionCountsThem) {
  // 2 * b * h * sq * skv * (d + d_v): b=2, h=4, s=128, d=64 -> 2*2*4*128*128*128 = 33,554,432.
  const ka::Shape s = shape(2, 4, 4, 128, 128, 64, false);
  EXPECT_DOUBLE_EQ(ka::forward_flops(s), 33554432.0);
  EXPECT_DOUBLE_EQ(ka::backward_flops(s), 2.5 * 33554432.0);
  // Causal, seq_q = seq_kv: 128 * 129 / 2 = 8256 of the 16384 pairs (a little over half).
  EXPECT_DOUBLE_EQ(ka::forward_flops(shape(2, 4, 4, 128, 128, 64, true)), 33554432.0 * 8256 / 16384);
  // Grouped-query heads do the same arithmetic as full heads.
  EXPECT_DOUBLE_EQ(ka::forward_flops(shape(2, 4, 1, 128, 128, 64, false)), 33554432.0);
  sa::AttentionSpec spec;
  spec.shape = s;
  spec.direction = sa::Direction::ForwardBackward;
  EXPECT_DOUBLE_EQ(sa::run_flops(spec), 3.5 * 33554432.0);
}

TEST(AttentionCounts, DecodeBytesAreTheCacheReadOnceAndQueryAndOutput) {
  // b=16, kv_heads 8, 4096 tokens, d 128, 2-byte values: K and V 2*16*8*4096*128*2 = 268,435,456;
  // Q and O 2*16*32*1*128*2 = 262,144; the page table 16 * 256 pages * 4 B = 16,384.
  const ka::Shape s = shape(16, 32, 8, 1, 4096, 128, false, 16);
  EXPECT_DOUBLE_EQ(ka::decode_bytes(s, 2), 268435456.0 + 262144.0 + 16384.0);
  EXPECT_DOUBLE_EQ(ka::decode_bytes(shape(16, 32, 8, 1, 4096, 128, false, 0), 2), 268435456.0 + 262144.0);
}

TEST(AttentionCounts, CausalMaskIsAlignedBottomRight) {
  const ka::Shape square = shape(1, 1, 1, 4, 4, 8, true);
  EXPECT_EQ(square.visible_keys(0), 1);
  EXPECT_EQ(square.visible_keys(3), 4);
  const ka::Shape longer_kv = shape(1, 1, 1, 2, 6, 8, true);  // the 2 queries are the last 2 of 6
  EXPECT_EQ(longer_kv.visible_keys(0), 5);
  EXPECT_EQ(longer_kv.visible_keys(1), 6);
  const ka::Shape longer_q = shape(1, 1, 1, 6, 2, 8, true);  // the first 4 queries see nothing
  EXPECT_EQ(longer_q.visible_keys(3), 0);
  EXPECT_EQ(longer_q.visible_keys(4), 1);
  EXPECT_EQ(shape(1, 1, 1, 6, 2, 8, false).visible_keys(0), 2);
}

// The mask written out here, independently of the library's: does query i see key j?
bool admits(ka::Mask m, std::int64_t i, std::int64_t j, std::int64_t sq, std::int64_t skv) {
  switch (m) {
    case ka::Mask::None: return true;
    case ka::Mask::CausalBottomRight: return j - i <= skv - sq;  // the last query sees the last key
    case ka::Mask::CausalTopLeft: return j <= i;                 // the first query sees the first key
  }
  return false;
}

std::int64_t brute_force_pairs(ka::Mask m, std::int64_t sq, std::int64_t skv) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < sq; ++i)
    for (std::int64_t j = 0; j < skv; ++j) n += admits(m, i, j, sq, skv) ? 1 : 0;
  return n;
}

TEST(AttentionCounts, AdmittedPairsEqualABruteForceCountOverUnevenShapes) {
  const std::vector<std::int64_t> lengths = {1, 2, 3, 5, 7, 8, 16, 31, 64, 100, 127, 128, 129, 257, 512, 600};
  int shapes = 0;
  for (std::int64_t sq : lengths) {
    for (std::int64_t skv : lengths) {
      for (ka::Mask m : {ka::Mask::None, ka::Mask::CausalBottomRight, ka::Mask::CausalTopLeft}) {
        const std::int64_t expected = brute_force_pairs(m, sq, skv);
        ASSERT_EQ(ka::admitted_pairs(sq, skv, m), expected) << "sq " << sq << " skv " << skv << " mask " << int(m);
        std::int64_t by_rows = 0;  // the per-row count the kernels use agrees with the total
        for (std::int64_t i = 0; i < sq; ++i) {
          std::int64_t row = 0;
          for (std::int64_t j = 0; j < skv; ++j) row += admits(m, i, j, sq, skv) ? 1 : 0;
          ASSERT_EQ(ka::visible_keys(i, sq, skv, m), row) << "sq " << sq << " skv " << skv << " row " << i;
          by_rows += ka::visible_keys(i, sq, skv, m);
        }
        ASSERT_EQ(by_rows, expected);
        ++shapes;
      }
      // The kernels' Shape: causal is the bottom-right mask, and its FLOPs follow the pairs.
      for (bool causal : {false, true}) {
        const ka::Shape sh = shape(2, 3, 1, sq, skv, 16, causal);
        const std::int64_t pairs = brute_force_pairs(causal ? ka::Mask::CausalBottomRight : ka::Mask::None, sq, skv);
        for (std::int64_t i = 0; i < sq; ++i) ASSERT_EQ(sh.visible_keys(i), ka::visible_keys(i, sq, skv, sh.mask()));
        ASSERT_DOUBLE_EQ(ka::forward_flops(sh), 2.0 * (16 + 16) * double(pairs) * 2 * 3) << sq << " " << skv;
        ASSERT_DOUBLE_EQ(ka::backward_flops(sh), 2.5 * ka::forward_flops(sh));
      }
    }
  }
  EXPECT_EQ(shapes, 16 * 16 * 3);
  // The same mask when seq_q == seq_kv, different otherwise.
  EXPECT_EQ(ka::admitted_pairs(77, 77, ka::Mask::CausalTopLeft), ka::admitted_pairs(77, 77, ka::Mask::CausalBottomRight));
  EXPECT_LT(ka::admitted_pairs(3, 5, ka::Mask::CausalTopLeft), ka::admitted_pairs(3, 5, ka::Mask::CausalBottomRight));
  EXPECT_GT(ka::admitted_pairs(5, 3, ka::Mask::CausalTopLeft), ka::admitted_pairs(5, 3, ka::Mask::CausalBottomRight));
  EXPECT_EQ(ka::admitted_pairs(0, 5, ka::Mask::None), 0);
  EXPECT_EQ(ka::admitted_pairs(5, 0, ka::Mask::CausalBottomRight), 0);
}

// The two shapes checked by hand in docs/suite-attention.md.
TEST(AttentionCounts, UnevenCausalShapesCheckedByHand) {
  // seq_q 4096 over seq_kv 512 (b 1, h 8, d 64): queries 0..3583 see no key, query 3584 + k
  // sees k + 1: 512 * 513 / 2 = 131,328 pairs; forward 2 * 128 * 131,328 * 8 = 268,959,744.
  const ka::Shape longer_q = shape(1, 8, 8, 4096, 512, 64, true);
  EXPECT_EQ(ka::admitted_pairs(4096, 512, longer_q.mask()), 131328);
  EXPECT_DOUBLE_EQ(ka::forward_flops(longer_q), 268959744.0);
  // Non-causal: 2 * 128 * 4096 * 512 * 8 = 4,294,967,296; the old "half of it" (2,147,483,648)
  // was 7.98 times the real work.
  EXPECT_DOUBLE_EQ(ka::forward_flops(shape(1, 8, 8, 4096, 512, 64, false)), 4294967296.0);
  // seq_q 512 over seq_kv 4096 (a chunk of 512 new tokens after 3584 cached): query i sees
  // 3584 + i + 1 keys: 512 * 3584 + 512 * 513 / 2 = 1,835,008 + 131,328 = 1,966,336 pairs,
  // 93.8% of the 2,097,152 (the old half undercounted it 1.88 times); forward 4,027,056,128.
  const ka::Shape longer_kv = shape(1, 8, 8, 512, 4096, 64, true);
  EXPECT_EQ(ka::admitted_pairs(512, 4096, longer_kv.mask()), 1966336);
  EXPECT_DOUBLE_EQ(ka::forward_flops(longer_kv), 4027056128.0);
  EXPECT_DOUBLE_EQ(ka::backward_flops(longer_kv), 2.5 * 4027056128.0);
}

TEST(AttentionCounts, DecodeIsOneQueryOverEveryCachedKey) {
  for (std::int64_t skv : {1, 7, 512, 4096}) {
    for (bool causal : {false, true}) {  // the one query is the last position: the mask admits all
      const ka::Shape s = shape(16, 32, 8, 1, skv, 128, causal);
      EXPECT_EQ(ka::admitted_pairs(1, skv, s.mask()), skv);
      EXPECT_DOUBLE_EQ(ka::forward_flops(s), ka::attention_decode_flops(16 * 32, skv, 128, 128));
    }
  }
  EXPECT_DOUBLE_EQ(ka::attention_decode_flops(16 * 32, 4096, 128, 128), 2.0 * 256 * 4096 * 16 * 32);
}

// The cuDNN provider counts the mask of the graph it builds: top-left for the fp8 forward at
// seq_q == seq_kv (the same pairs), bottom-right otherwise.
TEST(AttentionCounts, TheCudnnPlansMaskIsTheOneCounted) {
  const ka::Shape square = shape(1, 2, 2, 64, 64, 64, true);
  const ka::SdpaPlan fp8 = ka::sdpa_fp8_forward_plan(square, ka::fp8_scales(4, 1, 1));
  EXPECT_EQ(ka::plan_mask(fp8), ka::Mask::CausalTopLeft);
  EXPECT_DOUBLE_EQ(ka::forward_flops(square, ka::plan_mask(fp8)), ka::forward_flops(square));
  const ka::Shape uneven = shape(1, 2, 2, 256, 64, 64, true);
  EXPECT_EQ(ka::plan_mask(ka::sdpa_forward_plan(uneven)), ka::Mask::CausalBottomRight);
  EXPECT_EQ(ka::plan_mask(ka::sdpa_backward_plan(uneven)), ka::Mask::CausalBottomRight);
  EXPECT_EQ(ka::plan_mask(ka::sdpa_forward_plan(shape(1, 2, 2, 256, 64, 64, false))), ka::Mask::None);
  sa::AttentionSpec spec;
  spec.shape = uneven;
  spec.direction = sa::Direction::Forward;
  EXPECT_DOUBLE_EQ(sa::run_flops(spec, ka::plan_mask(ka::sdpa_forward_plan(uneven))), sa::run_flops(spec));
  EXPECT_DOUBLE_EQ(sa::run_flops(spec), 2.0 * 128 * (64 * 65 / 2) * 2);
}

TEST(AttentionKernels, FastExpMatchesStdExp) {
  std::vector<float> x;
  for (int i = 0; i <= 200000; ++i) x.push_back(-80.0f * float(i) / 200000.0f);
  std::vector<float> y = x;
  ka::exp_nonpositive(y.data(), static_cast<std::int64_t>(y.size()));
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(y[i] / std::exp(double(x[i])) - 1));
  EXPECT_LT(worst, 3e-7);
}

// ---- forward against the definition ----

struct ForwardCase {
  ka::Shape s;
  const char* what;
};

TEST(AttentionKernels, NaiveAndFlashForwardMatchTheDefinition) {
  const std::vector<ForwardCase> cases = {
      {shape(2, 4, 4, ka::kTileQ + 6, 2 * ka::kTileKv + 8, 16, false), "tile edges (a partial query tile, a partial key tile)"},
      {shape(2, 4, 4, 2 * ka::kTileQ + 3, 2 * ka::kTileQ + 3, 32, true), "causal, square, tiles crossing the diagonal"},
      {shape(1, 6, 2, 65, ka::kTileKv + 44, 8, true), "causal, GQA 3:1, seq_kv > seq_q"},
      {shape(1, 2, 1, ka::kTileQ + 22, 40, 8, true), "causal, seq_q > seq_kv: early queries see nothing"},
      {shape(1, 2, 2, 3, 2 * ka::kTileKv + 1, 64, false), "few queries, keys one past two tiles"},
  };
  for (const ForwardCase& c : cases) {
    const auto q = random(c.s.q_elements(), 1, 4.0f), k = random(c.s.kv_elements(), 2), v = random(c.s.kv_elements(), 3);
    const auto dout = random(c.s.q_elements(), 4);
    const Plain want = plain_attention(c.s, q, k, v);
    for (ka::Algorithm a : {ka::Algorithm::Naive, ka::Algorithm::Flash}) {
      const Outs got = run(a, c.s, q, k, v, dout, a == ka::Algorithm::Flash ? 3 : 2);
      EXPECT_LT(max_rel(got.o, want.o), 2e-6) << c.what << (a == ka::Algorithm::Flash ? " flash" : " naive");
      EXPECT_LT(max_rel(got.lse, want.lse), 2e-6) << c.what;
    }
  }
}

// A query that sees no key outputs zeros with LSE -inf, and no gradient flows through it.
TEST(AttentionKernels, AQueryThatSeesNoKeyOutputsZero) {
  const ka::Shape s = shape(1, 1, 1, 6, 2, 4, true);
  const auto q = random(s.q_elements(), 1), k = random(s.kv_elements(), 2), v = random(s.kv_elements(), 3);
  const auto dout = random(s.q_elements(), 4);
  for (ka::Algorithm a : {ka::Algorithm::Naive, ka::Algorithm::Flash}) {
    const Outs r = run(a, s, q, k, v, dout);
    for (int i = 0; i < 4; ++i) {
      EXPECT_TRUE(std::isinf(r.lse[std::size_t(i)]) && r.lse[std::size_t(i)] < 0);
      for (int c = 0; c < 4; ++c) {
        EXPECT_EQ(r.o[std::size_t(i * 4 + c)], 0.0f);
        EXPECT_EQ(r.dq[std::size_t(i * 4 + c)], 0.0f);
      }
    }
    EXPECT_NE(r.o[4 * 4], 0.0f);
  }
}

// ---- backward ----

// The materialised backward in double against central differences of L = sum(dO o O): checks
// the formulas (dS = P o (dP - D), the scale, the GQA sums) independently of both kernels.
TEST(AttentionKernels, NaiveBackwardMatchesFiniteDifferences) {
  const ka::Shape s = shape(1, 4, 2, 5, 7, 4, true);  // GQA 2:1, causal, seq_kv > seq_q
  const ka::Unit u{s.group(), s.seq_q, s.seq_kv, s.head_dim, s.causal};
  auto widen = [](const std::vector<float>& f) { return std::vector<double>(f.begin(), f.end()); };
  // One unit (KV head 1 with query heads 2 and 3).
  std::vector<double> q = widen(random(u.group * s.seq_q * s.head_dim, 1, 2.0f));
  std::vector<double> k = widen(random(s.seq_kv * s.head_dim, 2)), v = widen(random(s.seq_kv * s.head_dim, 3));
  const std::vector<double> dout = widen(random(u.group * s.seq_q * s.head_dim, 4));
  auto loss = [&]() {
    std::vector<double> o(q.size()), lse(std::size_t(u.group * s.seq_q));
    ka::naive_forward(u, q.data(), k.data(), v.data(), o.data(), lse.data());
    double l = 0;
    for (std::size_t i = 0; i < o.size(); ++i) l += o[i] * dout[i];
    return l;
  };
  std::vector<double> o(q.size()), lse(std::size_t(u.group * s.seq_q)), dq(q.size()), dk(k.size()), dv(v.size());
  ka::naive_forward(u, q.data(), k.data(), v.data(), o.data(), lse.data());
  ka::naive_backward(u, q.data(), k.data(), v.data(), o.data(), lse.data(), dout.data(), dq.data(), dk.data(), dv.data());
  const double h = 1e-6;
  auto check = [&](std::vector<double>& x, const std::vector<double>& grad, const char* name) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double keep = x[i];
      x[i] = keep + h;
      const double up = loss();
      x[i] = keep - h;
      const double down = loss();
      x[i] = keep;
      EXPECT_NEAR(grad[i], (up - down) / (2 * h), 1e-7) << name << "[" << i << "]";
    }
  };
  check(q, dq, "dQ");
  check(k, dk, "dK");
  check(v, dv, "dV");
}

TEST(AttentionKernels, FlashBackwardMatchesNaive) {
  const std::vector<ForwardCase> cases = {
      {shape(2, 4, 4, ka::kTileQ + 6, 2 * ka::kTileKv + 8, 16, false), "tile edges"},
      {shape(1, 6, 2, 2 * ka::kTileQ + 9, 2 * ka::kTileQ + 9, 16, true), "causal, GQA 3:1, tiles crossing the diagonal"},
      {shape(1, 2, 1, ka::kTileQ + 22, 40, 8, true), "causal, seq_q > seq_kv"},
      {shape(2, 2, 2, ka::kTileQ + 1, ka::kTileKv + 44, 32, true), "causal, seq_kv > seq_q"},
  };
  for (const ForwardCase& c : cases) {
    const auto q = random(c.s.q_elements(), 1, 4.0f), k = random(c.s.kv_elements(), 2), v = random(c.s.kv_elements(), 3);
    const auto dout = random(c.s.q_elements(), 4);
    const Outs naive = run(ka::Algorithm::Naive, c.s, q, k, v, dout, 2);
    const Outs flash = run(ka::Algorithm::Flash, c.s, q, k, v, dout, 3);
    EXPECT_LT(max_rel(flash.dq, naive.dq), 1e-5) << c.what;
    EXPECT_LT(max_rel(flash.dk, naive.dk), 1e-5) << c.what;
    EXPECT_LT(max_rel(flash.dv, naive.dv), 1e-5) << c.what;
  }
}

// ---- decode ----

TEST(AttentionKernels, DecodeOverAScatteredPagedCacheMatchesTheContiguousOne) {
  const ka::Shape paged = shape(3, 8, 2, 1, 96, 16, false, 16);
  ka::Shape flat = paged;
  flat.page_size = 0;
  const auto q = random(paged.q_elements(), 1, 4.0f), k = random(flat.kv_elements(), 2), v = random(flat.kv_elements(), 3);
  const std::vector<std::int32_t> table = ka::scattered_page_table(paged, 7);
  const std::set<std::int32_t> distinct(table.begin(), table.end());
  ASSERT_EQ(distinct.size(), table.size());  // a permutation of the pool's pages
  ASSERT_EQ(*distinct.rbegin(), static_cast<std::int32_t>(table.size()) - 1);
  bool moved = false;
  for (std::size_t i = 0; i < table.size(); ++i) moved |= table[i] != static_cast<std::int32_t>(i);
  ASSERT_TRUE(moved);
  // The same tokens stored page by page at the places the table names.
  std::vector<float> kp(k.size()), vp(v.size());
  const std::int64_t d = paged.head_dim, pps = paged.pages_per_sequence();
  for (std::int64_t b = 0; b < paged.batch; ++b)
    for (std::int64_t hk = 0; hk < paged.kv_heads; ++hk)
      for (std::int64_t t = 0; t < paged.seq_kv; ++t)
        for (std::int64_t c = 0; c < d; ++c) {
          const std::int64_t page = table[std::size_t(b * pps + t / 16)];
          const auto to = std::size_t(((page * paged.kv_heads + hk) * 16 + t % 16) * d + c);
          const auto from = std::size_t(((b * paged.kv_heads + hk) * paged.seq_kv + t) * d + c);
          kp[to] = k[from];
          vp[to] = v[from];
        }
  const Plain want = plain_attention(flat, q, k, v);
  for (ka::Algorithm a : {ka::Algorithm::Naive, ka::Algorithm::Flash}) {
    for (bool use_pages : {false, true}) {
      std::vector<float> o(q.size()), lse(std::size_t(paged.lse_elements()));
      ka::Tensors t;
      t.q = q.data();
      t.k = use_pages ? kp.data() : k.data();
      t.v = use_pages ? vp.data() : v.data();
      t.o = o.data();
      t.lse = lse.data();
      t.page_table = table.data();
      ka::decode(a, use_pages ? paged : flat, t, 2, threaded());
      EXPECT_LT(max_rel(o, want.o), 2e-6) << (use_pages ? "paged" : "contiguous");
      EXPECT_LT(max_rel(lse, want.lse), 2e-6);
    }
  }
}

// ---- the suite's verification ----

TEST(AttentionVerify, AcceptsACorrectAnswerAndNamesTheFirstWrongEntry) {
  sa::AttentionSpec spec;
  spec.shape = shape(2, 4, 2, 40, 40, 8, true);
  spec.direction = sa::Direction::ForwardBackward;
  const ka::Shape& s = spec.shape;
  std::vector<float> q(std::size_t(s.q_elements())), k(std::size_t(s.kv_elements())), v(k.size()), dout(q.size());
  sa::fill_inputs(spec, q.data(), k.data(), v.data(), dout.data());
  Outs r = run(ka::Algorithm::Flash, s, q, k, v, dout);
  auto verify = [&]() {
    return sa::verify_against_reference(spec, q.data(), k.data(), v.data(), dout.data(), nullptr,
                                        sa::Outputs{r.o.data(), r.lse.data(), r.dq.data(), r.dk.data(), r.dv.data()},
                                        1e-4);
  };
  const Verification ok = verify();
  EXPECT_TRUE(ok.passed) << ok.detail;
  EXPECT_GT(ok.checked, 0);
  EXPECT_LT(ok.max_error, 0.5);
  // The last unit (batch 1, KV head 1) owns query heads 6 and 7: break one of dK's entries there.
  r.dk[r.dk.size() - 3] += 0.5f;
  const Verification bad = verify();
  EXPECT_FALSE(bad.passed);
  EXPECT_NE(bad.detail.find("dK"), std::string::npos) << bad.detail;
  EXPECT_NE(bad.detail.find("batch 1, KV head 1"), std::string::npos) << bad.detail;
  // A NaN fails too.
  r.dk[r.dk.size() - 3] -= 0.5f;
  r.o[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(verify().passed);
}

// ---- the cuDNN graph as data (sdpa_plan.hpp) ----

std::vector<std::int64_t> v64(std::initializer_list<std::int64_t> l) { return l; }

TEST(SdpaPlan, ForwardTensorsAreTheCpuLayoutsWithFixedUids) {
  const ka::Shape s = shape(2, 16, 4, 512, 1024, 128, true);
  const ka::SdpaPlan p = ka::sdpa_forward_plan(s);
  EXPECT_FALSE(p.backward);
  EXPECT_FALSE(p.paged);
  EXPECT_TRUE(p.causal_bottom_right);
  EXPECT_FLOAT_EQ(p.attn_scale, 1.0f / std::sqrt(128.0f));
  const ka::SdpaTensor& q = p.tensor(ka::kUidQ);
  EXPECT_EQ(q.dim, v64({2, 16, 512, 128}));
  EXPECT_EQ(q.stride, v64({16 * 512 * 128, 512 * 128, 128, 1}));
  const ka::SdpaTensor& k = p.tensor(ka::kUidK);  // grouped-query: 4 KV heads
  EXPECT_EQ(k.dim, v64({2, 4, 1024, 128}));
  EXPECT_EQ(k.stride, v64({4 * 1024 * 128, 1024 * 128, 128, 1}));
  EXPECT_EQ(k.elements(), s.kv_elements());
  EXPECT_EQ(p.tensor(ka::kUidV).dim, k.dim);
  EXPECT_EQ(p.tensor(ka::kUidO).dim, q.dim);
  const ka::SdpaTensor& stats = p.tensor(ka::kUidStats);
  EXPECT_EQ(stats.dim, v64({2, 16, 512, 1}));
  EXPECT_EQ(stats.kind, ka::SdpaTensorKind::Float);
  EXPECT_EQ(stats.elements(), s.lse_elements());
  EXPECT_EQ(p.inputs.size(), 3u);
  EXPECT_EQ(p.outputs.size(), 2u);
  EXPECT_THROW((void)p.tensor(ka::kUidDQ), std::out_of_range);
  // Every UID once.
  std::set<std::int64_t> uids;
  for (const auto* list : {&p.inputs, &p.outputs})
    for (const auto& t : *list) EXPECT_TRUE(uids.insert(t.uid).second) << t.name;
}

TEST(SdpaPlan, BackwardReadsTheForwardsOutputsAndWritesTheGradients) {
  const ka::Shape s = shape(1, 8, 2, 256, 256, 64, false);
  const ka::SdpaPlan p = ka::sdpa_backward_plan(s);
  EXPECT_TRUE(p.backward);
  std::set<std::int64_t> in, out;
  for (const auto& t : p.inputs) in.insert(t.uid);
  for (const auto& t : p.outputs) out.insert(t.uid);
  EXPECT_EQ(in, (std::set<std::int64_t>{ka::kUidQ, ka::kUidK, ka::kUidV, ka::kUidO, ka::kUidDO, ka::kUidStats}));
  EXPECT_EQ(out, (std::set<std::int64_t>{ka::kUidDQ, ka::kUidDK, ka::kUidDV}));
  EXPECT_EQ(p.tensor(ka::kUidDK).dim, v64({1, 2, 256, 64}));
  EXPECT_EQ(p.tensor(ka::kUidDQ).dim, v64({1, 8, 256, 64}));
  EXPECT_THROW((void)ka::sdpa_backward_plan(shape(1, 8, 2, 1, 256, 64, false, 16)), std::invalid_argument);
}

// The paged cache cuDNN reads is the CPU decode's: container [pages][kv_heads][page][d] and a
// [batch][1][pages per sequence][1] int32 table, so the address cuDNN computes for token t of
// sequence b (table[b][t / page] * stride0 + h * stride1 + (t % page) * stride2) is KvRows::row's.
TEST(SdpaPlan, PagedDecodeLayoutIsTheCpuPagePool) {
  const ka::Shape s = shape(3, 8, 2, 1, 96, 16, false, 16);
  const ka::SdpaPlan p = ka::sdpa_forward_plan(s);
  ASSERT_TRUE(p.paged);
  EXPECT_EQ(p.max_seq_len_kv, 96);
  const ka::SdpaTensor& k = p.tensor(ka::kUidK);
  EXPECT_EQ(k.dim, v64({3 * 6, 2, 16, 16}));
  EXPECT_EQ(k.elements(), s.kv_elements());  // the pool holds exactly the cache
  const ka::SdpaTensor& table = p.tensor(ka::kUidPageTableK);
  EXPECT_EQ(table.dim, v64({3, 1, 6, 1}));
  EXPECT_EQ(table.stride, v64({6, 6, 1, 1}));
  EXPECT_EQ(table.kind, ka::SdpaTensorKind::Int32);
  EXPECT_EQ(p.tensor(ka::kUidPageTableV).dim, table.dim);
  EXPECT_EQ(p.tensor(ka::kUidSeqKv).dim, v64({3, 1, 1, 1}));
  const std::vector<std::int32_t> pages = ka::scattered_page_table(s, 7);
  std::vector<float> pool(static_cast<std::size_t>(s.kv_elements()));
  for (std::int64_t b = 0; b < 3; ++b) {
    for (std::int64_t h = 0; h < 2; ++h) {
      const ka::KvRows<float> rows{pool.data(), 16, 2, h, 16, pages.data() + b * 6};
      for (std::int64_t t : {0, 15, 16, 95}) {
        const std::int64_t page = pages[static_cast<std::size_t>(b * table.stride[0] + (t / 16) * table.stride[2])];
        const std::int64_t at = page * k.stride[0] + h * k.stride[1] + (t % 16) * k.stride[2];
        EXPECT_EQ(rows.row(t), pool.data() + at) << "b " << b << " h " << h << " t " << t;
      }
    }
  }
}

// ---- fp8 (E4M3) forward: scales, the graph, the support rules, the tolerance ----

TEST(SdpaFp8, ScalesArePowersOfTwoThatFitE4M3) {
  EXPECT_EQ(ka::fp8_e4m3_scale(1.0), 256.0f);  // 448 / 1 -> 2^8
  EXPECT_EQ(ka::fp8_e4m3_scale(4.0), 64.0f);   // Q's range in the suite's inputs
  EXPECT_EQ(ka::fp8_e4m3_scale(448.0), 1.0f);
  EXPECT_EQ(ka::fp8_e4m3_scale(449.0), 0.5f);
  EXPECT_EQ(ka::fp8_e4m3_scale(1.75), 256.0f);  // 1.75 x 256 = 448 exactly: fits
  EXPECT_EQ(ka::fp8_e4m3_scale(1e-3), 262144.0f);
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    EXPECT_THROW((void)ka::fp8_e4m3_scale(bad), std::invalid_argument) << bad;
  const ka::Fp8Scales f = ka::fp8_scales(4.0, 1.0, 0.5);
  EXPECT_EQ(f.q, 64.0f);
  EXPECT_EQ(f.k, 256.0f);
  EXPECT_EQ(f.v, 512.0f);
  EXPECT_EQ(f.o, f.v);  // |O| <= max |V|
  EXPECT_EQ(f.s, 256.0f);
}

TEST(SdpaFp8, ForwardPlanAddsTheScaleInputsAndAmaxOutputs) {
  const ka::Shape s = shape(2, 16, 4, 512, 512, 128, true);
  const ka::Fp8Scales f = ka::fp8_scales(4.0, 1.0, 1.0);
  const ka::SdpaPlan p = ka::sdpa_fp8_forward_plan(s, f);
  EXPECT_TRUE(p.fp8);
  EXPECT_FALSE(p.backward);
  // seq_q == seq_kv: the top-left mask, which is the bottom-right one at equal lengths.
  EXPECT_TRUE(p.causal_top_left);
  EXPECT_FALSE(p.causal_bottom_right);
  // Q, K, V, O as the fp16/bf16 graph's (dense [b][h][s][d], GQA from K's heads), in E4M3.
  const ka::SdpaPlan plain = ka::sdpa_forward_plan(s);
  for (std::int64_t uid : {ka::kUidQ, ka::kUidK, ka::kUidV, ka::kUidO, ka::kUidStats}) {
    EXPECT_EQ(p.tensor(uid).dim, plain.tensor(uid).dim) << uid;
    EXPECT_EQ(p.tensor(uid).stride, plain.tensor(uid).stride) << uid;
    EXPECT_EQ(p.tensor(uid).kind, plain.tensor(uid).kind) << uid;
  }
  std::set<std::int64_t> in, out, all;
  for (const auto& t : p.inputs) in.insert(t.uid);
  for (const auto& t : p.outputs) out.insert(t.uid);
  EXPECT_EQ(in, (std::set<std::int64_t>{ka::kUidQ, ka::kUidK, ka::kUidV, ka::kUidDescaleQ, ka::kUidDescaleK,
                                        ka::kUidDescaleV, ka::kUidDescaleS, ka::kUidScaleS, ka::kUidScaleO}));
  EXPECT_EQ(out, (std::set<std::int64_t>{ka::kUidO, ka::kUidStats, ka::kUidAmaxS, ka::kUidAmaxO}));
  for (const auto* list : {&p.inputs, &p.outputs})
    for (const auto& t : *list) EXPECT_TRUE(all.insert(t.uid).second) << t.name;
  for (std::int64_t uid : {ka::kUidDescaleQ, ka::kUidScaleS, ka::kUidScaleO, ka::kUidAmaxS, ka::kUidAmaxO}) {
    EXPECT_EQ(p.tensor(uid).dim, v64({1, 1, 1, 1})) << uid;
    EXPECT_EQ(p.tensor(uid).stride, v64({1, 1, 1, 1})) << uid;
    EXPECT_EQ(p.tensor(uid).kind, ka::SdpaTensorKind::Float) << uid;
  }
  // Every scale input has its value; descales are the exact inverses (powers of two).
  std::map<std::int64_t, float> value(p.scale_values.begin(), p.scale_values.end());
  ASSERT_EQ(value.size(), 6u);
  EXPECT_EQ(value.at(ka::kUidDescaleQ) * f.q, 1.0f);
  EXPECT_EQ(value.at(ka::kUidDescaleK) * f.k, 1.0f);
  EXPECT_EQ(value.at(ka::kUidDescaleV) * f.v, 1.0f);
  EXPECT_EQ(value.at(ka::kUidDescaleS) * value.at(ka::kUidScaleS), 1.0f);
  EXPECT_EQ(value.at(ka::kUidScaleO), f.o);
  EXPECT_EQ(p.tensor(ka::kUidDescaleQ).name, "Descale_Q");
  // Unequal lengths keep the bottom-right mask; not causal, no mask; a paged cache is not built.
  EXPECT_TRUE(ka::sdpa_fp8_forward_plan(shape(1, 2, 2, 256, 512, 64, true), f).causal_bottom_right);
  const ka::SdpaPlan open = ka::sdpa_fp8_forward_plan(shape(1, 2, 2, 256, 256, 64, false), f);
  EXPECT_FALSE(open.causal_bottom_right || open.causal_top_left);
  EXPECT_THROW((void)ka::sdpa_fp8_forward_plan(shape(1, 8, 2, 1, 256, 64, false, 16), f), std::invalid_argument);
}

TEST(SdpaFp8, SupportRulesAreTheFrontendsPlusWhatIsBuilt) {
  const ka::Shape s = shape(2, 16, 16, 4096, 4096, 128, true);
  auto why = [](int major, int minor, const ka::Shape& sh, std::optional<std::size_t> v = std::nullopt, bool decode = false,
                bool bwd = false) {
    return ka::fp8_forward_unsupported(major, minor, sh, decode, bwd, v).value_or("");
  };
  EXPECT_EQ(why(9, 0, s), "");             // H100/H200
  EXPECT_EQ(why(9, 0, s, 91900), "");      // with cuDNN 9.19
  EXPECT_EQ(why(10, 0, s, 91900), "");     // B200
  EXPECT_NE(why(8, 0, s).find("needs Hopper (sm_90) or newer"), std::string::npos) << why(8, 0, s);
  EXPECT_NE(why(8, 9, s).find("compute capability 8.9"), std::string::npos);  // Ada has fp8 MMA, not this engine
  EXPECT_NE(why(9, 0, shape(1, 2, 2, 512, 512, 72, false)).find("multiples of 16"), std::string::npos);
  EXPECT_EQ(why(9, 0, shape(1, 2, 2, 512, 512, 256, false)), "");
  EXPECT_NE(why(10, 0, shape(1, 2, 2, 512, 512, 256, false), 92500).find("up to 128"), std::string::npos);
  EXPECT_EQ(why(10, 0, shape(1, 2, 2, 512, 512, 256, false), 92600), "");
  const ka::Shape bottom_right = shape(1, 2, 2, 256, 512, 64, true);
  EXPECT_NE(why(9, 0, bottom_right).find("Blackwell (sm_100) only"), std::string::npos);
  EXPECT_EQ(why(10, 0, bottom_right, 90700), "");
  EXPECT_NE(why(10, 0, bottom_right, 90600).find("9.7.0"), std::string::npos);
  EXPECT_NE(why(9, 0, s, 90000).find("cuDNN 9.1.0 or newer (loaded: 9.0.0)"), std::string::npos);
  EXPECT_NE(why(9, 0, s, 91000).find("9.10.0"), std::string::npos);
  EXPECT_NE(why(9, 0, s, std::nullopt, false, true).find("forward only"), std::string::npos);
  EXPECT_NE(why(9, 0, shape(2, 8, 2, 1, 4096, 128, false, 16), std::nullopt, true).find("prefill forward only"),
            std::string::npos);
}

// The fp8 tolerance against what fp8 does to attention: the forward emulated with this project's
// E4M3 rounding the way cuDNN quantises (Q, K, V per-tensor scaled; P rounded with Scale_S before
// P.V; O rounded with Scale_O) passes verification at cudnn_tolerance("fp8-e4m3"), against exact
// attention on the dequantised inputs; a wrong scale, head or mask does not.
TEST(SdpaFp8, ToleranceCoversE4M3RoundingAndCatchesWrongAnswers) {
  const auto q8 = [](double x) {
    return static_cast<double>(kernels::fp8_bits_to_float(kernels::float_to_fp8_bits(static_cast<float>(x), kernels::Storage::E4M3),
                                                          kernels::Storage::E4M3));
  };
  for (bool causal : {false, true}) {
    sa::AttentionSpec spec;
    spec.dtype = "fp8-e4m3";
    spec.shape = shape(2, 2, 1, 512, 512, 64, causal);
    const ka::Shape& s = spec.shape;
    std::vector<float> q(std::size_t(s.q_elements())), k(std::size_t(s.kv_elements())), v(k.size());
    sa::fill_inputs(spec, q.data(), k.data(), v.data(), nullptr);
    auto amax = [](const std::vector<float>& x) {
      double m = 0;
      for (float e : x) m = std::max(m, double(std::abs(e)));
      return m;
    };
    const ka::Fp8Scales f = ka::fp8_scales(amax(q), amax(k), amax(v));
    for (auto [x, scale] : {std::pair{&q, f.q}, std::pair{&k, f.k}, std::pair{&v, f.v}})
      for (float& e : *x) e = static_cast<float>(q8(e * scale) / scale);
    // The emulated GPU answer, and one without the causal mask.
    auto emulate = [&](bool masked) {
      std::vector<float> o(q.size()), lse(std::size_t(s.lse_elements()));
      const std::int64_t d = s.head_dim, n = s.seq_kv;
      std::vector<double> p(static_cast<std::size_t>(n));
      for (std::int64_t b = 0; b < s.batch; ++b)
        for (std::int64_t h = 0; h < s.heads; ++h) {
          const std::int64_t hk = h / s.group();
          const float* kb = k.data() + (b * s.kv_heads + hk) * n * d;
          const float* vb = v.data() + (b * s.kv_heads + hk) * n * d;
          for (std::int64_t i = 0; i < s.seq_q; ++i) {
            const float* qi = q.data() + ((b * s.heads + h) * s.seq_q + i) * d;
            const std::int64_t seen = masked ? i + 1 : n;
            double m = -INFINITY, sum = 0;
            for (std::int64_t j = 0; j < seen; ++j) {
              double a = 0;
              for (std::int64_t c = 0; c < d; ++c) a += double(qi[c]) * kb[j * d + c];
              p[std::size_t(j)] = a * s.scale();
              m = std::max(m, p[std::size_t(j)]);
            }
            for (std::int64_t j = 0; j < seen; ++j) sum += p[std::size_t(j)] = std::exp(p[std::size_t(j)] - m);
            for (std::int64_t j = 0; j < seen; ++j) p[std::size_t(j)] = q8(p[std::size_t(j)] / sum * f.s) / f.s;
            float* oi = o.data() + ((b * s.heads + h) * s.seq_q + i) * d;
            for (std::int64_t c = 0; c < d; ++c) {
              double acc = 0;
              for (std::int64_t j = 0; j < seen; ++j) acc += p[std::size_t(j)] * vb[j * d + c];
              oi[c] = static_cast<float>(q8(acc * f.o) / f.o);
            }
            lse[std::size_t((b * s.heads + h) * s.seq_q + i)] = static_cast<float>(m + std::log(sum));
          }
        }
      return std::pair{o, lse};
    };
    auto [o, lse] = emulate(causal);
    auto check = [&](const std::vector<float>& got) {
      return sa::verify_against_reference(spec, q.data(), k.data(), v.data(), nullptr, nullptr,
                                          sa::Outputs{got.data(), lse.data()}, sa::cudnn_tolerance("fp8-e4m3", false),
                                          true);
    };
    const Verification ok = check(o);
    EXPECT_TRUE(ok.passed) << "causal " << causal << ": " << ok.detail;
    EXPECT_LT(ok.max_error, 0.7) << "causal " << causal;  // room below the tolerance
    std::vector<float> doubled = o;
    for (float& e : doubled) e *= 2;  // a descale applied wrongly
    EXPECT_FALSE(check(doubled).passed) << "causal " << causal;
    std::vector<float> swapped = o;  // the two query heads of batch 0 exchanged
    const std::size_t head = std::size_t(s.seq_q * s.head_dim);
    std::swap_ranges(swapped.begin(), swapped.begin() + long(head), swapped.begin() + long(head));
    EXPECT_FALSE(check(swapped).passed) << "causal " << causal;
    if (causal) {
      EXPECT_FALSE(check(emulate(false).first).passed);  // the mask left out
    }
  }
}

// ---- the train step's fused attention ----

// A transformer step with fused attention (float, the tiled kernel) against the unfused step in
// double, at a sequence longer than two key tiles so the online softmax rescales across tiles:
// the loss and every gradient within the train suite's tolerances; and it keeps no [T x T].
TEST(TrainFusedAttention, MatchesTheUnfusedStepAndKeepsNoScores) {
  kernels::train::ModelConfig c;
  c.layers = 1;
  c.hidden = 32;
  c.heads = 2;
  c.seq = 2 * ka::kTileKv + 20;
  c.batch = 1;
  c.vocab = 64;
  c.attention = kernels::train::Attention::Fused;
  kernels::train::ModelConfig unfused = c;
  unfused.attention = kernels::train::Attention::Unfused;
  kernels::train::ReferenceModel<float> fused(c, 3);
  kernels::train::ReferenceModel<double> exact(unfused, 3);
  const std::vector<kernels::train::Batch> micro{kernels::train::make_batch(c, 5)};
  const double loss_f = fused.train_step(micro, {}), loss_d = exact.train_step(micro, {});
  EXPECT_NEAR(loss_f, loss_d, 1e-4 * (1 + std::abs(loss_d)));
  const std::vector<double> got(fused.grads().begin(), fused.grads().end());
  const Verification v = suites::train::compare_gradients(got, exact.grads(), exact.layout(), suites::train::GradTolerance{});
  EXPECT_TRUE(v.passed) << v.detail;
  EXPECT_GT(v.checked, 0);
  // The unfused model holds batch x heads x T x T probabilities (and a T x T scratch) more.
  kernels::train::ReferenceModel<float> plain(unfused, 3);
  const double scores = double(c.batch * c.heads * c.seq * c.seq + c.seq * c.seq) * sizeof(float);
  EXPECT_GT(double(plain.memory_bytes() - fused.memory_bytes()), 0.9 * scores);
}

// The split of a step: per step, the rest is what attention and the products leave, fractions
// sum to 1, and clock noise cannot make a part negative.
TEST(TrainFusedAttention, StepSplitIsPerStepAndSumsToOne) {
  const auto j = suites::train::step_split(0.6, 1.0, 2.0, 2, "test");
  EXPECT_DOUBLE_EQ(j["attention_s"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(j["dense_gemm_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["other_s"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(j["attention_fraction"].get<double>() + j["dense_gemm_fraction"].get<double>() +
                       j["other_fraction"].get<double>(),
                   1.0);
  const auto over = suites::train::step_split(1.5, 1.0, 2.0, 1, "test");  // parts measured above the total
  EXPECT_DOUBLE_EQ(over["other_s"].get<double>(), 0.0);
  EXPECT_GE(over["dense_gemm_s"].get<double>(), 0.0);
  EXPECT_TRUE(suites::train::step_split(1, 1, 0, 2, "test").empty());
}

}  // namespace
}  // namespace gpubench
