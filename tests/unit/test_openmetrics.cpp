// OpenMetrics output: families, labels, escapes, repetitions, files of the same host. The
// output is also read back by a real parser in the tests (tests/scripts/check_openmetrics.py).
#include <gtest/gtest.h>

#include "reports/openmetrics.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports {
namespace {

ResultsFile file_with(const std::string& host, const std::string& name, double tflops_a, double tflops_b) {
  const std::string text = R"({"context": {"host_name": ")" + host + R"(", "date": "2026-12-03T07:18:43+00:00",
    "gpubench": {"schema_version": 1, "devices": [{"id": "cuda:0", "uuid": "GPU-00112233-4455-6677-8899-aabbccddeeff"}]}},
  "benchmarks": [
    {"name": "gemm/m=8/cuda:0", "run_type": "iteration", "repetition_index": 0, "real_time": 2, "time_unit": "ms",
     "gpubench": {"suite": "gemm", "device": "cuda:0", "device_name": "NVIDIA \"H200\"\nx", "status": "ok",
       "axes": {"m": 8, "dtype": "bf16", "host": "axis-named-host"},
       "metrics": {"tflops": )" + std::to_string(tflops_a) + R"(, "pct_of_peak": 50},
       "measurement": {"mean_s": 0.002, "noise_pct": 1.5}}},
    {"name": "gemm/m=8/cuda:0", "run_type": "iteration", "repetition_index": 1, "real_time": 4, "time_unit": "ms",
     "gpubench": {"suite": "gemm", "device": "cuda:0", "device_name": "NVIDIA \"H200\"\nx", "status": "ok",
       "axes": {"m": 8, "dtype": "bf16", "host": "axis-named-host"},
       "metrics": {"tflops": )" + std::to_string(tflops_b) + R"(},
       "measurement": {"mean_s": 0.004, "noise_pct": 2.5}}},
    {"name": "gemm/m=8/cuda:0_mean", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 3, "time_unit": "ms",
     "gpubench": {"suite": "gemm", "device": "cuda:0", "status": "ok", "axes": {"m": 8, "dtype": "bf16"}}},
    {"name": "gemm/m=9/cuda:0", "run_type": "iteration", "error_occurred": true,
     "gpubench": {"suite": "gemm", "device": "cuda:0", "status": "skipped", "reason": "no", "axes": {"m": 9}}}
  ]})";
  return read_results_text(text, name);
}

TEST(OpenMetrics, GaugesWithLabelsAndTheMedianOfRepetitions) {
  const std::string out = to_openmetrics({file_with("node-1", "a.json", 100, 300)});
  EXPECT_NE(out.find("# TYPE gpubench_tflops gauge\n"), std::string::npos) << out;
  const std::string labels =
      "{suite=\"gemm\",device_model=\"NVIDIA \\\"H200\\\"\\nx\",device=\"cuda:0\","
      "uuid=\"GPU-00112233-4455-6677-8899-aabbccddeeff\",host=\"node-1\",m=\"8\",dtype=\"bf16\","
      "axis_host=\"axis-named-host\"}";
  EXPECT_NE(out.find("gpubench_tflops" + labels + " 200\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_seconds_per_run" + labels + " 0.003\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_noise_ratio" + labels + " 0.02\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_pct_of_peak" + labels + " 50\n"), std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_results_timestamp_seconds{host=\"node-1\"} 1796282323\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("m=\"9\""), std::string::npos) << "a skipped case has no sample";
  EXPECT_EQ(out.substr(out.size() - 6), "# EOF\n");
}

TEST(OpenMetrics, TwoFilesOfOneHostAreToldApartByTheFileName) {
  const std::string out = to_openmetrics({file_with("node-1", "a.json", 1, 1), file_with("node-1", "b.json", 2, 2)});
  EXPECT_NE(out.find("host=\"node-1\",results=\"a.json\""), std::string::npos) << out;
  EXPECT_NE(out.find("host=\"node-1\",results=\"b.json\""), std::string::npos) << out;
  const std::string other = to_openmetrics({file_with("node-1", "a.json", 1, 1), file_with("node-2", "b.json", 2, 2)});
  EXPECT_EQ(other.find("results="), std::string::npos) << other;
}

