// The collectives suite without MPI or GPUs: bus-bandwidth factors and count rounding per
// operation, exact-check inputs for every operation, type and reduction (against a naive
// simulation of each collective on typed buffers), launcher detection, and the harness's
// agreement of several ranks through a fake team.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "bench/core/harness.hpp"
#include "bench/core/launch.hpp"
#include "bench/suites/collectives/collectives.hpp"
#include "bench/suites/collectives/progress.hpp"
#include "fake_suite.hpp"
#include "kernels/common/rows.hpp"
#include "test_util.hpp"

namespace gpubench::suites::collectives {
namespace {

TEST(CollectivesOps, BusFactorsAreNcclTests) {
  // nccl-tests doc/PERFORMANCE.md: all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall
  // (n-1)/n; broadcast, reduce, sendrecv 1.
  for (int n : {1, 2, 3, 4, 8, 16}) {
    const double nn = n;
    EXPECT_DOUBLE_EQ(all_reduce_op().bus_factor(n), 2 * (nn - 1) / nn);
    EXPECT_DOUBLE_EQ(all_gather_op().bus_factor(n), (nn - 1) / nn);
    EXPECT_DOUBLE_EQ(reduce_scatter_op().bus_factor(n), (nn - 1) / nn);
    EXPECT_DOUBLE_EQ(alltoall_op().bus_factor(n), (nn - 1) / nn);
    EXPECT_DOUBLE_EQ(broadcast_op().bus_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(reduce_op().bus_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(sendrecv_op().bus_factor(n), 1.0);
  }
  EXPECT_EQ(operations().size(), 9u);
}

TEST(CollectivesOps, CountRounding) {
  // 10 elements on 4 ranks.
  auto counts = [](const Operation& op) { return op.counts(CountArgs{10, 4, 0}); };
  Counts c = counts(all_reduce_op());
  EXPECT_EQ(c.send, 10);
  EXPECT_EQ(c.recv, 10);
  EXPECT_EQ(c.param, 10);
  EXPECT_EQ(c.bus_elements, 10);
  c = counts(all_gather_op());  // 2 per rank, 8 gathered
  EXPECT_EQ(c.send, 2);
  EXPECT_EQ(c.recv, 8);
  EXPECT_EQ(c.param, 2);
  EXPECT_EQ(c.bus_elements, 8);
  c = counts(reduce_scatter_op());  // 8 reduced, 2 kept
  EXPECT_EQ(c.send, 8);
  EXPECT_EQ(c.recv, 2);
  EXPECT_EQ(c.param, 2);
  EXPECT_EQ(c.bus_elements, 8);
  c = counts(alltoall_op());  // 4 blocks of 2
  EXPECT_EQ(c.send, 8);
  EXPECT_EQ(c.recv, 8);
  EXPECT_EQ(c.param, 2);
  EXPECT_EQ(c.bus_elements, 8);
  for (const Operation* op : {&broadcast_op(), &reduce_op(), &sendrecv_op()}) {
    c = counts(*op);
    EXPECT_EQ(c.send, 10) << op->name;
    EXPECT_EQ(c.recv, 10) << op->name;
    EXPECT_EQ(c.bus_elements, 10) << op->name;
  }
}

TEST(CollectivesOps, SizesThatGiveNoElementAreUnsupported) {
  EXPECT_TRUE(size_unsupported(all_gather_op(), 8, Dtype::F32, 4, 0).has_value());  // 2 elements, 4 ranks
  EXPECT_FALSE(size_unsupported(all_gather_op(), 16, Dtype::F32, 4, 0).has_value());
  EXPECT_FALSE(size_unsupported(all_reduce_op(), 8, Dtype::F32, 4, 0).has_value());
  EXPECT_TRUE(size_unsupported(all_reduce_op(), 6, Dtype::F32, 1, 0).has_value());  // not whole elements
  EXPECT_FALSE(size_unsupported(all_reduce_op(), 6, Dtype::F16, 1, 0).has_value());
}

TEST(CollectivesExact, Fp8RoundTripsItsExactIntegers) {
  for (Dtype t : {Dtype::F8E4M3, Dtype::F8E5M2}) {
    for (int v = 0; v <= static_cast<int>(info(t).max_exact); ++v) EXPECT_EQ(round_to(t, v), v) << info(t).name;
    EXPECT_NE(round_to(t, info(t).max_exact + 1), info(t).max_exact + 1) << info(t).name;
  }
  EXPECT_EQ(round_to(Dtype::F8E4M3, 448), 448);  // OCP E4M3 max
  EXPECT_EQ(round_to(Dtype::F8E5M2, 0.25), 0.25);
}

// A naive collective over typed buffers: what each rank's receive buffer holds after `op`,
// reducing in rank order and rounding to the type after every step (as a chain would).
// alltoallv and moe_dispatch as a transport runs them: blocks copied by the count matrix, and
// for moe_dispatch the pack, the two exchanges and the unpack (kernels/common/rows.hpp).
std::vector<std::vector<unsigned char>> simulate_exchange(const CaseConfig& c,
                                                          const std::vector<std::vector<unsigned char>>& in) {
  const Exchange& x = *c.counts.exchange;
  const int n = x.ranks;
  const std::size_t e = static_cast<std::size_t>(info(c.input.dtype).bytes);
  using Buffers = std::vector<std::vector<unsigned char>>;
  // One all-to-all-v: forward from the send layout to the receive layout, or back.
  auto exchange = [&](const Buffers& from, Buffers& to, bool forward) {
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        const auto k = static_cast<std::size_t>(s * n + d);
        const auto count = static_cast<std::size_t>(x.count[k]) * e;
        const auto send_at = static_cast<std::size_t>(x.send_displ[k]) * e;
        const auto recv_at = static_cast<std::size_t>(x.recv_displ[static_cast<std::size_t>(d * n + s)]) * e;
        if (forward) {
          std::memcpy(to[static_cast<std::size_t>(d)].data() + recv_at, from[static_cast<std::size_t>(s)].data() + send_at, count);
        } else {
          std::memcpy(to[static_cast<std::size_t>(s)].data() + send_at, from[static_cast<std::size_t>(d)].data() + recv_at, count);
        }
      }
    }
  };
  Buffers out(static_cast<std::size_t>(n), std::vector<unsigned char>(static_cast<std::size_t>(c.counts.recv) * e));
  if (x.tokens == 0) {
    exchange(in, out, true);
    return out;
  }
  const std::size_t row = static_cast<std::size_t>(x.hidden) * e;
  Buffers packed(static_cast<std::size_t>(n), std::vector<unsigned char>(static_cast<std::size_t>(x.tokens) * row));
  Buffers back = packed;
  for (int r = 0; r < n; ++r) {
    kernels::gather_rows(packed[static_cast<std::size_t>(r)].data(), in[static_cast<std::size_t>(r)].data(),
                         x.packed.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(x.tokens), x.tokens, row);
  }
  exchange(packed, out, true);
  exchange(out, back, false);
  for (int r = 0; r < n; ++r) {
    kernels::scatter_rows(out[static_cast<std::size_t>(r)].data() + static_cast<std::size_t>(x.max_received()) * e,
                          back[static_cast<std::size_t>(r)].data(),
                          x.packed.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(x.tokens), x.tokens, row);
  }
  return out;
}

std::vector<std::vector<unsigned char>> simulate(const CaseConfig& c,
                                                 const std::vector<std::vector<unsigned char>>& in) {
  const int n = c.input.ranks;
  const Dtype t = c.input.dtype;
  const std::size_t e = static_cast<std::size_t>(info(t).bytes);
  std::vector<std::vector<unsigned char>> out(static_cast<std::size_t>(n),
                                              std::vector<unsigned char>(static_cast<std::size_t>(c.counts.recv) * e));
  auto get = [&](int r, std::int64_t i) { return load_element(t, in[static_cast<std::size_t>(r)].data(), i); };
  auto put = [&](int r, std::int64_t i, double v) { store_element(t, out[static_cast<std::size_t>(r)].data(), i, v); };
  auto reduce = [&](std::int64_t i) {
    double acc = get(0, i);
    for (int r = 1; r < n; ++r) {
      const double v = get(r, i);
      switch (c.input.redop) {
        case RedOp::Sum:
        case RedOp::Avg:
          acc = round_to(t, acc + v);
          break;
        case RedOp::Prod:
          acc = round_to(t, acc * v);
          break;
        case RedOp::Max:
          acc = std::max(acc, v);
          break;
        case RedOp::Min:
          acc = std::min(acc, v);
          break;
      }
    }
    if (c.input.redop == RedOp::Avg) acc = info(t).is_float ? round_to(t, acc / n) : std::floor(acc / n);
    return acc;
  };
  if (c.counts.exchange) return simulate_exchange(c, in);
  const std::int64_t per = c.counts.param;
  for (int r = 0; r < n; ++r) {
    const std::string& op = c.op->name;
    for (std::int64_t j = 0; j < c.counts.recv; ++j) {
      if (op == "all_reduce") put(r, j, reduce(j));
      if (op == "all_gather") put(r, j, get(static_cast<int>(j / per), j % per));
      if (op == "reduce_scatter") put(r, j, reduce(r * per + j));
      if (op == "broadcast") put(r, j, get(c.root, j));
      if (op == "reduce") put(r, j, r == c.root ? reduce(j) : -1.0);
      if (op == "alltoall") put(r, j, get(static_cast<int>(j / per), r * per + j % per));
      if (op == "sendrecv") put(r, j, get((r + n - 1) % n, j));
    }
  }
  return out;
}

TEST(CollectivesExact, EveryOperationTypeAndReductionChecksExactly) {
  int combinations = 0;
  for (const Operation* op : operations()) {
    for (const DtypeInfo& d : dtypes()) {
      for (const std::string& redop : redop_names()) {
        if (!op->reduces && redop != "sum") continue;
        for (int n : {1, 2, 3, 4, 8}) {
          CaseConfig c;
          c.op = op;
          c.input = {d.type, *parse_redop(redop), op->reduces, n};
          c.root = op->rooted ? n - 1 : 0;
          c.counts = op->counts(CountArgs{48, n, 4});
          std::vector<std::vector<unsigned char>> in;
          for (int r = 0; r < n; ++r) {
            in.emplace_back(static_cast<std::size_t>(c.counts.send * d.bytes));
            fill_input(c, r, in.back().data(), c.counts.send);
            for (std::int64_t i = 0; i < c.counts.send; ++i) {
              const double v = input_value(c.input, r, i);
              ASSERT_EQ(v, std::floor(v));  // small integers only
              ASSERT_LE(v, d.max_exact);
            }
          }
          std::vector<std::vector<unsigned char>> out = simulate(c, in);
          const std::string what = fmt::format("{} {} {} n={}", op->name, d.name, redop, n);
          for (int r = 0; r < n; ++r) {
            const Check chk = check_output(c, r, out[static_cast<std::size_t>(r)].data());
            EXPECT_EQ(chk.wrong, 0) << what << ": " << chk.first;
            std::int64_t defined = op->name == "reduce" && r != c.root ? 0 : c.counts.recv;
            if (const Exchange* x = c.counts.exchange.get()) defined = x->received(r) + (x->tokens > 0 ? c.counts.send : 0);
            EXPECT_EQ(chk.checked, defined) << what;
          }
          // One corrupted element on the last rank is one wrong element (one the rank receives).
          const int r = n - 1;
          std::int64_t j = c.counts.recv / 2;
          while (j > 0 && !op->expected(c.input, c.counts, r, c.root, j)) --j;
          const double v = load_element(d.type, out[static_cast<std::size_t>(r)].data(), j);
          store_element(d.type, out[static_cast<std::size_t>(r)].data(), j, v == 1 ? 2 : 1);
          if (op->name != "reduce" || r == c.root) {
            EXPECT_EQ(check_output(c, r, out[static_cast<std::size_t>(r)].data()).wrong, 1) << what;
          }
          ++combinations;
        }
      }
    }
  }
  EXPECT_GT(combinations, 300);
}

TEST(CollectivesExact, SumsStayExactWithManyRanks) {
  // bf16 holds integers up to 256: 300 ranks fall back to one 1 per element.
  InputSpec s{Dtype::BF16, RedOp::Sum, true, 300};
  for (std::int64_t i = 0; i < 600; ++i) EXPECT_EQ(reduced_value(s, i), 1.0);
  InputSpec f{Dtype::F32, RedOp::Sum, true, 8};
  double total = 0;
  for (int r = 0; r < 8; ++r) total += input_value(f, r, 5);
  EXPECT_EQ(reduced_value(f, 5), total);
}

// --- waiting for non-blocking communicators (progress.hpp) -------------------------------

// A fake NCCL: each communicator answers "in progress" a given number of times, then its final
// state; a fake clock advances by a millisecond on every pause.
struct FakeComms {
  std::vector<int> in_progress_polls;  // polls left before the final state; -1: never done
  std::vector<CommStatus> final_state;
  std::vector<int> polls;
  std::chrono::steady_clock::time_point clock{};
  int pauses = 0;

