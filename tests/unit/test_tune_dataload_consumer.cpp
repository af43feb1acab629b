// `gpubench tune dataload --consumer-from FILE`: the consumer's rate from a train case measured
// earlier (bench/tune/dataload_tune.hpp, train_consumer_rate).
#include <gtest/gtest.h>

#include <string>

#include "bench/core/errors.hpp"
#include "bench/tune/dataload_tune.hpp"

namespace gpubench::tune {
namespace {

const std::string kFixtures = GPUBENCH_FIXTURES_DIR;

TEST(TuneDataloadConsumer, TheFirstMeasuredTrainCaseGivesTheRate) {
  const auto [rate, name] = train_consumer_rate(kFixtures + "/reports/machine_a.json");
  EXPECT_DOUBLE_EQ(rate, 146.484375);  // its metrics.samples_per_s
  EXPECT_EQ(name, "train/model:gpt2-small/micro_batch:8/grad_accum:1/device:cuda:0");
}

TEST(TuneDataloadConsumer, AFileWithoutATrainCaseOrNoFileIsAUsageError) {
  EXPECT_THROW(train_consumer_rate(kFixtures + "/reports/compare_base.json"), UsageError);
  EXPECT_THROW(train_consumer_rate(kFixtures + "/does-not-exist.json"), UsageError);
}

}  // namespace
}  // namespace gpubench::tune