TEST(OpenMetrics, Escapes) {
  EXPECT_EQ(openmetrics_escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

}  // namespace
}  // namespace gpubench::reports

namespace gpubench::reports {
namespace {

// Issue 26: axis names that sanitise alike (a.b, a-b, a_b) each keep a label of their own, so
// two cases that differ only in one of them stay two series.
TEST(OpenMetrics, AxisNamesThatSanitiseAlikeKeepTheirOwnLabels) {
  auto entry = [](int ab) {
    return R"({"name": "x/)" + std::to_string(ab) + R"(", "run_type": "iteration", "real_time": 2, "time_unit": "ms",
      "gpubench": {"suite": "gemm", "device": "cpu", "device_name": "cpu", "status": "ok",
        "axes": {"a.b": 1, "a-b": 2, "a_b": )" + std::to_string(ab) + R"(}, "metrics": {"tflops": )" +
           std::to_string(ab) + "}}}";
  };
  const std::string text = R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": [)" +
                           entry(3) + "," + entry(4) + "]}";
  const std::string out = to_openmetrics({read_results_text(text, "f.json")});
  EXPECT_NE(out.find("a_b=\"1\",axis_a_b=\"2\",axis_a_b_2=\"3\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("a_b=\"1\",axis_a_b=\"2\",axis_a_b_2=\"4\"} 4\n"), std::string::npos) << out;
}

// Issue 41 item 6: two cases whose labels come out equal (an axis `k x` in one, `k_x` in the
// other) are two series: each gets a `case` label with its name; the others keep their labels.
TEST(OpenMetrics, CasesWhoseLabelsSanitiseAlikeAreToldApartByTheCaseLabel) {
  auto entry = [](const std::string& name, const std::string& axes, double tflops) {
    return R"({"name": ")" + name + R"(", "run_type": "iteration", "real_time": 2, "time_unit": "ms",
      "gpubench": {"suite": "gemm", "device": "cpu", "device_name": "cpu", "status": "ok", "axes": )" + axes +
           R"(, "metrics": {"tflops": )" + std::to_string(tflops) + "}}}";
  };
  const std::string text = R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": [)" +
                           entry("gemm/k x:1", R"({"k x": 1})", 3) + "," + entry("gemm/k_x:1", R"({"k_x": 1})", 4) + "," +
                           entry("gemm/m:1", R"({"m": 1})", 5) + "]}";
  const std::string out = to_openmetrics({read_results_text(text, "f.json")});
  EXPECT_NE(out.find("gpubench_tflops{suite=\"gemm\",device_model=\"cpu\",device=\"cpu\",host=\"h\",k_x=\"1\",case=\"gemm/k x:1\"} 3\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_tflops{suite=\"gemm\",device_model=\"cpu\",device=\"cpu\",host=\"h\",k_x=\"1\",case=\"gemm/k_x:1\"} 4\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_tflops{suite=\"gemm\",device_model=\"cpu\",device=\"cpu\",host=\"h\",m=\"1\"} 5\n"), std::string::npos)
      << "a case that collides with none has no case label\n" << out;
}

// Values that print alike (the string "1" and the number 1) in cases of one name: the case
// label falls back to the suite and axes as JSON, which differ.
TEST(OpenMetrics, CasesOfOneNameWhoseValuesPrintAlikeGetTheirAxesAsTheCaseLabel) {
  auto entry = [](const std::string& axes, double tflops) {
    return R"({"name": "gemm/k:1", "run_type": "iteration", "real_time": 2, "time_unit": "ms",
      "gpubench": {"suite": "gemm", "device": "cpu", "device_name": "cpu", "status": "ok", "axes": )" + axes +
           R"(, "metrics": {"tflops": )" + std::to_string(tflops) + "}}}";
  };
  const std::string text = R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": [)" +
                           entry(R"({"k": 1})", 3) + "," + entry(R"({"k": "1"})", 4) + "]}";
  const std::string out = to_openmetrics({read_results_text(text, "f.json")});
  EXPECT_NE(out.find("k=\"1\",case=\"gemm {\\\"k\\\":1}\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("k=\"1\",case=\"gemm {\\\"k\\\":\\\"1\\\"}\"} 4\n"), std::string::npos) << out;
}

// Two files of one host with the same file name (a/r.json, b/r.json) keep apart by their paths.
TEST(OpenMetrics, FilesOfOneNameAreToldApartByTheirPaths) {
  const std::string out = to_openmetrics({file_with("node-1", "a/r.json", 1, 1), file_with("node-1", "b/r.json", 2, 2)});
  EXPECT_NE(out.find("results=\"a/r.json\""), std::string::npos) << out;
  EXPECT_NE(out.find("results=\"b/r.json\""), std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_results_timestamp_seconds{host=\"node-1\",results=\"b/r.json\"}"), std::string::npos) << out;
}

// A suite's primary metric named like a fixed family (seconds_per_run) has a family of its own,
// so the case keeps both samples.
TEST(OpenMetrics, APrimaryMetricNamedLikeAFixedFamilyGetsItsOwnFamily) {
  const std::string text = R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": [
    {"name": "x/m:1", "run_type": "iteration", "real_time": 2, "time_unit": "ms",
     "gpubench": {"suite": "x", "device": "cpu", "device_name": "cpu", "status": "ok", "axes": {"m": 1},
       "metrics": {"primary": "seconds_per_run", "seconds_per_run": 7}, "measurement": {"mean_s": 0.002}}}]})";
  const std::string out = to_openmetrics({read_results_text(text, "f.json")});
  EXPECT_NE(out.find("gpubench_metric_seconds_per_run{suite=\"x\",device_model=\"cpu\",device=\"cpu\",host=\"h\",m=\"1\"} 7\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("gpubench_seconds_per_run{suite=\"x\",device_model=\"cpu\",device=\"cpu\",host=\"h\",m=\"1\"} 0.002\n"),
            std::string::npos) << out;
}

// A file whose object holds one key twice is corrupt (nlohmann would keep the last silently).
TEST(ResultsReaderStrict, DuplicateKeysAreRefusedNamingTheKey) {
  const std::string text = R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": [
    {"name": "x", "real_time": 2, "real_time": 3, "time_unit": "ms", "gpubench": {"suite": "gemm", "status": "ok"}}]})";
  try {
    (void)read_results_text(text, "d.json");
    ADD_FAILURE() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt: the key \"real_time\" appears twice"), std::string::npos) << e.what();
  }
}

