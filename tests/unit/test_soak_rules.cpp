// The soak verdict's rules (bench/soak/rules.hpp) on made-up series: drop, spread, throttle,
// ECC, XID, verification mismatch, a stopped load, and the warm-up that is not judged.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "bench/soak/document.hpp"
#include "bench/soak/rules.hpp"
#include "bench/soak/runner.hpp"

namespace gpubench::soak {
namespace {

// `n` one-second samples of `device` at `rate`, starting at t0.
std::vector<Sample> steady(const std::string& device, int n, double rate, double t0 = 0) {
  std::vector<Sample> v;
  for (int i = 0; i < n; ++i) {
    Sample s;
    s.t_s = t0 + i + 1;
    s.interval_s = 1;
    s.device = device;
    s.load = "gemm";
    s.unit = "TFLOP/s";
    s.rate = rate;
    s.runs = 10;
    s.busy_s = 0.9;
    v.push_back(s);
  }
  return v;
}

const Failure* find(const Verdict& v, const std::string& rule) {
  for (const Failure& f : v.failures) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(SoakRules, SteadySeriesPasses) {
  Thresholds t;
  const Verdict v = judge(steady("cuda:0", 50, 600), t);
  EXPECT_TRUE(v.passed);
  EXPECT_TRUE(v.failures.empty());
}

TEST(SoakRules, DropBetweenFirstAndLastWindowFails) {
  auto s = steady("cuda:0", 20, 600);
  for (int i = 10; i < 20; ++i) s[i].rate = 540;  // -10 % in the second half
  Thresholds t;
  const Verdict v = judge(s, t);
  ASSERT_FALSE(v.passed);
  const Failure* f = find(v, "drop");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->device, "cuda:0");
  EXPECT_NEAR(f->measured, 10, 1e-9);
  EXPECT_EQ(f->threshold, 5);
  EXPECT_TRUE(has(f->message, "cuda:0")) << f->message;
  EXPECT_TRUE(has(f->message, "drop")) << f->message;
  EXPECT_TRUE(has(f->message, "10.00 %")) << f->message;
  EXPECT_TRUE(has(f->message, "--max-drop 5")) << f->message;
  // Under the threshold: passes.
  t.max_drop_pct = 11;
  EXPECT_TRUE(judge(s, t).passed);
}

TEST(SoakRules, WindowsAreMediansSoOneSlowSampleIsNotADrop) {
  auto s = steady("cpu", 20, 100);
  s[19].rate = 50;  // the last sample alone halves, the last window's median does not move
  EXPECT_TRUE(judge(s, Thresholds{}).passed);
  const std::vector<Trend> tr = trends(s, Thresholds{});
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].window, 5u);
  EXPECT_EQ(tr[0].last, 100);
}

TEST(SoakRules, AGainIsNoDropAndMaxDropZeroFailsEveryJudgedRun) {
  auto s = steady("cpu", 10, 100);
  for (int i = 5; i < 10; ++i) s[i].rate = 120;
  Thresholds t;
  t.max_drop_pct = 0;
  const Verdict v = judge(s, t);
  ASSERT_FALSE(v.passed);  // 0 % >= 0 %: the documented way to exercise the failure path
  EXPECT_EQ(find(v, "drop")->measured, 0);
}

TEST(SoakRules, WarmUpIsReportedButNotJudged) {
  auto s = steady("cuda:0", 30, 600);
  for (int i = 0; i < 5; ++i) s[i].rate = 900;  // a cold GPU runs fast for its first seconds
  s[2].clocks_event_reasons = 0x40;          // and a thermal slowdown while warming up
  Thresholds t;
  EXPECT_FALSE(judge(s, t).passed);  // without a warm-up both rules fire
  t.warmup_s = 5;
  const Verdict v = judge(s, t);
  EXPECT_TRUE(v.passed) << (v.failures.empty() ? "" : v.failures[0].message);
  // A sample whose interval starts inside the warm-up is not judged: 4.5 s .. 5.5 s.
  auto late = steady("cuda:0", 30, 600);
  late[5].t_s = 5.5;
  late[5].interval_s = 1;
  late[5].rate = 10;
  late[6].rate = 10;
  t.warmup_s = 5;
  const std::vector<Trend> tr = trends(late, t);
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].samples, 24u);  // t 1..5 and the one at 5.5 s are in the warm-up
}

