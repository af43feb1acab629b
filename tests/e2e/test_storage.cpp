// The storage suite through the binary: the quick preset over a file it writes in TMPDIR, a
// given file (GPUBENCH_STORAGE_FILE), and bad paths as one-line usage errors.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct Storage : CliTest {};

TEST_F(Storage, QuickPresetInTmpdirReportsBandwidthIopsAndLatency) {
  const fs::path out = dir / "S.json";
  // A small file keeps the test short; the preset's reads and engines are the quick preset's.
  const Output o = gpubench(fmt::format("run --device cpu --suite storage --preset quick -a filesize=16M --min-time 0.05 -q --out {}", out.string()),
                            fmt::format("TMPDIR={}", dir.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  int seq = 0, rand = 0;
  for (const auto& g : iteration_entries(out)) {
    if (g["status"] == "skipped") {
      // O_DIRECT on a filesystem that refuses it (tmpfs), or a build without liburing: said.
      EXPECT_FALSE(g["reason"].get<std::string>().empty()) << g.dump();
      continue;
    }
    ASSERT_EQ(g["status"], "ok") << g.dump();
    EXPECT_TRUE(g["verification"]["passed"].get<bool>());
    const auto& m = g["metrics"];
    EXPECT_GT(m["gbps"].get<double>(), 0) << g.dump();
    EXPECT_GT(m["iops"].get<double>(), 0);
    EXPECT_NEAR(m["iops"].get<double>(), m["ios_per_s"].get<double>(), 1e-6 * m["iops"].get<double>());
    EXPECT_GT(m["latency_us_p99"].get<double>(), 0);
    EXPECT_GE(m["latency_us_p99"].get<double>(), m["latency_us_p50"].get<double>());
    const auto& d = g["details"];
    EXPECT_EQ(d["file"]["read_bytes"], 16 << 20);
    EXPECT_NE(d["file"]["path"].get<std::string>().find(dir.string()), std::string::npos) << d.dump();
    (g["axes"]["rw"] == "read" ? seq : rand)++;
  }
  EXPECT_GE(seq, 1);
  EXPECT_GE(rand, 1);
  // The generated file is gone with the run.
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().rfind("gpubench-storage-", 0), std::string::npos) << e.path();
  }
  // The report has the suite's entries.
  const Output r = gpubench("report " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\n## storage\n"), std::string::npos) << r.out;
}

TEST_F(Storage, AGivenFileIsReadAndCheckedAgainstPlainReads) {
  const fs::path f = dir / "data.bin";
  {
    std::ofstream s(f, std::ios::binary);
    std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 8; ++i) {
      chunk[0] = static_cast<char>(i);
      s << chunk;
    }
  }
  const fs::path out = dir / "G.json";
  const Output o = gpubench(fmt::format("run --device cpu --suite storage -a rw=randread -a bs=4k -a iodepth=1 -a ioengine=psync -a direct=0 "
                                        "-a filesize=8M --min-time 0.05 -q --out {}",
                                        out.string()),
                            fmt::format("GPUBENCH_STORAGE_FILE={}", f.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto es = iteration_entries(out);
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0]["status"], "ok") << es[0].dump();
  EXPECT_NE(es[0]["verification"]["method"].get<std::string>().find("plain buffered preads"), std::string::npos);
  EXPECT_EQ(es[0]["details"]["file"]["path"], f.string());
  EXPECT_TRUE(fs::exists(f));  // never removed or written
}

TEST_F(Storage, BadPathsAreOneLineUsageErrors) {
  for (const std::string env : {"GPUBENCH_STORAGE_FILE=/no/such/file", "GPUBENCH_STORAGE_DIR=/no/such/dir"}) {
    const Output o = gpubench("run --device cpu --suite storage --dry-run", env);
    EXPECT_EQ(o.code, 2) << env << ": " << o.out;
    EXPECT_NE(o.err.find("/no/such/"), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
}

}  // namespace
}  // namespace gpubench::e2e
