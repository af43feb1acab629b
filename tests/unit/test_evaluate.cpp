// gpubench evaluate's plan (budget kept, priorities applied, per model and GPU count), its
// per-case estimate, and the scheduler's one worker per GPU at once.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "bench/core/errors.hpp"
#include "bench/evaluate/document.hpp"
#include "bench/evaluate/plan.hpp"
#include "bench/evaluate/scheduler.hpp"
#include "bench/suites/all_suites.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::evaluate {
namespace {

std::vector<DeviceInfo> node(const reports::GpuSpec& g, int n) {
  std::vector<DeviceInfo> v;
  for (int i = 0; i < n; ++i) {
    DeviceInfo d;
    d.kind = DeviceKind::Cuda;
    d.ordinal = i;
    d.name = g.name;
    d.cc_major = 9;  // a Hopper-like part: every item applies
    d.cc_minor = 0;
    d.sm_count = g.sm_count ? static_cast<int>(*g.sm_count) : 100;
    d.memory_bytes = g.memory_gb ? static_cast<std::int64_t>(*g.memory_gb * 1e9) : 80'000'000'000;
    v.push_back(d);
  }
  return v;
}

EstimateSettings settings(const reports::SpecSheet& specs) {
  EstimateSettings s;
  s.allowances = true;
  s.rates = [&specs](const DeviceInfo& d, const std::string& key) { return specs.peak(d.name, key); };
  return s;
}

// The node's storage is read on the host's cpu device, GPU node or not: its cases are the
// storage suite's, planned on the cpu (a GPU plan has none), and kept in a half-hour budget.
TEST(Evaluate, StorageIsPlannedOnTheHostsCpu) {
  const reports::SpecSheet& specs = reports::SpecSheet::builtin();
  const EvaluationPlan p = plan_evaluation(suites::all(), node(specs.gpus().front(), 8), 1800, settings(specs));
  const Item* storage = nullptr;
  for (const Item& i : p.items) {
    if (i.name == "storage") storage = &i;
  }
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->part, "input");
  EXPECT_EQ(storage->where, Where::HostCpu);
  EXPECT_EQ(storage->status, "planned");
  EXPECT_GT(storage->cases, 0u);
  EXPECT_GT(storage->planned_s, 0);
  EXPECT_EQ(storage->arguments(), (std::vector<std::string>{"run", "--suite", "storage"}));
}

// How many GPUs the storage feeds: `tune storage` on the host, unet3d on the node's kind of
// emulated accelerator (A100s for an A100 node, else H100s), up to twice the node's GPUs; a CPU
// node emulates resnet50 on H100s over a small file.
TEST(Evaluate, StorageFeedsRunsTuneStorageForTheNodesGpus) {
  const reports::SpecSheet& specs = reports::SpecSheet::builtin();
  auto feeds = [](const EvaluationPlan& p) {
    for (const Item& i : p.items) {
      if (i.name == "storage-feeds") return i;
    }
    ADD_FAILURE() << "no storage-feeds item";
    return Item{};
  };
  for (const reports::GpuSpec& g : specs.gpus()) {
    const Item i = feeds(plan_evaluation(suites::all(), node(g, 8), 1800, settings(specs)));
    EXPECT_EQ(i.part, "input");
    EXPECT_EQ(i.where, Where::HostCpu);
    EXPECT_EQ(i.status, "planned") << g.key;
    const std::string acc = g.name.find("A100") != std::string::npos ? "a100" : "h100";
    EXPECT_EQ(i.arguments(), (std::vector<std::string>{"tune", "storage", "--budget", "60", "--workload", "unet3d", "--accelerator", acc,
                                                       "--max-accelerators", "16", "--run-time", "2"}))
        << g.key;
  }
  DeviceInfo cpu;
  const Item c = feeds(plan_evaluation(suites::all(), {cpu}, 600, settings(specs)));
  EXPECT_EQ(c.arguments(), (std::vector<std::string>{"tune", "storage", "--budget", "30", "--workload", "resnet50", "--accelerator",
                                                     "h100", "--max-accelerators", "16", "--run-time", "2", "--size", "268435456"}));
}

TEST(Evaluate, EveryModelAndNodeSizeKeepsItsBudget) {
  const reports::SpecSheet& specs = reports::SpecSheet::builtin();
  for (const reports::GpuSpec& g : specs.gpus()) {
    for (int n : {1, 2, 4, 8}) {
      for (double budget : {1800.0, 600.0, 120.0}) {
        const EvaluationPlan p = plan_evaluation(suites::all(), node(g, n), budget, settings(specs));
        EXPECT_LE(p.planned_s, budget) << g.key << ":" << n << " budget " << budget;
        EXPECT_GT(p.kept().size(), 1u) << g.key << ":" << n;  // the check and at least the first screen item
        for (const Item& i : p.items) {
          if (i.part == "node" && n == 1) {
            EXPECT_EQ(i.status.rfind("skipped: needs 2 devices", 0), 0u) << i.name;
          }
        }
      }
    }
  }
}

