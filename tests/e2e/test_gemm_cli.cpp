// The gemm suite's command-line surface: `tune gemm`, `run --tuning-cache`, --lt-candidates,
// the CPU path of the extended suite (layouts, batches, threads, metrics fields), and grouped
// GEMMs (op=grouped).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>

#include "cli_fixture.hpp"

namespace gpubench {
namespace {

using e2e::Output;
using e2e::slurp;
namespace fs = std::filesystem;

struct GemmCli : e2e::CliTest {
  bool has_gpu() {
    Output list = gpubench("list --suite gemm");
    return list.err.find("no CUDA device:") == std::string::npos;
  }
};

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST_F(GemmCli, TuneWithoutGpuSaysSo) {
  if (has_gpu()) GTEST_SKIP() << "a CUDA device is present";
  Output tune = gpubench("tune gemm --cache " + (dir / "c.json").string());
  EXPECT_EQ(tune.code, 1);
  EXPECT_NE(tune.err.find("gpubench tune: no CUDA device to tune on: "), std::string::npos) << tune.err;
  EXPECT_EQ(lines(tune.err), 1) << tune.err;
  EXPECT_FALSE(fs::exists(dir / "c.json"));  // nothing written
}

TEST_F(GemmCli, TuneUsageErrors) {
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"tune", "gpubench tune: what to tune?"},
           {"tune memory", "gpubench tune: 'memory': tunable targets are gemm, train, dataload"},
           {"tune gemm --lt-candidates 0", "gpubench tune: --lt-candidates 0: expected 1 to 1024"},
           {"tune gemm --suite memory", "gpubench tune: --suite: tune works on the gemm suite only"},
       }) {
    Output o = gpubench(args);
    EXPECT_EQ(o.code, 2) << args;
    EXPECT_EQ(o.err.rfind(message, 0), 0u) << args << ": " << o.err;
    EXPECT_EQ(lines(o.err), 1) << args << ": " << o.err;
  }
  // A malformed existing cache is refused before any GPU time is spent.
  std::ofstream(dir / "bad.json") << "{\"format\": \"gpubench-gemm-tuning\", \"version\": 7}";
  Output o = gpubench("tune gemm --cache " + (dir / "bad.json").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unsupported version 7"), std::string::npos) << o.err;
}

TEST_F(GemmCli, RunWithMalformedTuningCacheIsExitTwoAndOneLine) {
  std::ofstream(dir / "bad.json") << "{not json";
  Output o = gpubench(fmt::format("run --suite gemm --device cpu -q -o {} --tuning-cache {}", (dir / "r.json").string(),
                                  (dir / "bad.json").string()));
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err.rfind(fmt::format("gpubench run: tuning cache {}: not valid JSON (byte ", (dir / "bad.json").string()), 0),
            0u)
      << o.err;
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  Output missing = gpubench(fmt::format("run --suite gemm --device cpu -q -o {} --tuning-cache {}",
                                        (dir / "r.json").string(), (dir / "none.json").string()));
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("none.json: cannot be read"), std::string::npos) << missing.err;
}

TEST_F(GemmCli, ForeignCacheEntriesAreOneWarning) {
  // An entry tuned on another GPU: ignored, with one warning line; the CPU run goes on.
  std::ofstream(dir / "c.json") << R"({"format": "gpubench-gemm-tuning", "version": 1, "entries": [
    {"gpu": "NVIDIA B200", "cc": "10.0", "cublaslt": "0.0.1", "dtype": "bf16", "layout": "tn", "m": 64, "n": 64,
     "k": 64, "batch": 1, "epilogue": "none",
     "algo": {"id": 1, "tile": 2, "stages": 3, "splitk": 1, "reduction": 0, "swizzle": 0, "custom": 0, "inner": 0, "cluster": 0},
     "time_s": 1e-5,
     "default_algo": {"id": 1, "tile": 2, "stages": 3, "splitk": 1, "reduction": 0, "swizzle": 0, "custom": 0, "inner": 0, "cluster": 0},
     "default_time_s": 1e-5, "candidates": 4}]})";
  Output o = gpubench(fmt::format("run --suite gemm --device cpu --axis m=32 --axis dtype=fp32 --min-time 0.01 "
                                  "--warmup 0.005 -q -o {} --tuning-cache {}",
                                  (dir / "r.json").string(), (dir / "c.json").string()));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("warning: tuning cache " + (dir / "c.json").string() + ": 1 of 1 entries are for another GPU"),
            std::string::npos)
      << o.err;
}

