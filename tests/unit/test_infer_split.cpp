// Flash-decoding's split of the paged attention's keys (model.hpp: attention_split, the
// workspace bound attention_split_slots, and the CPU reference of a block's partial softmax and
// of the combine the GPU kernels run).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/infer/model.hpp"

namespace gpubench::kernels::infer {
namespace {

TEST(InferSplit, FewUnitsSplitTheirKeysManyDoNot) {
  // Decode at batch 1 of a 32-head model on 132 SMs: 32 blocks alone would fill a quarter of
  // the GPU, so the 4097 keys are split.
  const AttentionSplit one = attention_split(32, 4097, 132);
  EXPECT_GT(one.splits, 1);
  EXPECT_GE(32 * one.splits, kSplitWaveBlocks * 132);
  // Enough units (a prefill, a large decode batch) or too few keys: one block per unit.
  EXPECT_EQ(attention_split(16 * 32, 4097, 132).splits, 1);
  EXPECT_EQ(attention_split(32, 2 * kMinKeysPerSplit - 1, 132).splits, 1);
  EXPECT_EQ(attention_split(32, 4097, 132).keys_per_split, one.keys_per_split);
  EXPECT_EQ(attention_split(0, 4097, 132).splits, 1);
}

TEST(InferSplit, EverySplitPlanCoversTheKeysAndFitsTheWorkspace) {
  for (const int sms : {1, 8, 108, 132}) {
    for (idx units = 1; units <= 700; units += 3) {
      for (const idx keys : {idx{1}, idx{100}, idx{128}, idx{129}, idx{1000}, idx{4097}, idx{131072}}) {
        const AttentionSplit a = attention_split(units, keys, sms);
        ASSERT_GE(a.splits, 1);
        ASSERT_LE(a.splits, kMaxSplits);
        if (a.splits == 1) continue;
        ASSERT_GE(a.keys_per_split, kMinKeysPerSplit) << units << " " << keys;
        ASSERT_GE(a.splits * a.keys_per_split, keys);        // every key in some split
        ASSERT_LT((a.splits - 1) * a.keys_per_split, keys);  // the longest row leaves none empty
        // The engine's workspace, sized once for its largest step, holds every split step's partials.
        ASSERT_LE(units * a.splits, attention_split_slots(units, sms)) << units << " " << keys << " " << sms;
        ASSERT_LE(attention_split_slots(units, sms), attention_split_slots(units + 100, sms));
      }
    }
  }
}

// Softmax attention of one query in one pass over every key (max first, then the sum).
std::vector<double> direct(const std::vector<double>& q, const std::vector<std::vector<double>>& k,
                           const std::vector<std::vector<double>>& v, idx n, double scale) {
  std::vector<double> s(static_cast<std::size_t>(n));
  double big = -INFINITY;
  for (idx j = 0; j < n; ++j) {
    double dot = 0;
    for (std::size_t i = 0; i < q.size(); ++i) dot += q[i] * k[static_cast<std::size_t>(j)][i];
    s[static_cast<std::size_t>(j)] = dot * scale;
    big = std::max(big, s[static_cast<std::size_t>(j)]);
  }
  std::vector<double> out(q.size(), 0.0);
  double total = 0;
  for (idx j = 0; j < n; ++j) {
    const double e = std::exp(s[static_cast<std::size_t>(j)] - big);
    total += e;
    for (std::size_t i = 0; i < q.size(); ++i) out[i] += e * v[static_cast<std::size_t>(j)][i];
  }
  for (double& o : out) o /= total;
  return out;
}

TEST(InferSplit, SplitAndCombineIsTheWholeSoftmax) {
  std::mt19937 gen(7);
  std::normal_distribution<double> normal;
  const idx d = 64;
  for (const double scale : {1 / std::sqrt(64.0), 40.0}) {  // 40: scores far past exp's range without the max
    for (const idx n : {idx{1}, idx{63}, idx{300}, idx{1000}}) {
      std::vector<double> q(static_cast<std::size_t>(d));
      for (double& x : q) x = normal(gen);
      std::vector<std::vector<double>> k(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(d)));
      std::vector<std::vector<double>> v = k;
      for (auto& row : k) for (double& x : row) x = normal(gen);
      for (auto& row : v) for (double& x : row) x = normal(gen);
      const std::vector<double> want = direct(q, k, v, n, scale);
      // The split a 4-unit step of this row would run (one split when n is short), and one
      // split past its end: an empty partial, as a shorter row's splits are.
      const AttentionSplit a = attention_split(4, n, 132);
      const idx kps = a.splits == 1 ? n : a.keys_per_split;
      std::vector<SoftmaxPartial> parts;
      for (idx s = 0; s <= a.splits; ++s) {
        parts.push_back(attention_partial(q, k, v, std::min(n, s * kps), std::min(n, (s + 1) * kps), scale));
      }
      EXPECT_EQ(parts.back().l, 0.0);
      EXPECT_TRUE(std::isinf(parts.back().m));
      const std::vector<double> got = combine_partials(parts);
      ASSERT_EQ(got.size(), want.size());
      double worst = 0, big = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i])) << i;
        worst = std::max(worst, std::abs(got[i] - want[i]));
        big = std::max(big, std::abs(want[i]));
      }
      EXPECT_LE(worst, 1e-12 * std::max(big, 1.0)) << "n " << n << " scale " << scale << " splits " << a.splits;
    }
  }
}

TEST(InferSplit, CombiningOnlyEmptySplitsIsAnError) {
  const std::vector<double> q{1.0, 2.0};
  const std::vector<std::vector<double>> kv{{1.0, 0.0}};
  EXPECT_THROW((void)combine_partials({attention_partial(q, kv, kv, 0, 0, 1.0)}), std::invalid_argument);
  EXPECT_THROW((void)combine_partials({}), std::invalid_argument);
}

}  // namespace
}  // namespace gpubench::kernels::infer