TEST(Evaluate, ASmallBudgetDropsByPriorityAndSaysWhy) {
  const reports::SpecSheet& specs = reports::SpecSheet::builtin();
  const EvaluationPlan p = plan_evaluation(suites::all(), node(specs.gpus().front(), 8), 40, settings(specs));
  ASSERT_FALSE(p.dropped().empty());
  const Item* first = nullptr;
  for (const Item& i : p.items)
    if (i.name == "gemm-bf16") first = &i;
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->status, "planned");  // priority 1 is kept
  for (const Item* d : p.dropped()) {
    EXPECT_NE(d->status.find("with"), std::string::npos) << d->status;  // "needs N s with M s of the budget left"
    EXPECT_GT(d->planned_s, 0);
    EXPECT_GT(d->priority, first->priority);
  }
  EXPECT_LE(p.planned_s, 40);
}

TEST(Evaluate, RunOrderIsPartByPart) {
  const reports::SpecSheet& specs = reports::SpecSheet::builtin();
  const EvaluationPlan p = plan_evaluation(suites::all(), node(specs.gpus().front(), 2), 1800, settings(specs));
  const std::vector<std::string> order{"check", "screen", "depth", "node", "input", "media"};
  std::size_t last = 0;
  for (const Item& i : p.items) {
    const std::size_t at = static_cast<std::size_t>(std::find(order.begin(), order.end(), i.part) - order.begin());
    EXPECT_GE(at, last) << i.name;
    last = at;
  }
}

// The data-parallel step: one rank per device, planned as one rank's case on a node of GPUs;
// the CPU's node items need an mpirun team and say so on a plain run.
TEST(Evaluate, RankItemsArePlannedPerRankAndNeedRanksOnTheCpu) {
  const reports::SpecSheet& specs = reports::SpecSheet::builtin();
  const EvaluationPlan p = plan_evaluation(suites::all(), node(specs.gpus().front(), 8), 1800, settings(specs));
  const auto find = [](const EvaluationPlan& plan, const std::string& name) -> const Item* {
    for (const Item& i : plan.items)
      if (i.name == name) return &i;
    return nullptr;
  };
  const Item* dp = find(p, "dp-step");
  ASSERT_NE(dp, nullptr);
  EXPECT_EQ(dp->part, "node");
  EXPECT_TRUE(dp->ranks_per_device);
  EXPECT_EQ(dp->status, "planned");
  EXPECT_EQ(dp->cases, 1u);  // each rank's own case, not one per GPU
  bool ddp = false;
  for (const std::string& a : dp->arguments()) ddp = ddp || a == "dp=ddp";
  EXPECT_TRUE(ddp);
  // The NCCL_ALGO variants: each its own process's variable, planned on a node of GPUs.
  for (const char* name : {"all-reduce-ring", "all-reduce-nvls"}) {
    const Item* i = find(p, name);
    ASSERT_NE(i, nullptr) << name;
    EXPECT_EQ(i->status, "planned");
    ASSERT_EQ(i->env.size(), 1u);
    EXPECT_EQ(i->env[0], std::string(name) == "all-reduce-ring" ? "NCCL_ALGO=Ring" : "NCCL_ALGO=NVLS");
  }
  const EvaluationPlan one = plan_evaluation(suites::all(), node(specs.gpus().front(), 1), 1800, settings(specs));
  EXPECT_EQ(find(one, "all-reduce-nvls")->status.rfind("skipped: needs 2 devices", 0), 0u);
  DeviceInfo cpu;
  cpu.kind = DeviceKind::Cpu;
  cpu.name = "a CPU";
  const EvaluationPlan plain = plan_evaluation(suites::all(), {cpu}, 180, settings(specs));
  for (const char* name : {"all-reduce", "dp-step"}) {
    const Item* i = find(plain, name);
    ASSERT_NE(i, nullptr) << name;
    EXPECT_EQ(i->status, "skipped: needs 2 ranks: run evaluate under mpirun -np N or srun") << name;
  }
}

TEST(Evaluate, BudgetParsing) {
  EXPECT_EQ(parse_budget("30m"), 1800);
  EXPECT_EQ(parse_budget("90"), 90);
  EXPECT_THROW(parse_budget("0"), UsageError);
  EXPECT_THROW(parse_budget("1x"), UsageError);
  EXPECT_THROW(parse_budget("8d"), UsageError);
}

TEST(Evaluate, EstimatePlansAHugeCaseFromItsWork) {
  // 4 x 2 x 1e6^2 x 64 FLOPs of attention: hours on any CPU, not the policy's half second.
  PlanRequest r;
  r.suites = {"attention"};
  r.axis_overrides = {"seq_q=1000000", "seq_kv=1000000", "phase=prefill", "direction=fwd", "causal=0", "provider=flash"};
  DeviceInfo cpu;
  cpu.kind = DeviceKind::Cpu;
  const std::vector<PlannedCase> plan = make_plan(suites::all(), r, {cpu});
  ASSERT_FALSE(plan.empty());
  EstimateSettings s;
  s.rates = [](const DeviceInfo&, const std::string&) { return std::optional<double>(1.0); };  // 1 TFLOP/s
  const CaseEstimate e = estimate_case(plan.front(), s);
  EXPECT_GT(e.run_s, 3600);
  EXPECT_GT(e.seconds, 10 * e.run_s);  // warm-up, ten samples and verification, each a run
}

