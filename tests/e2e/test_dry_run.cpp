// `run --dry-run`, `tune gemm --dry-run` and `--assume MODEL`: plans against a named GPU model
// on a machine without one, with the estimate scripts/gpu-smoke.sh --dry-run sums.
#include <regex>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

using DryRun = CliTest;

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
}

constexpr const char* kShort = "--min-time 0.02 --warmup 0.01 --min-samples 5";

TEST_F(DryRun, PlansHopperPeaksAgainstAnAssumedH200) {
  // Per case: 2 x 0.01 warm-up + max(0.02, 5 x 0.002) timed + 0.1 setup = 0.14 s; one process start 2 s.
  const Output o = gpubench(fmt::format("run --dry-run --assume h200 --device cuda --suite memory --axis test=mma_fp8,mma_bf16 {}", kShort));
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(last_line(o.out), "dry-run: 2 to run, 0 skipped, about 2.3 s") << o.out;
  EXPECT_NE(o.out.find("memory/test=mma_fp8"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("skipped:"), std::string::npos) << o.out;
}

// Issue 25's CLI contract: on an H200 every dense Tensor Core peak is a wgmma loop, and the plan
// says so; on an A100 they are mma.sync, the instruction that reaches Ampere's rate.
TEST_F(DryRun, HopperTensorPeaksAreWgmmaAndThePlanSaysTheInstruction) {
  const Output o = gpubench("run --dry-run --assume h200 --suite memory");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* dtype : {"fp16", "bf16", "tf32", "int8", "fp8"}) {
    const std::regex line(fmt::format("memory/test=mma_{}/size=0/peer=0/cuda:0 .*\\(instruction: wgmma\\.mma_async m64n256k(8|16|32)\\)",
                                      dtype));
    EXPECT_TRUE(std::regex_search(o.out, line)) << dtype << "\n" << o.out;
  }
  const Output a = gpubench("run --dry-run --assume a100-sxm-80gb --suite memory --axis test=mma_bf16");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find("(instruction: mma.sync m16n8k16)"), std::string::npos) << a.out;
}

// `--assume MODEL:N`: a node of N such GPUs, peers of each other, so that peer copies are
// planned for every ordered pair (N (N - 1)); plain `--assume MODEL` is one GPU, with no pair.
TEST_F(DryRun, AnAssumedNodeOfEightPlansEveryPeerPair) {
  const Output o = gpubench(fmt::format("run --dry-run --assume h200-sxm:8 --device cuda --suite memory --axis test=p2p,p2p_bidir "
                                        "--axis size=256M {}", kShort));
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(last_line(o.out).rfind("dry-run: 112 to run, 0 skipped, about ", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("memory/test=p2p/size=268435456/peer=7/cuda:6 "), std::string::npos) << o.out;
  const Output one = gpubench(fmt::format("run --dry-run --assume h200-sxm --device cuda --suite memory --axis test=p2p "
                                          "--axis size=256M {}", kShort));
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("dry-run: 0 to run"), std::string::npos) << one.out;
  for (const char* bad : {"h200-sxm:0", "h200-sxm:65", "h200-sxm:x", "h200-sxm:"}) {
    const Output b = gpubench(fmt::format("run --dry-run --assume {} --suite memory", bad));
    EXPECT_EQ(b.code, 2) << bad;
    EXPECT_NE(b.err.find("the GPU count after ':' should be a whole number from 1 to 64"), std::string::npos) << b.err;
  }
}

