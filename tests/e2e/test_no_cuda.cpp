// A build without CUDA (GPUBENCH_WITH_CUDA off; scripts/nocuda.sh builds one with the toolkits
// hidden, CI's "no CUDA" stage runs these): every command works, CPU cases run, and every GPU
// path says "not built with CUDA" in version, list, run, doctor and the instruments' status. A
// build with CUDA skips these tests, saying why (its own tests cover those paths).
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

struct NoCudaBuild : CliTest {
  void SetUp() override {
    const Output v = gpubench("version");
    ASSERT_EQ(v.code, 0) << v.err;
    if (!contains(v.out, "not built with CUDA")) GTEST_SKIP() << "this gpubench is built with CUDA (scripts/nocuda.sh builds one without)";
  }
};

TEST_F(NoCudaBuild, VersionSaysSoAndListsTheCpuLibraries) {
  const Output r = gpubench("version");
  EXPECT_TRUE(contains(r.out, "CUDA: not built with CUDA (GPUBENCH_WITH_CUDA=OFF)")) << r.out;
  EXPECT_FALSE(contains(r.out, "CUDA runtime")) << r.out;
  EXPECT_TRUE(contains(r.out, "openblas: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "cublas: not built with CUDA")) << r.out;
}

TEST_F(NoCudaBuild, ListPlansCpuCasesAndSaysWhyThereAreNoGpuCases) {
  Output r = gpubench("list");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "no CUDA device: not built with CUDA; GPU cases skipped")) << r.err;
  EXPECT_TRUE(contains(r.out, "gemm/") && contains(r.out, "provider=openblas")) << r.out;
  EXPECT_TRUE(contains(r.out, "attention/") && contains(r.out, "memory/")) << r.out;
  EXPECT_FALSE(contains(r.out, "/cuda:")) << r.out;
  // Asking for GPUs explicitly: the same reason, nothing planned.
  r = gpubench("list --device cuda");
  EXPECT_TRUE(contains(r.err, "not built with CUDA")) << r.err;
  EXPECT_TRUE(contains(r.err, "0 case(s)")) << r.err;
  // Planning for a named GPU works (it needs no GPU code) and says this binary could not run it.
  r = gpubench("run --dry-run --assume h200 --suite memory -a test=triad");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "--assume h200: this gpubench is not built with CUDA: the plan is what a build with CUDA "
                              "would run"))
      << r.err;
  EXPECT_TRUE(contains(r.out, "/cuda:0")) << r.out;  // the assumed H200's cases, planned to run
  EXPECT_FALSE(contains(r.out, "skipped:")) << r.out;
}

TEST_F(NoCudaBuild, RunMeasuresCpuCasesAndTheResultsFeedEveryReader) {
  const std::string out = (dir / "cpu.json").string();
  Output r = gpubench(fmt::format("run --suite memory --device cpu -a test=triad -a size=1048576 --min-time 0.01 "
                                  "--profile nvtx,trace,metrics,telemetry,host --out {}",
                                  out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "1 ok, 0 skipped, 0 failed")) << r.err;
  const auto j = nlohmann::json::parse(slurp(out));
  const auto& g = j["context"]["gpubench"];
  EXPECT_EQ(g["cuda"]["available"], false);
  EXPECT_EQ(g["cuda"]["reason"], "not built with CUDA");
  EXPECT_EQ(g["cuda"]["runtime_version"], "not built with CUDA");
  // The CUDA instruments are made and say why they are off; the host sampler works.
  EXPECT_EQ(g["profile"]["nvtx"], "off: not built with CUDA");
  EXPECT_TRUE(contains(g["profile"]["trace"].get<std::string>(), "not built with CUDA")) << g["profile"];
  EXPECT_EQ(g["profile"]["metrics"], "off: not built with CUDA");
  EXPECT_EQ(g["profile"]["host"], "on");
  const auto& entry = j["benchmarks"][0];
  EXPECT_EQ(entry["gpubench"]["status"], "ok") << entry;
  EXPECT_GT(entry["GB/s"].get<double>(), 0) << entry;

  // The readers: report (every format), compare, history.
  r = gpubench(fmt::format("report {} -f md", out));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "triad")) << r.out;
  r = gpubench(fmt::format("report {} -f json", out));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
  r = gpubench(fmt::format("compare {} {}", out, out));
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string again = (dir / "cpu2.json").string();
  r = gpubench(fmt::format("run --suite memory --device cpu -a test=triad -a size=1048576 --min-time 0.01 --out {}", again));
  ASSERT_EQ(r.code, 0) << r.err;
  r = gpubench(fmt::format("history {} {}", out, again));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "triad")) << r.out;

  // A GPU run: nothing to do, and it says why.
  r = gpubench(fmt::format("run --suite memory --device cuda --out {}", (dir / "gpu.json").string()));
  EXPECT_TRUE(contains(r.err, "not built with CUDA")) << r.err;
}

TEST_F(NoCudaBuild, DoctorSaysTheBuildHasNoCudaAndChecksTheHost) {
  const Output r = gpubench("doctor --results-dir " + (dir / "results").string());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "gpubench is not built with CUDA")) << r.out;
  EXPECT_TRUE(contains(r.out, "no CUDA device: not built with CUDA")) << r.out;
  EXPECT_TRUE(contains(r.out, "cuBLAS, NCCL and cuDNN are not used: not built with CUDA")) << r.out;
  EXPECT_FALSE(contains(r.out, "install NVIDIA driver")) << r.out;  // no driver advice: it could not help
  EXPECT_TRUE(contains(r.out, "disk")) << r.out;
}

}  // namespace
}  // namespace gpubench::e2e
