// End-to-end: `gpubench evaluate` through the real binary: the CLI contract of issue 42 (the
// per-part dry-run plans fitted to the budget for six GPU models, a CPU evaluation within its
// budget whose report begins with the node card, two MPI ranks' screen entries, and exit 2 with
// one line for a bad budget).
#include <sys/wait.h>
#include <unistd.h>
#include <thread>
#include <csignal>
#include <set>
#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

using EvaluateCli = CliTest;

double planned_total(const std::string& out) {
  const std::string key = "evaluate dry-run: ";
  const auto at = out.rfind(key);
  if (at == std::string::npos) return -1;
  const auto about = out.find("about ", at);
  return about == std::string::npos ? -1 : std::stod(out.substr(about + 6));
}

TEST_F(EvaluateCli, DryRunFitsEveryModelInItsBudget) {
  for (const char* model : {"h100-sxm:8", "h200-sxm:8", "b200:8", "a100-sxm-80gb:8", "l40s:8", "rtx-4090:1"}) {
    for (const auto& [budget, limit] : {std::pair<const char*, double>{"30m", 1800}, {"10m", 600}}) {
      const Output o = gpubench(fmt::format("evaluate --dry-run --assume {} --budget {}", model, budget));
      ASSERT_EQ(o.code, 0) << model << ": " << o.err;
      for (const char* part : {"part check:", "part screen:", "part depth:", "part node:", "part input:"}) {
        EXPECT_NE(o.out.find(part), std::string::npos) << model << " " << part << "\n" << o.out;
      }
      const double total = planned_total(o.out);
      EXPECT_GT(total, 0) << o.out;
      EXPECT_LE(total, limit) << model << " " << budget;
    }
  }
}

TEST_F(EvaluateCli, ATightBudgetNamesWhatItDropped) {
  const Output o = gpubench("evaluate --dry-run --assume h100-sxm:8 --budget 2m");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("\ndropped: "), std::string::npos) << o.out;
  EXPECT_LE(planned_total(o.out), 120);
}

TEST_F(EvaluateCli, BadSlosAreOneLineAndExit2) {
  for (const char* slo : {"ttft=2", "itl=5ms", "ttft=2s,ttft=1s", "latency=1s"}) {
    const Output o = gpubench(fmt::format("evaluate --dry-run --device cpu --slo {}", slo));
    EXPECT_EQ(o.code, 2) << slo;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find("--slo"), std::string::npos) << o.err;
  }
}

TEST_F(EvaluateCli, BadBudgetsAreOneLineAndExit2) {
  for (const char* b : {"0", "1x", "-5m"}) {
    const Output o = gpubench(fmt::format("evaluate --budget {} --device cpu", b));
    EXPECT_EQ(o.code, 2) << b;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_NE(o.err.find("--budget"), std::string::npos) << o.err;
  }
}

TEST_F(EvaluateCli, CpuEvaluationWithinItsBudgetLeadsWithTheCard) {
  const fs::path e = dir / "E.json";
  const auto t0 = std::chrono::steady_clock::now();
  const Output o =
      gpubench(fmt::format("evaluate --device cpu --budget 3m --slo ttft=2s,tpot=500ms --out {} --report md,html", e.string()));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_LT(took, 200);
  const auto doc = nlohmann::json::parse(slurp(e));
  const auto& ev = doc["context"]["gpubench"]["evaluate"];
  EXPECT_EQ(ev["budget_s"].get<double>(), 180);
  for (const auto& p : ev["parts"]) {
    EXPECT_TRUE(p.contains("planned_s")) << p.dump();
    if (p["status"] == "ran") {
      EXPECT_TRUE(p.contains("measured_s")) << p.dump();
    }
  }
  bool screen = false;
  for (const auto& b : doc["benchmarks"]) screen |= b["gpubench"]["evaluate"]["part"] == "screen";
  EXPECT_TRUE(screen);
  const std::string md = slurp(dir / "E.md");
  const auto card = md.find("Node card");
  ASSERT_NE(card, std::string::npos) << md.substr(0, 400);
  EXPECT_LT(card, md.find("\n## ", md.find('\n')) == std::string::npos ? md.size() : md.find("\n## ", card) + 1);
  EXPECT_TRUE(fs::exists(dir / "E.html"));
  // The input part's loader search: tune dataload's recommendation, on the card with its stall.
  ASSERT_TRUE(doc["gpubench"].contains("tuning")) << "no gpubench.tuning from the loader-cores item";
  EXPECT_TRUE(doc["gpubench"]["tuning"]["recommended"].contains("loader_cores"));
  const auto row = md.find("| input | loader cores per GPU under the stall target | ");
  ASSERT_NE(row, std::string::npos) << md.substr(0, 4000);
  EXPECT_NE(md.substr(row, 400).find("% stall for a consumer of 800 samples/s"), std::string::npos) << md.substr(row, 400);
  // The input part's storage-feeds item: tune storage's curve, on the card as GPUs fed.
  ASSERT_TRUE(doc["gpubench"].contains("storage_au")) << "no gpubench.storage_au from the storage-feeds item";
  EXPECT_FALSE(doc["gpubench"]["storage_au"]["curve"].empty());
  EXPECT_NE(md.find("| input | GPUs this storage feeds (MLPerf Storage's AU) | "), std::string::npos) << md.substr(0, 4000);
  // The stated SLO: recorded, and the goodput row counts against it.
  EXPECT_EQ(ev["slo"]["ttft_ms"].get<double>(), 2000);
  EXPECT_EQ(ev["slo"]["tpot_ms"].get<double>(), 500);
  EXPECT_NE(md.find("serving goodput at the SLO (TTFT ≤ 2000 ms, TPOT ≤ 500 ms)"), std::string::npos) << md.substr(0, 3000);
  // Without mpirun the CPU's node items say what they need.
  EXPECT_NE(md.find("needs 2 ranks: run evaluate under mpirun -np N or srun"), std::string::npos);
}