// Every figure of an ok entry is range-checked once, at the reader: out of range, the entry is
// read as failed with the reason and a warning, never believed and never silently dropped.
TEST(ResultsReaderStrict, OutOfRangeFiguresMarkTheEntryFailedWithTheReason) {
  for (const auto& [figures, what] : std::vector<std::pair<std::string, std::string>>{
           {R"("real_time": -5, "time_unit": "ms", "metrics": {"tflops": 1})", "real_time"},
           {R"("real_time": 1e300, "time_unit": "s", "metrics": {"tflops": 1})", "real_time"},
           {R"("real_time": 2, "time_unit": "ms", "metrics": {"tflops": 0})", "metrics.tflops"},
           {R"("real_time": 2, "time_unit": "ms", "metrics": {"samples_per_s": -3})", "metrics.samples_per_s"},
           {R"("real_time": 2, "time_unit": "ms", "metrics": {"gbps": 1e300})", "metrics.gbps"}}) {
    const std::string text = R"({"context": {"host_name": "h", "gpubench": {"schema_version": 1}}, "benchmarks": [
      {"name": "x", )" + figures.substr(0, figures.find("\"metrics\"")) +
                             R"("gpubench": {"suite": "gemm", "status": "ok", )" +
                             figures.substr(figures.find("\"metrics\"")) + "}}]}";
    const ResultsFile f = read_results_text(text, "r.json");
    ASSERT_EQ(f.entries.size(), 1u);
    EXPECT_EQ(f.entries[0].status, "failed") << figures;
    EXPECT_NE(f.entries[0].reason.find(what), std::string::npos) << f.entries[0].reason;
    ASSERT_EQ(f.warnings.size(), 1u) << figures;
  }
}

}  // namespace
}  // namespace gpubench::reports
