// Issue 27 items 1-2, end to end: every row of data/reference.json names a case gpubench can
// plan on that GPU (`run --dry-run --assume`), and `report` holds results against the rows.
#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct ReferenceCli : CliTest {};

TEST_F(ReferenceCli, EverySelectorMatchesACaseGpubenchCanRunOnThatGpu) {
  const auto doc = nlohmann::json::parse(slurp(fs::path(GPUBENCH_FIXTURES_DIR) / ".." / ".." / "data" / "reference.json"));
  ASSERT_GE(doc["rows"].size(), 30u);
  for (const auto& r : doc["rows"]) {
    const auto& sel = r["selector"];
    // On a node of 8 such GPUs, peers of each other (`--assume MODEL:8`), as the published multi-GPU
    // figures (peer copies, collectives) were measured.
    std::string args = fmt::format("run --dry-run --assume {}:8 --suite {}", r["gpu"].get<std::string>(),
                                   sel["suite"].get<std::string>());
    for (const auto& [axis, v] : sel["axes"].items()) {
      args += fmt::format(" -a {}={}", axis, v.is_string() ? v.get<std::string>() : v.dump());
    }
    const Output o = gpubench(args);
    EXPECT_EQ(o.code, 0) << r["id"] << ": " << args << "\n" << o.err;
    // A build without the cuDNN frontend or cudnn.h (pip could not fetch them) cannot plan the attention suite
    // on a GPU and says so; the CUDA 13 build checks those rows.
    if (sel["suite"] == "attention" && o.err.find("has no cuDNN frontend") != std::string::npos) continue;
    // Every selector axis, with its value as the plan spells it (a rate written "1e6" stays "1e6"),
    // is on one planned case's line: a misspelt value cannot pass as planned.
    std::string wanted;
    for (const auto& [axis, v] : sel["axes"].items()) {
      wanted += fmt::format(" {}={}", axis, v.is_string() ? v.get<std::string>() : v.dump());
    }
    bool on_one_line = false;
    for (std::size_t at = 0; at < o.out.size();) {
      const std::size_t end = std::min(o.out.find('\n', at), o.out.size());
      const std::string line = o.out.substr(at, end - at) + " ";
      at = end + 1;
      bool all = true;
      for (const auto& [axis, v] : sel["axes"].items()) {
        const std::string token = fmt::format(" {}={}", axis, v.is_string() ? v.get<std::string>() : v.dump());
        const std::size_t p = line.find(token);
        if (p == std::string::npos || (line[p + token.size()] != ' ' && line[p + token.size()] != ']')) all = false;
      }
      on_one_line = on_one_line || all;
    }
    EXPECT_TRUE(on_one_line) << r["id"] << ": no planned case has" << wanted << "\n" << o.out;
    // A host without libcudnn (the CUDA 12.4 stage hides the CUDA 13 toolkit's) plans the cuDNN
    // cases skipped, naming the library; the stages that load it check them as runnable.
    if (sel["suite"] == "attention" && o.out.find("skipped: libcudnn.so.9 not found") != std::string::npos) continue;
    // A build without CUDA has no infer CUDA path: the case is planned on the GPU and skipped,
    // saying what is not built (the CUDA builds plan the fp8 serving rows to run).
    if (sel["suite"] == "infer" && o.out.find("dry-run: 0 to run") != std::string::npos) {
      EXPECT_NE(o.out.find("/cuda:0  [infer "), std::string::npos) << r["id"] << "\n" << o.out;
      EXPECT_NE(o.out.find("not built"), std::string::npos) << r["id"] << "\n" << o.out << o.err;
      continue;
    }
    // At least one planned case that is not skipped on that GPU.
    EXPECT_NE(o.out.find("dry-run: "), std::string::npos) << o.out;  // the plan's closing line is on stdout
    EXPECT_EQ(o.out.find("dry-run: 0 to run"), std::string::npos) << r["id"] << ": " << args << "\n" << o.out << o.err;
  }
}