TEST_F(GemmCli, CpuLayoutsBatchesAndThreadsRunWithMetrics) {
  const fs::path out = dir / "r.json";
  Output o = gpubench(fmt::format("run --suite gemm --device cpu --axis m=40 --axis n=24 --axis k=16 --axis dtype=fp64 "
                                  "--axis layout=nt,tt --axis batch=2 --axis pad=3 --axis beta=1 --axis threads=1 "
                                  "--min-time 0.01 --warmup 0.005 -q -o {}",
                                  out.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  auto doc = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  for (const auto& b : doc["benchmarks"]) {
    const auto& g = b["gpubench"];
    EXPECT_EQ(g["status"], "ok");
    EXPECT_EQ(g["verification"]["passed"], true);
    const auto& m = g["metrics"];
    EXPECT_EQ(m["rate_unit"], "TFLOP/s");
    EXPECT_DOUBLE_EQ(m["flops"].get<double>(), 2.0 * (2.0 * 40 * 24 * 16 + 2.0 * 40 * 24));
    EXPECT_GT(m["intensity"].get<double>(), 0);
    EXPECT_GT(m["achieved_gbps"].get<double>(), 0);
    EXPECT_GT(m["footprint_bytes"].get<double>(), m["bytes"].get<double>() / 2);
    EXPECT_EQ(m["threads"], 1);
  }
  EXPECT_NE(doc["context"]["gpubench"].dump().find("cublaslt"), std::string::npos);  // library versions
}

TEST_F(GemmCli, ListShowsGpuSkipReasonsForFp8AndInt8) {
  // Planning needs no GPU: the reasons come from the support matrix.
  Output o = gpubench("list --suite gemm --device cpu --axis provider=openblas --axis dtype=fp8-e4m3,int8 --axis m=64");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("skipped: OpenBLAS has no fp8-e4m3 GEMM"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("skipped: OpenBLAS has no int8 GEMM"), std::string::npos) << o.out;
}

// Issue 30's CLI contract for the block-scaled dtypes: on the CPU every case is planned and
// skipped naming what the device lacks (exit 0); a Hopper plan skips them with its reason.
TEST_F(GemmCli, BlockScaledDtypesAreSkippedNamingWhatTheDeviceLacks) {
  const fs::path out = dir / "G.json";
  Output o = gpubench(fmt::format("run --device cpu --suite gemm -a dtype=mxfp8,nvfp4 -a m=256 --out {}", out.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(slurp(out));
  std::set<std::string> dtypes;
  for (const auto& e : j["benchmarks"]) {
    const auto& g = e["gpubench"];
    EXPECT_EQ(g["status"], "skipped") << e["name"];
    EXPECT_NE(g["reason"].get<std::string>().find("the CPU has no block-scaled matrix unit"), std::string::npos) << g;
    dtypes.insert(g["axes"]["dtype"].get<std::string>());
  }
  EXPECT_EQ(dtypes, (std::set<std::string>{"mxfp8", "nvfp4"}));
  o = gpubench("run --dry-run --assume h200 --suite gemm -a dtype=mxfp8,nvfp4 -a m=8192");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("skipped: mxfp8 needs block-scaled Tensor Cores (sm_100 or sm_120, CUDA 12.8+); this GPU is sm_90"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("skipped: nvfp4 needs block-scaled Tensor Cores"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("dry-run: 0 to run"), std::string::npos) << o.out;
}

// The third contract line: on a B200 plan the defaults adapt (layout tn, provider cublaslt) and
// both cases are planned to run, on cuda:0, none skipped. A build whose toolkit has no block
// scaling (CUDA < 12.8, or none) plans them skipped saying so, never silently.
TEST_F(GemmCli, BlockScaledDtypesArePlannedToRunOnB200) {
  const Output o = gpubench("run --dry-run --assume b200 --suite gemm -a dtype=mxfp8,nvfp4 -a m=8192");
  ASSERT_EQ(o.code, 0) << o.err;
  // The B200's lines (the CPU's are planned and skipped as in the CPU contract line).
  std::vector<std::string> gpu;
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/cuda:0 ") != std::string::npos) gpu.push_back(line);
  }
  ASSERT_EQ(gpu.size(), 2u) << o.out;  // cublas dropped: not planned, not skipped
  for (const char* dtype : {"mxfp8", "nvfp4"}) {
    const std::string axes = fmt::format("/provider=cublaslt/dtype={}/layout=tn/m=8192/n=8192/k=8192/", dtype);
    EXPECT_TRUE(std::any_of(gpu.begin(), gpu.end(), [&](const std::string& l) { return l.find(axes) != std::string::npos; }))
        << o.out;
  }
  if (o.out.find("which this build's toolkit lacks") != std::string::npos) {  // CUDA < 12.8: said, never silent
    for (const std::string& l : gpu) EXPECT_NE(l.find("skipped: "), std::string::npos) << l;
    return;
  }
  for (const std::string& l : gpu) EXPECT_EQ(l.find("skipped"), std::string::npos) << l;
  EXPECT_NE(o.out.find("dry-run: 2 to run, 2 skipped"), std::string::npos) << o.out;  // 2 skipped: the CPU's
  // An explicit layout or provider is honoured and skipped with the reason.
  const Output nn = gpubench("run --dry-run --assume b200 --device cuda --suite gemm -a dtype=mxfp8 -a m=256 -a layout=nn -a provider=cublas,cublaslt");
  ASSERT_EQ(nn.code, 0) << nn.err;
  EXPECT_NE(nn.out.find("skipped: cuBLASLt runs mxfp8 only in the TN layout"), std::string::npos) << nn.out;
  EXPECT_NE(nn.out.find("skipped: mxfp8 runs through cuBLASLt's block scaling with its heuristic algorithm only (provider=cublaslt)"),
            std::string::npos) << nn.out;
  EXPECT_NE(nn.out.find("dry-run: 0 to run, 2 skipped"), std::string::npos) << nn.out;
}

// The grouped GEMM's CLI contract, exactly as written: every entry ok, verified, with
// pct_of_dense in gpubench.metrics; the expert counts sum to the tokens.
TEST_F(GemmCli, GroupedGemmContract) {
  const fs::path out = dir / "G.json";
  Output o = gpubench(fmt::format("run --device cpu --suite gemm -a op=grouped -a experts=8 -a routing=uniform,zipf --out {}",
                                  out.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(out));
  const auto& entries = doc["benchmarks"];
  ASSERT_FALSE(entries.empty());
  std::set<std::string> routings;
  for (const auto& e : entries) {
    const auto& g = e["gpubench"];
    EXPECT_EQ(g["status"], "ok") << e["name"] << ": " << g.value("reason", "");
    EXPECT_EQ(g["verification"]["passed"], true) << e["name"];
    EXPECT_GT(g["verification"]["checked"].get<std::int64_t>(), 0) << e["name"];
    EXPECT_EQ(g["axes"]["op"], "grouped");
    EXPECT_EQ(g["axes"]["experts"], 8);
    routings.insert(g["axes"]["routing"].get<std::string>());
    ASSERT_TRUE(g["metrics"].contains("pct_of_dense")) << g.dump();
    EXPECT_GT(g["metrics"]["pct_of_dense"].get<double>(), 0);
    EXPECT_GT(g["metrics"]["dense_tflops"].get<double>(), 0);
    const auto& d = g["details"];
    std::int64_t total = 0;
    for (const auto& c : d["tokens_per_expert"]) total += c.get<std::int64_t>();
    EXPECT_EQ(total, g["axes"]["m"].get<std::int64_t>());
    EXPECT_EQ(d["experts"], 8);
    EXPECT_NE(e["name"].get<std::string>().find("/op=grouped/experts=8/routing="), std::string::npos) << e["name"];
  }
  EXPECT_EQ(routings, (std::set<std::string>{"uniform", "zipf"}));
}

}  // namespace
}  // namespace gpubench