TEST(SoakRules, TooFewSamplesAfterTheWarmUpIsANoteNotAFailure) {
  Thresholds t;
  t.warmup_s = 100;
  const Verdict v = judge(steady("cpu", 10, 100), t);
  EXPECT_TRUE(v.passed);
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_TRUE(has(v.notes[0], "not judged")) << v.notes[0];
}

TEST(SoakRules, SpreadFromTheMedianDevice) {
  auto s = steady("cuda:0", 10, 600);
  for (const char* d : {"cuda:1", "cuda:2"}) {
    auto more = steady(d, 10, 600);
    s.insert(s.end(), more.begin(), more.end());
  }
  auto slow = steady("cuda:3", 10, 540);  // 10 % below the others
  s.insert(s.end(), slow.begin(), slow.end());
  Thresholds t;
  const Verdict v = judge(s, t);
  ASSERT_FALSE(v.passed);
  ASSERT_EQ(v.failures.size(), 1u);
  const Failure& f = v.failures[0];
  EXPECT_EQ(f.rule, "spread");
  EXPECT_EQ(f.device, "cuda:3");
  EXPECT_NEAR(f.measured, 10, 1e-9);
  EXPECT_TRUE(has(f.message, "below the median device")) << f.message;
  t.max_spread_pct = 10.5;
  EXPECT_TRUE(judge(s, t).passed);
  // One device has nothing to be compared with.
  t.max_spread_pct = 0;
  EXPECT_TRUE(judge(steady("cuda:0", 10, 600), Thresholds{5, 0, 0}).passed);
}

TEST(SoakRules, ThermalOrPowerBrakeThrottleUnderThePowerLimitFails) {
  auto s = steady("cuda:0", 10, 600);
  for (Sample& x : s) {
    x.power_w = 650;
    x.power_limit_w = 700;
    x.clocks_event_reasons = 0x4;  // the power cap alone is expected at full load
  }
  EXPECT_TRUE(judge(s, Thresholds{}).passed);
  s[6].clocks_event_reasons = 0x4 | 0x20;  // software thermal slowdown
  s[7].clocks_event_reasons = 0x80;        // power brake
  const Verdict v = judge(s, Thresholds{});
  ASSERT_FALSE(v.passed);
  const Failure* f = find(v, "throttle");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->measured, 2);
  EXPECT_TRUE(has(f->message, "sw_thermal_slowdown")) << f->message;
  EXPECT_TRUE(has(f->message, "650 W of a 700 W limit")) << f->message;
  // At the power limit the same reasons are not this rule's business.
  s[6].power_w = s[7].power_w = 700;
  EXPECT_TRUE(judge(s, Thresholds{}).passed);
}

TEST(SoakRules, NewUncorrectedEccErrorFailsButOldOnesDoNot) {
  auto s = steady("cuda:1", 10, 600);
  for (Sample& x : s) {
    x.ecc_uncorrected = 3;  // from before the soak
    x.ecc_corrected = 100;
  }
  EXPECT_TRUE(judge(s, Thresholds{}).passed);
  s[8].ecc_uncorrected = s[9].ecc_uncorrected = 5;
  const Verdict v = judge(s, Thresholds{});
  const Failure* f = find(v, "ecc");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->measured, 2);
  EXPECT_EQ(f->device, "cuda:1");
  // Also during the warm-up: corruption is never excused.
  Thresholds t;
  t.warmup_s = 100;
  EXPECT_NE(find(judge(s, t), "ecc"), nullptr);
}