  explicit FakeComms(std::vector<int> in_progress, std::vector<CommStatus> final = {})
      : in_progress_polls(std::move(in_progress)), final_state(std::move(final)), polls(in_progress_polls.size(), 0) {
    final_state.resize(in_progress_polls.size(), {CommState::Ready, 0});
  }
  Settled wait(std::chrono::milliseconds timeout) {
    const auto deadline = clock + timeout;
    return wait_until_settled(
        in_progress_polls.size(),
        [&](std::size_t i) {
          ++polls[i];
          if (in_progress_polls[i] != 0) {
            if (in_progress_polls[i] > 0) --in_progress_polls[i];
            return CommStatus{CommState::InProgress, 7};  // ncclInProgress
          }
          return final_state[i];
        },
        deadline, [&] { return clock; },
        [&](std::int64_t) {
          ++pauses;
          clock += std::chrono::milliseconds(1);
        });
  }
};

TEST(NcclProgress, ReadyCommunicatorsReturnAtOnce) {
  FakeComms f({0, 0, 0, 0});
  const Settled s = f.wait(std::chrono::milliseconds(100));
  EXPECT_EQ(s.outcome, Settled::Outcome::Ready);
  EXPECT_EQ(s.rounds, 1);
  EXPECT_EQ(f.pauses, 0);
  EXPECT_EQ(f.polls, std::vector<int>({1, 1, 1, 1}));
}

TEST(NcclProgress, WaitsUntilNoCommunicatorIsInProgress) {
  // ncclGroupEnd answered ncclInProgress: GPU 2's communicator needs 5 more polls, GPU 0's 2.
  // Returning before that (as the old code did) would time an idle stream.
  FakeComms f({2, 0, 5, 0});
  const Settled s = f.wait(std::chrono::milliseconds(100));
  EXPECT_EQ(s.outcome, Settled::Outcome::Ready);
  EXPECT_EQ(s.rounds, 6);
  EXPECT_EQ(f.in_progress_polls, std::vector<int>({0, 0, 0, 0}));
  // A communicator found ready is not polled again.
  EXPECT_EQ(f.polls, std::vector<int>({3, 1, 6, 1}));
}

TEST(NcclProgress, AnErrorNamesTheCommunicator) {
  FakeComms f({1, 3, 0}, {{CommState::Ready, 0}, {CommState::Failed, 6}, {CommState::Ready, 0}});  // 6: ncclRemoteError
  const Settled s = f.wait(std::chrono::milliseconds(100));
  EXPECT_EQ(s.outcome, Settled::Outcome::Failed);
  EXPECT_EQ(s.comm, 1u);
  EXPECT_EQ(s.code, 6);
}

TEST(NcclProgress, ACommunicatorThatNeverFinishesTimesOutNamingIt) {
  FakeComms f({0, -1, 2});
  const Settled s = f.wait(std::chrono::milliseconds(50));
  EXPECT_EQ(s.outcome, Settled::Outcome::TimedOut);
  EXPECT_EQ(s.comm, 1u);
  EXPECT_EQ(s.code, 7);
  EXPECT_EQ(f.pauses, 51);  // polled until the clock passed the deadline, not forever
}

TEST(NcclProgress, WorkDoneAtTheDeadlineCountsAsDone) {
  FakeComms f({10});
  const Settled s = f.wait(std::chrono::milliseconds(10));  // ready on the poll at exactly the deadline
  EXPECT_EQ(s.outcome, Settled::Outcome::Ready);
  FakeComms none({});
  EXPECT_EQ(none.wait(std::chrono::milliseconds(0)).outcome, Settled::Outcome::Ready);
}

TEST(CollectivesLaunch, DetectsLaunchersFromTheEnvironment) {
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  auto ompi = detect_launch(env({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "1"}}));
  ASSERT_TRUE(ompi.has_value());
  EXPECT_EQ(ompi->size, 2);
  EXPECT_EQ(ompi->rank, 1);
  EXPECT_NE(launch_without_mpi_message(*ompi).find("built without MPI"), std::string::npos);
  EXPECT_TRUE(detect_launch(env({{"PMI_SIZE", "4"}})).has_value());
  EXPECT_FALSE(detect_launch(env({{"OMPI_COMM_WORLD_SIZE", "1"}})).has_value());  // one rank: nothing to refuse
  EXPECT_FALSE(detect_launch(env({{"SLURM_NTASKS", "8"}})).has_value());          // an sbatch allocation, no srun
  EXPECT_TRUE(detect_launch(env({{"SLURM_NTASKS", "8"}, {"SLURM_STEP_ID", "0"}})).has_value());
  EXPECT_FALSE(detect_launch(env({{"OMPI_COMM_WORLD_SIZE", "two"}})).has_value());
  EXPECT_FALSE(detect_launch(env({})).has_value());
}

TEST(CollectivesSummary, LatencyAtSmallestSizeBandwidthAtLargest) {
  auto entry = [](std::int64_t size, double time_us, double busbw) {
    nlohmann::ordered_json e;
    e["run_type"] = "iteration";
    e["gpubench"] = {
        {"status", "ok"},
        {"device", "cpu"},
        {"axes", {{"op", "all_reduce"}, {"dtype", "fp32"}, {"redop", "sum"}, {"size", size}, {"inplace", 0}}},
        {"collective", {{"ranks", 2}, {"nodes", 1}, {"backend", "mpi"}}},
        {"metrics", {{"time_us", time_us}, {"busbw_gbps", busbw}, {"algbw_gbps", busbw}}}};
    return e;
  };
  const auto s = summarize({entry(8, 2.0, 0.01), entry(1 << 20, 100.0, 10.0), entry(4096, 3.0, 1.0)});
  ASSERT_EQ(s["groups"].size(), 1u);
  const auto& g = s["groups"][0];
  EXPECT_EQ(g["latency_size"], 8);
  EXPECT_DOUBLE_EQ(g["latency_us"].get<double>(), 2.0);
  EXPECT_EQ(g["bandwidth_size"], 1 << 20);
  EXPECT_DOUBLE_EQ(g["busbw_gbps"].get<double>(), 10.0);
  EXPECT_NEAR(g["avg_busbw_gbps"].get<double>(), (0.01 + 10.0 + 1.0) / 3, 1e-12);
}

}  // namespace
}  // namespace gpubench::suites::collectives