// The CLI contract: an H100 SXM file with gemm bf16 cuBLASLt 8192^3 at 700 TFLOP/s.
TEST_F(ReferenceCli, AReportShowsPercentOfPublishedAndNamesTheSource) {
  const fs::path f = fs::path(GPUBENCH_FIXTURES_DIR) / "reports" / "compare_base.json";
  const fs::path md = dir / "R.md";
  const Output o = gpubench(fmt::format("report {} --format md,json --out {}", f.string(), md.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = slurp(md);
  EXPECT_NE(text.find("% of published"), std::string::npos);
  EXPECT_NE(text.find("m=8192 n=8192 k=8192 dtype=bf16 provider=cublaslt on NVIDIA H100 80GB HBM3 @ ci-1: 700 TFLOP/s, 88% "
                      "of the published 794.5 TFLOP/s (ml-engineering MAMF, torch 2.7.0+cu126, CUDA 12.6"),
            std::string::npos)
      << text;
  const auto j = nlohmann::json::parse(slurp(dir / "R.json"));
  bool found = false;
  for (const auto& c : j["cases"]) {
    if (c["suite"] != "gemm" || c["axes"]["m"] != 8192 || c["axes"]["dtype"] != "bf16") continue;
    for (const auto& v : c["runs"]) {
      if (v.is_null() || !v.contains("pct_of_published")) continue;
      EXPECT_NEAR(v["pct_of_published"].get<double>(), 100 * 700 / 794.5, 0.01);
      EXPECT_EQ(v["published"]["id"], "h100-sxm/mamf-bf16");
      found = true;
    }
  }
  EXPECT_TRUE(found) << j.dump().substr(0, 3000);
  // OpenMetrics carries it too.
  const Output om = gpubench(fmt::format("report {} -f openmetrics", f.string()));
  EXPECT_NE(om.out.find("gpubench_pct_of_published{"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::e2e

namespace gpubench::e2e {
namespace {

// The MAMF search on the CPU (issue 27 item 3): the CLI contract's fields, on a small range
// and budget (the contract's own 30 s budget runs in 19 s here; CI keeps this one short).
TEST_F(ReferenceCli, TuneGemmMamfOnTheCpuFindsAShapeWithinItsBudget) {
  const fs::path out = dir / "M.json";
  const auto t0 = std::chrono::steady_clock::now();
  const Output o = gpubench(fmt::format("tune gemm --mamf --device cpu -a dtype=fp32 --budget 6 --mamf-m 256:1024:256 -q "
                                        "--out {}",
                                        out.string()));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_LT(wall, 6 + 5) << "the budget, plus starting and the FMA ceiling";
  const auto doc = nlohmann::json::parse(slurp(out));
  const auto& m = doc["gpubench"]["mamf"];
  EXPECT_GT(m["tflops"].get<double>(), 0);
  for (const char* k : {"m", "n", "k"}) EXPECT_EQ(m["shape"][k].get<long>() % 256, 0) << m.dump();
  // The CPU has no datasheet entry: the reason is said instead.
  EXPECT_TRUE(m.contains("pct_of_datasheet") || m.contains("pct_of_datasheet_reason")) << m.dump();
  EXPECT_GT(m["pct_of_fma_ceiling"].get<double>(), 0);
  EXPECT_GE(m["search"]["measured"].get<int>(), 1);
  // Every measurement is an entry of the gemm suite, verified, in the results file.
  int measured = 0;
  for (const auto& e : doc["benchmarks"]) {
    if (e["gpubench"]["suite"] == "gemm") {
      ++measured;
      EXPECT_EQ(e["gpubench"]["verification"]["passed"], true);
    }
  }
  EXPECT_EQ(measured, m["search"]["measured"].get<int>() + m["search"]["finalists"].get<int>());
  // Bad ranges and budgets are one line, exit 2.
  for (const char* bad : {"--mamf-m 0", "--mamf-m 100:50:10", "--budget 1", "--mamf-m 100 --mamf-n 100 --mamf-k 100",
                          "-a dtype=bogus"}) {
    const Output b = gpubench(fmt::format("tune gemm --mamf --device cpu {} --out {}", bad, (dir / "B.json").string()));
    EXPECT_EQ(b.code, 2) << bad << ": " << b.err;
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << bad << ": " << b.err;
  }
}

}  // namespace
}  // namespace gpubench::e2e