TEST(SoakRules, AnyXidFails) {
  auto s = steady("cuda:0", 10, 600);
  s[1].xids = {79};
  s[4].xids = {48, 63};
  Thresholds t;
  t.warmup_s = 5;
  const Verdict v = judge(s, t);
  const Failure* f = find(v, "xid");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->measured, 3);
  EXPECT_TRUE(has(f->message, "XID 79, 48, 63")) << f->message;
}

TEST(SoakRules, VerificationMismatchFails) {
  auto s = steady("cpu", 10, 100);
  for (Sample& x : s) x.verifications = 1;
  s[3].mismatches = 1;
  s[3].mismatch_detail = "D[5,7] = 3.5, expected 4";
  const Verdict v = judge(s, Thresholds{});
  const Failure* f = find(v, "verification");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->measured, 1);
  EXPECT_EQ(f->threshold, 0);
  EXPECT_TRUE(has(f->message, "1 of 10 checks")) << f->message;
  EXPECT_TRUE(has(f->message, "expected 4")) << f->message;
}

TEST(SoakRules, AStoppedLoadFails) {
  auto s = steady("cuda:0", 3, 600);
  s[2].error = "out of memory";
  s[2].rate.reset();
  const Failure* f = find(judge(s, Thresholds{}), "error");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(has(f->message, "out of memory")) << f->message;
}

TEST(SoakRules, VerdictJsonHasPassedAndFailures) {
  auto s = steady("cpu", 10, 100);
  s[9].xids = {13};
  const nlohmann::ordered_json j = to_json(judge(s, Thresholds{}));
  EXPECT_FALSE(j["passed"].get<bool>());
  ASSERT_EQ(j["failures"].size(), 1u);
  for (const char* k : {"device", "rule", "measured", "threshold", "message"}) EXPECT_TRUE(j["failures"][0].contains(k)) << k;
}

TEST(SoakRules, SampleJsonRoundTrips) {
  Sample s = steady("cuda:0", 1, 612.5)[0];
  s.power_w = 690;
  s.clocks_event_reasons = 0x24;
  s.xids = {79};
  s.ecc_uncorrected = 0;
  const nlohmann::ordered_json j = to_json(s);
  EXPECT_EQ(j["bad_throttle"], "sw_thermal_slowdown");
  const Sample back = sample_from_json(j);
  EXPECT_EQ(to_json(back), j);
}

TEST(SoakRules, DefaultWarmUpIsAMinuteOrATenthWhicheverIsShorter) {
  EXPECT_DOUBLE_EQ(default_warmup_s(20), 2);
  EXPECT_DOUBLE_EQ(default_warmup_s(600), 60);
  EXPECT_DOUBLE_EQ(default_warmup_s(7200), 60);
}

TEST(SoakDurations, UnitsAndErrors) {
  EXPECT_DOUBLE_EQ(parse_duration("30s", "--duration"), 30);
  EXPECT_DOUBLE_EQ(parse_duration("10m", "--duration"), 600);
  EXPECT_DOUBLE_EQ(parse_duration("2h", "--duration"), 7200);
  EXPECT_DOUBLE_EQ(parse_duration("1.5h", "--duration"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("500ms", "--duration"), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration("20", "--duration"), 20);
  for (const char* bad : {"", "0s", "-5s", "ten", "5d", "1e9999s", "s", "5 m s", "nan"}) {
    EXPECT_THROW(parse_duration(bad, "--duration"), std::exception) << bad;
  }
}

}  // namespace
}  // namespace gpubench::soak