namespace gpubench {
namespace {

TEST(TeamAgreement, MergesOutcomesAndVerifications) {
  EXPECT_EQ(merge_rank_outcomes({"", "", ""}), "");
  EXPECT_EQ(merge_rank_outcomes({"", "skipped: no memory", "failed: boom"}), "failed: rank 2: boom");
  EXPECT_EQ(merge_rank_outcomes({"skipped: a", "skipped: b"}), "skipped: rank 0: a");
  Verification ok, bad;
  ok.passed = true;
  ok.checked = 10;
  ok.wrong = 0;
  ok.method = "exact";
  bad.passed = false;
  bad.checked = 10;
  bad.wrong = 3;
  bad.max_error = 2;
  bad.detail = "element 4";
  const Verification m = merge_rank_verifications({ok, bad});
  EXPECT_FALSE(m.passed);
  EXPECT_EQ(m.checked, 20);
  EXPECT_EQ(m.wrong, 3);
  EXPECT_EQ(m.max_error, 2);
  EXPECT_EQ(m.detail, "rank 1: element 4");
  EXPECT_EQ(verification_from_json(verification_to_json(bad)).wrong, 3);
}

// A team of two in one process: "rank 1" answers every step with a scripted value, so the
// harness's agreement and gathering can be checked without MPI.
class ScriptedTeam final : public Team {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::vector<double> all_gather(double value, const std::string& step) override {
    steps.push_back(step);
    return {value, value * other_time_factor};
  }
  std::vector<std::string> all_gather(const std::string& text, const std::string& step) override {
    steps.push_back(step);
    if (step.rfind("setup", 0) == 0) return {text, other_setup};
    return {text, text};
  }
  void barrier(const std::string& step) override { barriers.push_back(step); }
  double other_time_factor = 3;
  std::string other_setup;
  std::vector<std::string> steps;
  std::vector<std::string> barriers;
};

struct TeamHarnessTest : ::testing::Test {
  testing::FakeSuite suite;
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("gpubench-team-" + std::to_string(::getpid()) + ".json");
  ~TeamHarnessTest() override { std::filesystem::remove(file); }
  nlohmann::ordered_json run(ScriptedTeam& team) {
    PlanRequest r;
    r.axis_overrides = {"size=64", "mode=ok"};
    auto plan = make_plan({&suite}, r, {testing::fake_cpu()});
    HarnessOptions h = testing::fast_harness_options();
    h.team = &team;
    ResultsFile results(file, {{"host_name", "test"}});
    (void)run_plan(plan, h, results);
    std::ifstream in(file);
    return nlohmann::ordered_json::parse(in);
  }
};

TEST_F(TeamHarnessTest, GathersEveryRanksTimeIntoOneEntry) {
  ScriptedTeam team;
  const auto doc = run(team);
  ASSERT_EQ(doc["benchmarks"].size(), 1u);
  const auto& b = doc["benchmarks"][0];
  const auto& m = b["gpubench"]["measurement"];
  ASSERT_EQ(m["ranks"], 2);
  ASSERT_EQ(m["rank_mean_s"].size(), 2u);
  const double r0 = m["rank_mean_s"][0].get<double>(), r1 = m["rank_mean_s"][1].get<double>();
  EXPECT_NEAR(r1, 3 * r0, 1e-9 * r1);
  EXPECT_NEAR(m["max_over_ranks_s"].get<double>(), r1, 1e-12);
  // Google Benchmark's time is the mean over ranks.
  EXPECT_NEAR(b["real_time"].get<double>() * 1e-6, (r0 + r1) / 2, 1e-6 * r1);
  // Warm-up, setup, verification and timing were agreed.
  auto has = [&](const std::string& prefix) {
    return std::any_of(team.steps.begin(), team.steps.end(),
                       [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has("warm-up"));
  EXPECT_TRUE(has("setup of "));
  EXPECT_TRUE(has("verification of "));
  EXPECT_TRUE(has("timing of "));
}

TEST_F(TeamHarnessTest, AnotherRanksFailureFailsTheCaseHere) {
  ScriptedTeam team;
  team.other_setup = "failed: cannot allocate";
  const auto doc = run(team);
  const auto& g = doc["benchmarks"][0]["gpubench"];
  EXPECT_EQ(g["status"], "failed");
  EXPECT_EQ(g["reason"], "rank 1: cannot allocate");
}

// Issue 17 item 8 through the whole harness: a transport with the MPI backend's sampling
// policy whose calls take 1 us on a fake clock except every 300th, which loses 3 ms to a
// preemption; "rank 1" (ScriptedTeam) reports 3x rank 0's figures.
double g_fake_now = 0;

class FakeClockTimer final : public Timer {
 public:
  void start() override { t0_ = g_fake_now; }
  double stop() override { return g_fake_now - t0_; }
  const char* kind() const override { return "fake"; }

 private:
  double t0_ = 0;
};

class PreemptedTransport final : public suites::collectives::Transport {
 public:
  explicit PreemptedTransport(SamplingPolicy policy) : policy_(policy) {}
  std::vector<int> local_ranks() const override { return {0}; }
  void prepare(const suites::collectives::CaseConfig& c) override { c_ = c; }
  void run() override { g_fake_now += ++calls_ % 300 == 0 ? 3e-3 : 1e-6; }
  void synchronize() override {}
  // The exact answer of rank 0 (this test is about timing, not about moving data).
  std::vector<unsigned char> receive_buffer(int) override {
    std::vector<unsigned char> out(static_cast<std::size_t>(c_.counts.recv) * 4);
    for (std::int64_t j = 0; j < c_.counts.recv; ++j) {
      suites::collectives::store_element(c_.input.dtype, out.data(), j, *c_.op->expected(c_.input, c_.counts, 0, 0, j));
    }
    return out;
  }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<FakeClockTimer>(); }
  void flush_cache() override {}
  int ranks() const override { return 2; }
  int nodes() const override { return 1; }
  int local_gpus() const override { return 0; }
  std::string name() const override { return "fake"; }
  std::string launch_mode() const override { return "test"; }
  SamplingPolicy sampling() const override { return policy_; }

 private:
  SamplingPolicy policy_;
  suites::collectives::CaseConfig c_;
  std::int64_t calls_ = 0;
};

class PreemptedSuite final : public Suite {
 public:
  explicit PreemptedSuite(SamplingPolicy policy, bool per_iteration = false)
      : policy_(policy), per_iteration_(per_iteration) {}
  std::string name() const override { return "fakecoll"; }
  std::string description() const override { return "all_reduce over a fake transport"; }
  std::vector<AxisSpec> axes() const override { return {{"size", AxisKind::Int, "bytes", {}, 1}}; }
  std::vector<Preset> presets() const override { return {{"quick", {{"size", "64"}}, {{"size", "64"}}}}; }
  std::optional<std::string> unsupported(const DeviceInfo&, const Point&) const override { return std::nullopt; }
  std::unique_ptr<Case> make_case(const DeviceInfo&, const Point& point) const override {
    namespace co = suites::collectives;
    co::CaseConfig c;
    c.op = &co::all_reduce_op();
    c.input = {co::Dtype::F32, co::RedOp::Sum, true, 2};
    c.size_bytes = point.integer("size");
    c.counts = c.op->counts(co::CountArgs{c.size_bytes / 4, 2, 0});
    c.per_iteration = per_iteration_;
    return co::make_case(c, std::make_unique<PreemptedTransport>(policy_));
  }

 private:
  SamplingPolicy policy_;
  bool per_iteration_;
};

nlohmann::ordered_json run_preempted(const SamplingPolicy& policy, ScriptedTeam& team, bool per_iteration = false) {
  PreemptedSuite suite(policy, per_iteration);
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("gpubench-preempted-" + std::to_string(::getpid()) + ".json");
  PlanRequest r;
  auto plan = make_plan({&suite}, r, {testing::fake_cpu()});
  HarnessOptions h = testing::fast_harness_options();
  h.measure.min_time_s = 0.05;  // fake seconds
  h.measure.batch_s = 0.002;
  h.team = &team;
  {
    ResultsFile results(file, {{"host_name", "test"}});
    (void)run_plan(plan, h, results);
  }
  std::ifstream in(file);
  auto doc = nlohmann::ordered_json::parse(in);
  std::filesystem::remove(file);
  return doc["benchmarks"][0];
}

TEST(CollectivesHeadline, MedianOfBarrierSeparatedWindowsIgnoresPreemptions) {
  ScriptedTeam team;
  SamplingPolicy policy;
  policy.headline = SamplingPolicy::Headline::Median;
  policy.window_s = 200e-6;
  policy.barrier = true;
  const auto b = run_preempted(policy, team);
  const auto& g = b["gpubench"];
  ASSERT_EQ(g["status"], "ok") << g.dump();
  const auto& meas = g["measurement"];
  EXPECT_EQ(meas["headline"]["statistic"], "median");
  EXPECT_EQ(meas["headline"]["barrier"], true);
  EXPECT_DOUBLE_EQ(meas["headline"]["window_s"].get<double>(), 200e-6);
  // A barrier before every timed window, and only there.
  EXPECT_EQ(static_cast<std::int64_t>(team.barriers.size()), meas["samples"].get<std::int64_t>());
  EXPECT_EQ(team.barriers.front().rfind("timing of fakecoll", 0), 0u) << team.barriers.front();
  // Rank 0's median window is the 1 us call; rank 1's is 3 us: the headline is their mean.
  ASSERT_EQ(meas["rank_median_s"].size(), 2u);
  EXPECT_NEAR(meas["rank_median_s"][0].get<double>(), 1e-6, 1e-12);
  EXPECT_NEAR(meas["max_median_over_ranks_s"].get<double>(), 3e-6, 1e-12);
  const auto& m = g["metrics"];
  EXPECT_NEAR(m["time_us"].get<double>(), 2.0, 1e-6);
  EXPECT_NEAR(b["real_time"].get<double>(), 2.0, 1e-6);  // Google Benchmark's time is the headline
  EXPECT_NEAR(m["time_max_us"].get<double>(), 3.0, 1e-6);
  EXPECT_NEAR(m["algbw_gbps"].get<double>(), 64 / 2e-6 / 1e9, 1e-6);
  // The mean of every call counts the preemptions (3 ms per 300 calls: about 11 us per call
  // on rank 0, 3x that on "rank 1").
  EXPECT_GT(m["time_mean_us"].get<double>(), 5 * m["time_us"].get<double>());
}

TEST(CollectivesHeadline, TheDefaultPolicyStaysTheMeanOfBackToBackCalls) {
  ScriptedTeam team;
  const auto b = run_preempted(SamplingPolicy{}, team);
  const auto& g = b["gpubench"];
  ASSERT_EQ(g["status"], "ok") << g.dump();
  EXPECT_TRUE(team.barriers.empty());
  EXPECT_FALSE(g["measurement"].contains("headline"));
  EXPECT_FALSE(g["metrics"].contains("time_mean_us"));
  EXPECT_NEAR(g["metrics"]["time_us"].get<double>(), g["measurement"]["mean_over_ranks_s"].get<double>() * 1e6, 1e-9);
  EXPECT_GT(g["metrics"]["time_us"].get<double>(), 10.0);  // the preemptions are in it
}


// timing=per_iter (issue 31): every call a sample of its own after a barrier; the percentiles
// of single calls, the slowest rank's. On the fake clock a call takes 1 us except every 300th
// (3 ms); "rank 1" reports 3x: p50 and p99 3 us (1 call in 300 is under 1%), slowest 9 ms.
TEST(CollectivesHeadline, PerIterationTimesEveryCallAloneWithPercentiles) {
  ScriptedTeam team;
  const auto b = run_preempted(SamplingPolicy{}, team, /*per_iteration=*/true);
  const auto& g = b["gpubench"];
  ASSERT_EQ(g["status"], "ok") << g.dump();
  const auto& meas = g["measurement"];
  EXPECT_EQ(meas["runs_per_sample"], 1);
  EXPECT_EQ(meas["runs"], meas["samples"]);
  EXPECT_EQ(meas["headline"]["statistic"], "median");
  EXPECT_EQ(meas["headline"]["per_iteration"], true);
  EXPECT_EQ(meas["noisy"], false);  // the 3 ms calls are the tail the percentiles report
  EXPECT_EQ(static_cast<std::int64_t>(team.barriers.size()), meas["samples"].get<std::int64_t>());
  const auto& it = meas["per_iteration"];
  EXPECT_NEAR(it["p50_s"].get<double>(), 3e-6, 1e-12);
  EXPECT_NEAR(it["p99_s"].get<double>(), 3e-6, 1e-12);
  EXPECT_NEAR(it["max_s"].get<double>(), 9e-3, 1e-9);
  ASSERT_EQ(it["rank_p50_s"].size(), 2u);
  EXPECT_NEAR(it["rank_p50_s"][0].get<double>(), 1e-6, 1e-12);
  const auto& m = g["metrics"];
  EXPECT_NEAR(m["time_p50_us"].get<double>(), 3.0, 1e-6);
  EXPECT_NEAR(m["time_p90_us"].get<double>(), 3.0, 1e-6);
  EXPECT_NEAR(m["time_p99_us"].get<double>(), 3.0, 1e-6);
  EXPECT_NEAR(m["time_slowest_call_us"].get<double>(), 9000.0, 1e-3);
  EXPECT_NEAR(m["time_us"].get<double>(), 2.0, 1e-6);  // the mean over ranks of their medians
  EXPECT_NEAR(m["busbw_at_p50_gbps"].get<double>(), 64 / 3e-6 / 1e9, 1e-6);  // all_reduce, n=2: factor 2(n-1)/n = 1
  EXPECT_EQ(g["collective"]["timing"], "per_iter");
}

}  // namespace
}  // namespace gpubench

namespace gpubench::suites::collectives {
namespace {

// timing and hidden stay out of the names where they mean nothing, so the cases that existed
// before them keep their names (and compare and baselines keep matching them).
TEST(CollectivesSuite, NewAxesStayOutOfOlderCasesNames) {
  auto suite = make_suite();
  auto point = [](const std::string& op, const std::string& timing) {
    Point p;
    for (const auto& [axis, value] : std::vector<std::pair<std::string, AxisValue>>{
             {"op", op}, {"dtype", "fp32"}, {"redop", "sum"}, {"size", std::int64_t{64}}, {"inplace", std::int64_t{0}},
             {"root", std::int64_t{0}}, {"gpus", std::int64_t{0}}, {"graph", std::int64_t{0}}, {"timing", timing},
             {"hidden", std::int64_t{4096}}}) {
      p.set(axis, value);
    }
    return p;
  };
  const DeviceInfo cpu = testing::fake_cpu();
  EXPECT_EQ(suite->resolve(cpu, point("all_reduce", "batch")).label(),
            "op=all_reduce/dtype=fp32/redop=sum/size=64/inplace=0/root=0/gpus=0/graph=0");
  EXPECT_EQ(suite->resolve(cpu, point("alltoallv", "per_iter")).label(),
            "op=alltoallv/dtype=fp32/redop=sum/size=64/inplace=0/root=0/gpus=0/graph=0/timing=per_iter");
  EXPECT_EQ(suite->resolve(cpu, point("moe_dispatch", "batch")).label(),
            "op=moe_dispatch/dtype=fp32/redop=sum/size=64/inplace=0/root=0/gpus=0/graph=0/hidden=4096");
}

TEST(CollectivesExchange, DisplacementsAndSourcesOfAHandMatrix) {
  // 3 ranks; rank 0 sends 1, 2, 3 elements to ranks 0, 1, 2; rank 1 sends 0, 4, 1; rank 2 sends 2, 0, 5.
  const Exchange e = make_exchange(3, {1, 2, 3, 0, 4, 1, 2, 0, 5});
  EXPECT_EQ(e.sent(0), 6);
  EXPECT_EQ(e.received(0), 3);
  EXPECT_EQ(e.received(2), 9);
  EXPECT_EQ(e.max_sent(), 7);
  EXPECT_EQ(e.max_received(), 9);
  EXPECT_EQ(e.send_displ[0 * 3 + 2], 3);  // rank 0's block for rank 2 follows its 1 + 2
  EXPECT_EQ(e.recv_displ[2 * 3 + 1], 3);  // rank 2 receives rank 0's 3, then rank 1's
  EXPECT_EQ(e.recv_displ[2 * 3 + 2], 4);
  // Rank 2's receive buffer: [0:3) from rank 0 (its elements 3..5), [3:4) from rank 1 (its
  // element 6), [4:9) from itself (its elements 2..6).
  EXPECT_EQ(e.source_of(2, 0), std::make_pair(0, std::int64_t{3}));
  EXPECT_EQ(e.source_of(2, 3), std::make_pair(1, std::int64_t{4}));
  EXPECT_EQ(e.source_of(2, 8), std::make_pair(2, std::int64_t{6}));
  EXPECT_FALSE(e.source_of(0, 3).has_value());  // past rank 0's total
  EXPECT_THROW(make_exchange(2, {1, 2, 3}), std::invalid_argument);
}

TEST(CollectivesExchange, UnevenCountsAreSeededUnevenAndSumExactly) {
  for (int n : {1, 2, 3, 8, 13}) {
    for (std::int64_t per_rank : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, std::int64_t{1} << 26}) {
      const auto c = uneven_counts(per_rank, n, kExchangeSeed);
      ASSERT_EQ(c.size(), static_cast<std::size_t>(n * n));
      EXPECT_EQ(c, uneven_counts(per_rank, n, kExchangeSeed));  // seeded: the same every time
      for (int src = 0; src < n; ++src) {
        std::int64_t row = 0;
        std::int64_t lo = per_rank, hi = 0;
        for (int dst = 0; dst < n; ++dst) {
          const std::int64_t v = c[static_cast<std::size_t>(src * n + dst)];
          EXPECT_GE(v, 0);
          row += v;
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        EXPECT_EQ(row, per_rank) << "n=" << n << " rank " << src;
        // Weights in [1, 3): blocks at most 3:1, and uneven once they are large.
        if (per_rank >= 1000 && n > 1) {
          EXPECT_LE(static_cast<double>(hi), 3.0 * static_cast<double>(lo) + 1) << n;
          EXPECT_GT(hi, lo) << n;
        }
      }
    }
  }
  // The totals received differ between ranks.
  const Exchange e = make_exchange(8, uneven_counts(1 << 20, 8, kExchangeSeed));
  EXPECT_NE(e.received(0), e.received(1));
  EXPECT_NE(uneven_counts(1000, 4, kExchangeSeed), uneven_counts(1000, 4, kExchangeSeed + 1));
}

// Planning takes moe_dispatch's counts without the per-token table: the same counts,
// displacements and totals as the whole exchange, and nothing per token held.
TEST(CollectivesExchange, MoeCountsForPlanningAreTheWholeExchangesCounts) {
  for (const auto& [tokens, hidden, n] : {std::tuple<std::int64_t, std::int64_t, int>{1000, 3, 4}, {1, 4096, 8}, {4097, 7, 3}}) {
    const Exchange whole = moe_exchange(tokens, hidden, n, kExchangeSeed);
    const Exchange plan = moe_exchange_counts(tokens, hidden, n, kExchangeSeed);
    EXPECT_EQ(plan.count, whole.count);
    EXPECT_EQ(plan.send_displ, whole.send_displ);
    EXPECT_EQ(plan.recv_displ, whole.recv_displ);
    EXPECT_EQ(plan.max_sent(), whole.max_sent());
    EXPECT_EQ(plan.max_received(), whole.max_received());
    EXPECT_EQ(plan.tokens, tokens);
    EXPECT_TRUE(plan.dest.empty() && plan.packed.empty());
    // Asked again (planning's cache of the routing) with another token size: still the whole
    // exchange's counts, scaled by that size and by nothing kept from the first call.
    EXPECT_EQ(moe_exchange_counts(tokens, hidden + 5, n, kExchangeSeed).count, moe_exchange(tokens, hidden + 5, n, kExchangeSeed).count);
    EXPECT_EQ(moe_exchange_counts(tokens, hidden, n, kExchangeSeed).count, whole.count);
  }
  const CountArgs planning{std::int64_t{1000} * 64, 4, 64, /*routing=*/false};
  const Counts c = moe_dispatch_op().counts(planning);
  const Counts run = moe_dispatch_op().counts(CountArgs{std::int64_t{1000} * 64, 4, 64});
  EXPECT_EQ(c.send, run.send);
  EXPECT_EQ(c.recv, run.recv);
  EXPECT_EQ(c.bus_elements, run.bus_elements);
  EXPECT_TRUE(c.exchange->packed.empty());
  EXPECT_EQ(run.exchange->packed.size(), std::size_t{4000});
}

TEST(CollectivesExchange, MoeRoutingPacksEveryTokenOnceByDestination) {
  const int n = 4;
  const std::int64_t tokens = 1000, hidden = 3;
  const Exchange e = moe_exchange(tokens, hidden, n, kExchangeSeed);
  EXPECT_EQ(e.tokens, tokens);
  EXPECT_EQ(e.hidden, hidden);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(e.sent(r), tokens * hidden);
    std::vector<bool> seen(static_cast<std::size_t>(tokens), false);
    int last_dest = 0;
    std::int64_t last_token = -1;
    for (std::int64_t p = 0; p < tokens; ++p) {
      const std::int64_t t = e.packed[static_cast<std::size_t>(r * tokens + p)];
      ASSERT_GE(t, 0);
      ASSERT_LT(t, tokens);
      EXPECT_FALSE(seen[static_cast<std::size_t>(t)]);
      seen[static_cast<std::size_t>(t)] = true;
      const int d = e.dest[static_cast<std::size_t>(r * tokens + t)];
      EXPECT_EQ(d, moe_route(kExchangeSeed, r, t, n));
      // Grouped by destination, in token order within a group, at the group's displacement.
      EXPECT_GE(d, last_dest);
      if (d == last_dest) {
        EXPECT_GT(t, last_token);
      }
      EXPECT_GE(p * hidden, e.send_displ[static_cast<std::size_t>(r * n + d)]);
      EXPECT_LT(p * hidden, e.send_displ[static_cast<std::size_t>(r * n + d)] + e.count[static_cast<std::size_t>(r * n + d)]);
      last_dest = d;
      last_token = t;
    }
    // A uniform router: every rank gets about a quarter of the tokens (1000/4 = 250, sd ~14).
    for (int d = 0; d < n; ++d) {
      const std::int64_t got = e.count[static_cast<std::size_t>(r * n + d)] / hidden;
      EXPECT_GT(got, 180) << r << "->" << d;
      EXPECT_LT(got, 320) << r << "->" << d;
    }
  }
  // The counts and the bus bytes: two exchanges of the busiest rank's max(sent, received).
  const Counts c = moe_dispatch_op().counts(CountArgs{tokens * hidden, n, hidden});
  EXPECT_EQ(c.param, tokens);
  EXPECT_EQ(c.send, tokens * hidden);
  EXPECT_EQ(c.recv, c.exchange->max_received() + tokens * hidden);
  EXPECT_EQ(c.bus_elements, 2 * std::max(c.exchange->max_sent(), c.exchange->max_received()));
  // A size under one token is one token of the whole size.
  const Counts small = moe_dispatch_op().counts(CountArgs{2, n, 4096});
  EXPECT_EQ(small.param, 1);
  EXPECT_EQ(small.exchange->hidden, 2);
  EXPECT_TRUE(size_unsupported(moe_dispatch_op(), (kMaxMoeTokens + 1) * 4, Dtype::F32, 2, 1).has_value());
}

TEST(CollectivesExchange, AlltoallvCountsAndBusBytesAreTheBusiestRanks) {
  const Counts c = alltoallv_op().counts(CountArgs{1000, 4, 0});
  ASSERT_TRUE(c.exchange);
  EXPECT_EQ(c.send, 1000);  // every rank sends the whole size
  EXPECT_EQ(c.recv, c.exchange->max_received());
  EXPECT_EQ(c.bus_elements, std::max<std::int64_t>(1000, c.exchange->max_received()));
  EXPECT_EQ(c.param, 250);
  EXPECT_DOUBLE_EQ(alltoallv_op().bus_factor(4), 0.75);
  EXPECT_TRUE(size_unsupported(alltoallv_op(), 12, Dtype::F32, 4, 0).has_value());  // 3 elements on 4 ranks
}

TEST(RowPermutations, ScatterUndoesGather) {
  const std::vector<std::int64_t> index = {2, 0, 3, 1};
  const std::vector<char> src = {'a', 'A', 'b', 'B', 'c', 'C', 'd', 'D'};  // rows of 2 bytes
  std::vector<char> packed(8), back(8);
  kernels::gather_rows(packed.data(), src.data(), index.data(), 4, 2);
  EXPECT_EQ(std::string(packed.begin(), packed.end()), "cCaAdDbB");
  kernels::scatter_rows(back.data(), packed.data(), index.data(), 4, 2);
  EXPECT_EQ(back, src);
}

}  // namespace
}  // namespace gpubench::suites::collectives