TEST_F(DryRun, AnAmpereModelSkipsWgmmaWithTheReason) {
  const Output o = gpubench(
      "run --dry-run --assume a100-sxm-80gb --device cuda --suite gemm --axis provider=custom:wgmma,cublas --axis dtype=bf16 --axis m=256");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(last_line(o.out).rfind("dry-run: 1 to run, 1 skipped, about ", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("skipped: "), std::string::npos) << o.out;
}

TEST_F(DryRun, RepetitionsAndIsolationCount) {
  // 3 repetitions of 0.14 s, plus a process per case under --isolate: 2 + 3 x 0.14 + 2 = 4.42.
  const Output o = gpubench(fmt::format(
      "run --dry-run --assume h200 --device cuda --suite memory --axis test=triad --axis size=1M {} --isolate "
      "--benchmark_repetitions=3", kShort));
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(last_line(o.out), "dry-run: 1 to run, 0 skipped, about 4.4 s") << o.out;
}

TEST_F(DryRun, CollectivesPlanOnTheAssumedGpu) {
  // gpus=0 (every GPU from the case's) on a machine whose runtime reports none once divided by
  // zero ranks; the assumed device is one GPU.
  const Output o = gpubench("run --dry-run --assume h200 --device cuda --suite collectives --preset quick");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(last_line(o.out).rfind("dry-run: ", 0), 0u) << o.out;
  EXPECT_EQ(last_line(o.out).find(" 0 to run"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("skipped: gpus="), std::string::npos) << o.out;
}

TEST_F(DryRun, WritesNothing) {
  const fs::path out = dir / "results.json";
  const Output o = gpubench(fmt::format("run --dry-run --device cpu --suite memory --axis test=triad --axis size=1M --out {} "
                                        "--trace-dir {}",
                                        out.string(), (dir / "traces").string()));
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(last_line(o.out).rfind("dry-run: 1 to run, 0 skipped, about ", 0), 0u) << o.out;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(dir / "traces"));
}

TEST_F(DryRun, TunePlansEachShapeOnce) {
  // Per shape: 0.1 s setup + 8 candidates x 0.006 s; one process start: 2 + 2 x 0.148 = 2.296.
  const Output o = gpubench("tune gemm --dry-run --assume h200 --axis dtype=bf16,fp8-e4m3 --axis m=256 --lt-candidates 8 "
                            "--cache " + (dir / "never-written.json").string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(last_line(o.out), "dry-run: 2 to run, 0 skipped, about 2.3 s") << o.out;
  EXPECT_FALSE(fs::exists(dir / "never-written.json"));
}

TEST_F(DryRun, ListAcceptsAnAssumedModel) {
  const Output o = gpubench("list --assume h200 --suite memory --axis test=mma_fp8 --device cuda");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("memory/test=mma_fp8"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("skipped"), std::string::npos) << o.out;
}

TEST_F(DryRun, ADeviceNameNamesItsModel) {
  // As nvidia-smi prints it: gpu-smoke.sh plans a real run's steps this way, without a CUDA context.
  const Output o = gpubench("list --assume 'NVIDIA H100 80GB HBM3' --device cuda --suite gemm --axis provider=custom:wgmma "
                            "--axis dtype=bf16 --axis m=256");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("provider=custom:wgmma"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("skipped"), std::string::npos) << o.out;
}

TEST_F(DryRun, UnknownOrAmbiguousModelsAreUsageErrors) {
  Output o = gpubench("run --dry-run --assume h100 --suite memory");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--assume 'h100': matches h100-pcie, h100-sxm; name one"), std::string::npos) << o.err;
  o = gpubench("run --dry-run --assume tpu-v5 --suite memory");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("no GPU model of the spec sheet has this key"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("h200-sxm"), std::string::npos) << o.err;  // the models are listed
}

TEST_F(DryRun, AssumeWithoutDryRunIsRefused) {
  Output o = gpubench("run --assume h200 --suite memory --out " + (dir / "r.json").string());
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("add --dry-run"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
  o = gpubench("tune gemm --assume h200");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("add --dry-run"), std::string::npos) << o.err;
}

TEST_F(DryRun, BadRepetitionsAreUsageErrors) {
  // The dry run takes the same limit as a run (kMaxRepetitions), not one of its own.
  for (const char* bad : {"x", "0", "1001"}) {
    const Output o = gpubench(fmt::format("run --dry-run --device cpu --suite memory --benchmark_repetitions={}", bad));
    EXPECT_EQ(o.code, 2) << bad << ": " << o.out;
    EXPECT_NE(o.err.find("--benchmark_repetitions"), std::string::npos) << o.err;
  }
}

// Issue 41: every preset plans on every GPU model of the spec sheet, on 1, 2, 4 and 8 GPUs (the
// collectives' standard preset once stopped on '8:1G:x2', and memory and dataload on 8 GPUs on
// the combination cap). One dry run per (model, count, preset) plans every suite's preset of that
// name; each suite must appear in it with its cases, the whole plan must stay within a bound, and
// the estimate line must be printed. (The time these plans take is `evaluate`'s subject.)
std::vector<std::string> spec_sheet_models() {
  const nlohmann::json doc = nlohmann::json::parse(slurp(fs::path(GPUBENCH_FIXTURES_DIR) / "../../data/gpus.json"));
  std::vector<std::string> out;
  for (const auto& g : doc.at("gpus")) out.push_back(g.at("key").get<std::string>());
  return out;
}

void plans_everywhere(DryRun& t, const std::string& preset, std::size_t max_cases) {
  const std::vector<std::string> models = spec_sheet_models();
  ASSERT_GE(models.size(), 10u);
  const std::regex estimate("^dry-run: ([0-9]+) to run, ([0-9]+) skipped, about ([0-9.]+) s$");
  for (const std::string& model : models) {
    for (int gpus : {1, 2, 4, 8}) {
      const std::string where = fmt::format("--assume {}:{} --preset {}", model, gpus, preset);
      const Output o = t.gpubench(fmt::format("run --dry-run {}", where));
      ASSERT_EQ(o.code, 0) << where << ": " << o.err;
      std::smatch m;
      const std::string last = last_line(o.out);
      ASSERT_TRUE(std::regex_match(last, m, estimate)) << where << ": " << last;
      const std::size_t cases = std::stoul(m[1]) + std::stoul(m[2]);
      EXPECT_GT(std::stoul(m[1]), 0u) << where;
      EXPECT_LE(cases, max_cases) << where;
      EXPECT_GT(std::stod(m[3]), 0.0) << where;
      for (const char* suite : {"gemm", "memory", "train", "attention", "infer", "dataload", "collectives"}) {
        const std::string first = fmt::format("{}/", suite);
        EXPECT_TRUE(o.out.rfind(first, 0) == 0 || o.out.find("\n" + first) != std::string::npos)
            << where << ": no " << suite << " case";
      }
    }
  }
}

TEST_F(DryRun, TheQuickPresetPlansOnEveryModelAndNodeSize) { plans_everywhere(*this, "quick", 4000); }
TEST_F(DryRun, TheStandardPresetPlansOnEveryModelAndNodeSize) { plans_everywhere(*this, "standard", 20000); }
TEST_F(DryRun, TheFullPresetPlansOnEveryModelAndNodeSize) { plans_everywhere(*this, "full", 65536); }

}  // namespace
}  // namespace gpubench::e2e