TEST(Evaluate, WorkersRunAtOnceSoTheTimeDoesNotGrowWithTheirCount) {
  auto timed = [](int n) {
    std::vector<Worker> ws(static_cast<std::size_t>(n), Worker{{"-c", "sleep 1"}, "", {}});
    const auto t0 = Clock::now();
    const std::vector<WorkerResult> r = run_workers("/bin/sh", ws);
    for (const WorkerResult& w : r) EXPECT_EQ(w.exit_code, 0);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  const double one = timed(1), eight = timed(8);
  EXPECT_GE(one, 0.9);
  EXPECT_LT(eight, one + 0.8) << "8 stand-in workers took " << eight << " s, one " << one << " s";
}

TEST(Evaluate, AWorkerPastItsStopTimeIsInterrupted) {
  const auto t0 = Clock::now();
  const std::vector<WorkerResult> r =
      run_workers("/bin/sh", {Worker{{"-c", "sleep 30"}, "", {}}}, Clock::now() + std::chrono::milliseconds(300), 2);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].stopped);
  EXPECT_EQ(r[0].signal, SIGINT);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5);
}

// Started from a process that ignores SIGINT (a shell's background job, nohup; an ignored
// signal stays ignored across exec), a worker still stops on the SIGINT it is sent at its stop
// time, and does not wait for the SIGKILL after the grace period.
TEST(Evaluate, AWorkerStopsOnSigintEvenWhenTheParentIgnoresIt) {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &ignore, &old), 0);
  const auto t0 = Clock::now();
  const std::vector<WorkerResult> r =
      run_workers("/bin/sh", {Worker{{"-c", "sleep 30"}, "", {}}}, Clock::now() + std::chrono::milliseconds(300), 20);
  ::sigaction(SIGINT, &old, nullptr);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].stopped);
  EXPECT_EQ(r[0].signal, SIGINT);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10);  // not the 20 s grace
}

// A worker's own variables (NCCL_ALGO for a variant of the all-reduce) replace the parent's of
// the same name and reach no other worker.
TEST(Evaluate, AWorkersEnvironmentIsItsOwn) {
  ::setenv("GPUBENCH_TEST_ALGO", "parent", 1);
  const std::string dir = ::testing::TempDir();
  Worker a{{"-c", "printf '%s' \"$GPUBENCH_TEST_ALGO\""}, dir + "/worker-a.log", {"GPUBENCH_TEST_ALGO=Ring"}};
  Worker b{{"-c", "printf '%s' \"$GPUBENCH_TEST_ALGO\""}, dir + "/worker-b.log", {}};
  const std::vector<WorkerResult> r = run_workers("/bin/sh", {a, b});
  ::unsetenv("GPUBENCH_TEST_ALGO");
  ASSERT_EQ(r.size(), 2u);
  auto text = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text(a.log), "Ring");
  EXPECT_EQ(text(b.log), "parent");
}

// NCCL refusing NCCL_ALGO=NVLS fails every case of the variant: the item is then skipped with
// the reason; one case that ran keeps it an ordinary item.
TEST(Evaluate, AVariantEveryCaseOfWhichFailedWasRefused) {
  auto file = [](std::initializer_list<const char*> statuses) {
    json f{{"benchmarks", json::array()}};
    for (const char* s : statuses) {
      f["benchmarks"].push_back({{"gpubench", {{"status", s}, {"reason", "NCCL: no algorithm for NVLS"}}}});
    }
    return f;
  };
  EXPECT_EQ(refused_everywhere(file({"failed", "failed"})), "NCCL: no algorithm for NVLS");
  EXPECT_EQ(refused_everywhere(file({"failed", "ok"})), "");
  EXPECT_EQ(refused_everywhere(file({})), "");
  EXPECT_EQ(refused_everywhere(json()), "");
}

TEST(Evaluate, MedianDeviceOfTheScreen) {
  json b = json::array();
  const std::vector<std::pair<std::string, double>> figs{{"cuda:0", 700}, {"cuda:1", 650}, {"cuda:2", 720}, {"cuda:3", 690}};
  for (const auto& [dev, tf] : figs) {
    b.push_back({{"gpubench", {{"device", dev}, {"status", "ok"}, {"metrics", {{"tflops", tf}}},
                               {"evaluate", {{"part", "screen"}, {"item", "gemm-bf16"}}}}}});
  }
  EXPECT_EQ(median_device(b).value_or(""), "cuda:3");  // 650 690 | 700 720: the lower middle
  EXPECT_FALSE(median_device(json::array()).has_value());
}

}  // namespace
}  // namespace gpubench::evaluate
