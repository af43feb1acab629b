// `gpubench tune dataload`'s pure parts (bench/tune/dataload_tune.hpp): the consumer's rate from a
// train case measured earlier (--consumer-from FILE), the option checks, and the final's rule that
// never recommends what the final measured slower than the default.
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

using J = nlohmann::ordered_json;

// Issue 26: the final measures the search's best and the default again; the default wins when
// the best is slower or misses the stall target the default meets, and only then.
TEST(TuneDataloadFinal, NeverRecommendsWhatTheFinalMeasuredSlowerThanTheDefault) {
  const J fast_ok{{"samples_per_s", 1200.0}, {"meets_max_stall", true}};
  const J slow_ok{{"samples_per_s", 900.0}, {"meets_max_stall", true}};
  const J fast_stalled{{"samples_per_s", 1300.0}, {"meets_max_stall", false}};
  EXPECT_FALSE(default_beats_recommendation(fast_ok, slow_ok).has_value());
  const auto slower = default_beats_recommendation(slow_ok, fast_ok);
  ASSERT_TRUE(slower.has_value());
  EXPECT_NE(slower->find("900 samples/s"), std::string::npos) << *slower;
  EXPECT_NE(slower->find("1200"), std::string::npos) << *slower;
  // Faster but stalling, where the default meets the target: the default.
  const auto stalled = default_beats_recommendation(fast_stalled, slow_ok);
  ASSERT_TRUE(stalled.has_value());
  EXPECT_NE(stalled->find("stall target"), std::string::npos);
  // Neither meets it: the faster one stays. A default without a measured rate does not win.
  EXPECT_FALSE(default_beats_recommendation(fast_stalled, J{{"samples_per_s", 800.0}, {"meets_max_stall", false}}));
  EXPECT_FALSE(default_beats_recommendation(fast_ok, J{{"meets_max_stall", false}}));
  // Equal rates: the search's choice stands (it meets the target too).
  EXPECT_FALSE(default_beats_recommendation(fast_ok, fast_ok));
}

TEST(TuneDataloadOptions, ValuesOutOfRangeAreUsageErrorsNamingTheOption) {
  DataloadTuneOptions ok;
  EXPECT_NO_THROW(check_dataload_option_values(ok));
  auto refused = [](DataloadTuneOptions o, const char* option) {
    try {
      check_dataload_option_values(o);
      ADD_FAILURE() << option << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
    }
  };
  DataloadTuneOptions o = ok;
  o.budget_s = 0;
  refused(o, "--budget");
  o = ok;
  o.max_stall = 1;
  refused(o, "--max-stall");
  o = ok;
  o.max_scale = 3;
  refused(o, "--max-scale");
  o = ok;
  o.step_time_s = 0.1;
  o.consumer_rate = 100;
  refused(o, "--step-time, --consumer-rate");
}

}  // namespace
}  // namespace gpubench::tune