TEST_F(EvaluateCli, TwoMpiRanksBothHaveScreenEntries) {
  if (sh("command -v mpirun").code != 0) GTEST_SKIP() << "mpirun not installed (openmpi-bin)";
  if (gpubench("version").out.find("\nmpi: ") == std::string::npos) GTEST_SKIP() << "gpubench built without MPI";
  const fs::path m = dir / "M.json";
  const Output o = sh(fmt::format("timeout 300 mpirun {} --oversubscribe --bind-to none -np 2 {} evaluate --device cpu "
                                  "--budget 3m --out {} --report md -q",
                                  ::geteuid() == 0 ? "--allow-run-as-root" : "", GPUBENCH_BINARY, m.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(m));
  std::set<int> ranks;
  for (const auto& b : doc["benchmarks"]) {
    if (b["gpubench"]["evaluate"]["part"] != "screen" || !b["gpubench"].contains("ranks")) continue;
    for (const auto& r : b["gpubench"]["ranks"]) ranks.insert(r["rank"].get<int>());
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
  // The node part over the ranks: the all-reduce and the data-parallel step ran, verified, and
  // the card projects the step to 64 and 512 GPUs from them, with the model's error at 2 ranks.
  std::set<std::string> node_items;
  for (const auto& b : doc["benchmarks"]) {
    const auto& g = b["gpubench"];
    if (g["evaluate"]["part"] != "node") continue;
    EXPECT_EQ(g["status"], "ok") << b["name"];
    node_items.insert(g["evaluate"]["item"].get<std::string>());
    if (g["evaluate"]["item"] == "dp-step") {
      EXPECT_EQ(g["axes"]["dp"], "ddp");
    }
  }
  EXPECT_EQ(node_items, (std::set<std::string>{"all-reduce", "dp-step"}));
  const std::string md = slurp(dir / "M.md");
  EXPECT_NE(md.find("Node card"), std::string::npos);
  for (const char* row : {"| node | data-parallel step scaling efficiency |", "| node | data-parallel step at 64 GPUs (projected) |",
                          "| node | data-parallel step at 512 GPUs (projected) |"}) {
    EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md.substr(0, 4000);
  }
  EXPECT_NE(md.find("at the measured 2 ranks it projects"), std::string::npos);
}

// Ctrl-C during an item: the item's worker stops keeping what it finished, the evaluation merges
// every finished item and that worker's cases, writes its file and report, and exits 130.
TEST_F(EvaluateCli, AnInterruptionKeepsEveryFinishedItemAndWritesTheReport) {
  const fs::path e = dir / "I.json";
  const std::string cmd = fmt::format("{} evaluate --device cpu --budget 3m --out {} --report md -q", GPUBENCH_BINARY, e.string());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + cmd + " >/dev/null 2>&1").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the screen's first items are in the file (it is rewritten after every item).
  bool screened = false;
  for (int i = 0; i < 1200 && !screened; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!fs::exists(e)) continue;
    const auto doc = nlohmann::json::parse(slurp(e));
    for (const auto& b : doc["benchmarks"]) screened |= b["gpubench"]["evaluate"]["item"] == "hbm-triad";
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(screened) << "the screen never reached the file";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const auto doc = nlohmann::json::parse(slurp(e));
  std::set<std::string> items;
  for (const auto& b : doc["benchmarks"]) items.insert(b["gpubench"]["evaluate"]["item"].get<std::string>());
  EXPECT_TRUE(items.count("gemm-bf16") && items.count("hbm-triad")) << doc["benchmarks"].size();
  bool interrupted_or_unrun = false;
  for (const auto& p : doc["context"]["gpubench"]["evaluate"]["parts"]) {
    for (const auto& i : p["items"]) {
      const std::string st = i.value("status", "");
      interrupted_or_unrun |= st == "stopped: interrupted" || st == "not run";
      EXPECT_EQ(st.rfind("failed", 0), std::string::npos) << i.dump();
    }
  }
  EXPECT_TRUE(interrupted_or_unrun);
  EXPECT_NE(slurp(dir / "I.md").find("Node card"), std::string::npos);
}

}  // namespace
}  // namespace gpubench::e2e
