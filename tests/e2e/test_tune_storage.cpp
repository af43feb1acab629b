// `gpubench tune storage` through the binary: emulated accelerators over a real file it writes in
// TMPDIR, the curve and the verdict printed and recorded, the report's section, a storage that
// cannot feed one accelerator, and bad input as one-line usage errors.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct TuneStorage : CliTest {
  // `tune storage --workload custom ARGS -q --out OUT` with ENV set.
  Output tune_custom(const std::string& args, const fs::path& out, const std::string& env) {
    return gpubench(fmt::format("tune storage --workload custom {} -q --out {}", args, out.string()), env);
  }
};

nlohmann::json read_json(const fs::path& p) {
  std::ifstream s(p);
  return nlohmann::json::parse(s);
}

TEST_F(TuneStorage, PrintsTheLargestNAtTheThresholdAndRecordsEveryRun) {
  const fs::path out = dir / "AU.json";
  // 16 x 64 KiB per 10 ms: 0.1 GB/s per accelerator; short runs keep the test within seconds.
  const Output o = tune_custom("--sample-bytes 65536 --batch 16 --step-time 0.01 --size 33554432 --run-time 0.2 "
                               "--max-accelerators 4 --budget 30",
                               out, "TMPDIR=" + dir.string());
  ASSERT_EQ(o.code, 0) << o.err;
  std::smatch m;
  const std::regex verdict(R"(verdict: this storage feeds (at least )?([0-9]+) GPUs at AU >= 90% \(a custom workload: 16 x 65536 B)");
  ASSERT_TRUE(std::regex_search(o.out, m, verdict)) << o.out;
  const int printed = std::stoi(m[2].str());
  EXPECT_NE(o.out.find("accelerators       AU"), std::string::npos) << o.out;

  const nlohmann::json doc = read_json(out);
  const auto& au = doc["gpubench"]["storage_au"];
  EXPECT_EQ(au["largest_passing"], printed);
  EXPECT_TRUE(au["finished"].get<bool>());
  EXPECT_EQ(au["verdict"].get<std::string>().rfind("verdict: this storage feeds", 0), 0u);
  EXPECT_EQ(au["read_bytes_per_sample"], 65536);
  ASSERT_FALSE(au["curve"].empty());
  EXPECT_EQ(doc["benchmarks"].size(), au["curve"].size());
  int largest_ok = 0;
  for (const auto& e : doc["benchmarks"]) {
    const auto& g = e["gpubench"];
    EXPECT_EQ(g["suite"], "storage");
    EXPECT_EQ(g["status"], "ok") << g.dump();
    EXPECT_TRUE(g["verification"]["passed"].get<bool>());
    EXPECT_GT(g["verification"]["checked"].get<int>(), 0);
    const double a = g["metrics"]["au_pct"].get<double>();
    EXPECT_GT(a, 0);
    EXPECT_LE(a, 100.0 + 1e-6);
    EXPECT_GT(g["metrics"]["samples_per_s"].get<double>(), 0);
    EXPECT_EQ(g["details"]["passed"].get<bool>(), a >= 90) << g.dump();
    if (a >= 90) largest_ok = std::max(largest_ok, g["axes"]["accelerators"].get<int>());
  }
  EXPECT_EQ(largest_ok, printed);
  // The generated file is gone with the run.
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().rfind("gpubench-storage-", 0), std::string::npos) << e.path();
  }
  // The report shows the curve and the verdict.
  const Output r = gpubench("report " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("## Storage: how many GPUs it feeds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: this storage feeds"), std::string::npos);
  EXPECT_EQ(r.out.find("## Storage reads"), std::string::npos) << "the AU runs are not fio-style reads";
}

TEST_F(TuneStorage, AStorageThatCannotFeedOneAcceleratorFeedsZero) {
  const fs::path out = dir / "Z.json";
  // 4 x 16 MiB per 1 ms step: 67 GB/s for one accelerator, beyond this machine's storage and its
  // page cache alike (--direct 0: any filesystem; the pages are dropped before the run).
  const Output o = tune_custom("--sample-bytes 16777216 --batch 4 --step-time 0.001 --size 134217728 --direct 0 "
                               "--run-time 0.05 --budget 30",
                               out, "TMPDIR=" + dir.string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("verdict: this storage feeds 0 GPUs at AU >= 90%"), std::string::npos) << o.out;
  const nlohmann::json doc = read_json(out);
  EXPECT_EQ(doc["gpubench"]["storage_au"]["largest_passing"], 0);
  EXPECT_EQ(doc["benchmarks"].size(), 1u);  // N = 1 missed: nothing more to try
  EXPECT_LT(doc["benchmarks"][0]["gpubench"]["metrics"]["au_pct"].get<double>(), 90);
}

TEST_F(TuneStorage, AGivenFileIsReadWholeAndNeverWritten) {
  const fs::path f = dir / "data.bin";
  {
    std::ofstream s(f, std::ios::binary);
    const std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 4; ++i) s << chunk;
  }
  const fs::path out = dir / "G.json";
  // A 4 MiB file, smaller than the 1 GiB a generated one would be: two batches of 16 x 64 KiB fit.
  const Output o = tune_custom("--sample-bytes 65536 --batch 16 --step-time 0.01 --direct 0 --run-time 0.1 "
                               "--max-accelerators 2 --budget 20",
                               out, "GPUBENCH_STORAGE_FILE=" + f.string());
  ASSERT_EQ(o.code, 0) << o.err;
  const nlohmann::json doc = read_json(out);
  EXPECT_EQ(doc["gpubench"]["storage_au"]["file"]["path"], f.string());
  EXPECT_EQ(doc["gpubench"]["storage_au"]["file"]["bytes"], 4 << 20);
  for (const auto& e : doc["benchmarks"]) {
    EXPECT_EQ(e["gpubench"]["verification"]["checked"], 0);  // its content is not known
    EXPECT_NE(e["gpubench"]["verification"]["method"].get<std::string>().find("length"), std::string::npos);
  }
  EXPECT_EQ(fs::file_size(f), 4u << 20);
}

TEST_F(TuneStorage, BadInputIsOneLineAndExitTwo) {
  for (const std::string args : {"--workload bert", "--workload retinanet --accelerator a100", "--workload custom --batch 4",
                                 "--au 100", "--max-accelerators 0", "--direct 2", "--budget -1", "--run-time 0",
                                 "--workload custom --sample-bytes 65536 --batch 4 --step-time 0.01 --size 4096",
                                 "--consumer-from /no/such/T.json --step-time 0.1"}) {
    const Output o = gpubench("tune storage " + args, fmt::format("TMPDIR={}", dir.string()));
    EXPECT_EQ(o.code, 2) << args << ": " << o.out << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << ": " << o.err;
  }
  const Output env = gpubench("tune storage --workload custom --sample-bytes 65536 --batch 4 --step-time 0.01",
                              "GPUBENCH_STORAGE_FILE=/no/such/file");
  EXPECT_EQ(env.code, 2) << env.err;
  EXPECT_NE(env.err.find("/no/such/file"), std::string::npos) << env.err;
  const Output help = gpubench("tune storage --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("MLPerf Storage"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::e2e