namespace gpubench::soak {
namespace {

// Issue 27: a drop that coincides with load that was not the soak's is named as such.
TEST(SoakRules, ADropThatCoincidesWithOutsideLoadIsNamed) {
  std::vector<Sample> v = steady("cpu", 10, 1.0);
  for (Sample& s : v) s.other_cpu_pct = 1, s.steal_pct = 0;
  for (std::size_t i = 5; i < v.size(); ++i) v[i].rate = 0.7, v[i].other_cpu_pct = 40;
  Thresholds t;
  t.warmup_s = 0;
  const Verdict verdict = judge(v, t);
  ASSERT_NE(find(verdict, "drop"), nullptr);
  EXPECT_TRUE(has(find(verdict, "drop")->message, "coincides with outside load")) << find(verdict, "drop")->message;
  EXPECT_TRUE(has(find(verdict, "drop")->message, "40% of the CPUs in the last window, 1% in the first"));
  // The same drop without outside load: no such note.
  for (Sample& s : v) s.other_cpu_pct = 1;
  EXPECT_FALSE(has(find(judge(v, t), "drop")->message, "outside load"));
}

// Issue 26: an interrupted soak's verdict says so, and never passes without a timed sample.
TEST(SoakRules, AnInterruptedVerdictNeverPassesWithoutATimedSample) {
  std::vector<Sample> none = steady("cpu", 2, 1.0);
  for (Sample& s : none) s.runs = 0, s.busy_s = 0, s.rate.reset();
  Verdict v = judge(none, Thresholds{});
  mark_interrupted(v, none, 2, 0.4);
  EXPECT_TRUE(v.interrupted);
  EXPECT_FALSE(v.passed);
  ASSERT_NE(find(v, "interrupted"), nullptr);
  EXPECT_TRUE(has(find(v, "interrupted")->message, "before any timed sample"));
  EXPECT_EQ(to_json(v)["interrupted"], true);
  // With timed samples the rules decide as before; the mark stays.
  const std::vector<Sample> timed = steady("cpu", 4, 1.0);
  Verdict w = judge(timed, Thresholds{});
  mark_interrupted(w, timed, 15, 4);
  EXPECT_TRUE(w.passed);
  EXPECT_TRUE(w.interrupted);
  // Without a sample at all.
  Verdict e = judge({}, Thresholds{});
  mark_interrupted(e, {}, 13, 0);
  EXPECT_FALSE(e.passed);
}

// results-format.md's list of sample fields and what to_json writes are the same set: every
// field of a sample with everything set is documented, and every documented field is written
// (busy_s was documented and never written).
TEST(SoakSeries, TheFormatDocListsExactlyTheFieldsASampleWrites) {
  Sample s = steady("cuda:0", 1, 1.0)[0];
  s.phase = "100%";
  s.verifications = 1;
  s.mismatches = 1;
  s.mismatch_detail = "x";
  s.error = "e";
  s.sm_clock_mhz = s.memory_clock_mhz = s.temperature_c = s.memory_temperature_c = s.fan_pct = s.power_w = 1.0;
  s.power_limit_w = s.gpu_utilization_pct = 1.0;
  s.clocks_event_reasons = 0xFFFFFFFFull;
  s.ecc_corrected = s.ecc_uncorrected = s.retired_pages = s.remapped_rows_corrected = 1u;
  s.remapped_rows_uncorrected = s.pcie_replays = 1u;
  s.row_remap_failure = false;
  s.xids = {79};
  s.cpu_pct = s.rss_bytes = s.load_avg_1m = 1.0;
  s.other_cpu_pct = s.steal_pct = 1.0;
  const nlohmann::ordered_json j = to_json(s);
  ASSERT_EQ(sample_from_json(j).busy_s, s.busy_s);  // round trip (the MPI hand-over uses it)

  std::ifstream in(std::string(GPUBENCH_FIXTURES_DIR) + "/../../docs/results-format.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t from = doc.find("Each sample:");
  ASSERT_NE(from, std::string::npos);
  const std::string para = doc.substr(from, doc.find("\n\n", from) - from);
  std::set<std::string> documented;
  for (std::size_t a = para.find('`'); a != std::string::npos; a = para.find('`', a + 1)) {
    const std::size_t b = para.find('`', a + 1);
    const std::string name = para.substr(a + 1, b - a - 1);
    if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos) {
      documented.insert(name);
    }
    a = b;
  }
  documented.erase("null");  // a value (`rate` is `null` when no batch finished), not a field
  std::set<std::string> written;
  for (const auto& [k, v] : j.items()) written.insert(k);
  EXPECT_EQ(documented, written);
}

}  // namespace
}  // namespace gpubench::soak
