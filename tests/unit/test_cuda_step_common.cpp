// The pieces the single-device and data-parallel GPU steps share (bench/suites/train/
// cuda_step_common.hpp): pure, so tested here without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/suites/train/cuda_step_common.hpp"
#include "bench/suites/train/verify.hpp"
#include "tests/unit/fake_suite.hpp"

namespace gpubench::suites::train {
namespace {

TEST(CudaStepCommon, RankZeroTrainsOnTheSingleDeviceStepsBatches) {
  ModelConfig c;
  c.accum = 3;
  const auto zero = rank_batches(c, 0), one = rank_batches(c, 1);
  ASSERT_EQ(zero.size(), 3u);
  ASSERT_EQ(one.size(), 3u);
  // Rank 1 starts where rank 0's seeds end: its first micro-batch is make_batch(seed + accum).
  EXPECT_EQ(one.front().tokens, kernels::train::make_batch(c, kBatchSeed + 3).tokens);
  EXPECT_EQ(zero.front().tokens, kernels::train::make_batch(c, kBatchSeed).tokens);
  EXPECT_NE(zero.front().tokens, one.front().tokens);
}

TEST(CudaStepCommon, FirstLossNearLogVocabOnly) {
  EXPECT_FALSE(first_loss_problem(std::log(1000.0) * 1.1, 1000).has_value());
  EXPECT_TRUE(first_loss_problem(std::log(1000.0) * 1.3, 1000).has_value());
  EXPECT_TRUE(first_loss_problem(NAN, 1000).has_value());
  const auto why = first_loss_problem(INFINITY, 1000);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("log(vocab)"), std::string::npos);
}

TEST(CudaStepCommon, AStepBeyondTheDevicesMemoryIsASkip) {
  DeviceInfo gpu = testing::fake_gpu(0);
  gpu.memory_bytes = std::int64_t{1} << 30;
  ModelConfig small;
  EXPECT_FALSE(too_large_for(small, gpu));
  EXPECT_NO_THROW(skip_when_too_large(small, gpu));
  ModelConfig big;
  big.layers = 48;
  big.hidden = 8192;
  big.heads = 64;
  EXPECT_TRUE(too_large_for(big, gpu));
  EXPECT_THROW(skip_when_too_large(big, gpu), CaseSkipped);
}

}  // namespace
}  // namespace gpubench::suites::train
