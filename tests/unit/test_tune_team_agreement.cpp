// tune train under mpirun/srun: the agreement of the ranks on the search's clock and outcomes
// (bench/tune/team_agreement.hpp), with fake teams: a scripted rank 1 of 2, and two threads as
// two ranks whose clocks and measurements differ (the searches must still be identical); and
// the data-parallel knob space (bucket_mb_values, make_train_space with 2 ranks).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "bench/core/errors.hpp"
#include "bench/tune/team_agreement.hpp"
#include "bench/tune/train_tuner.hpp"

namespace gpubench::tune {
namespace {

// Rank `rank` of a team whose other ranks' values are scripted.
class ScriptedTeam final : public Team {
 public:
  ScriptedTeam(int rank, std::vector<double> others_d, std::vector<std::string> others_s)
      : rank_(rank), others_d_(std::move(others_d)), others_s_(std::move(others_s)) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(others_d_.size()) + 1; }
  std::vector<double> all_gather(double value, const std::string& step) override {
    steps.push_back(step);
    std::vector<double> v = others_d_;
    v.insert(v.begin() + rank_, value);
    return v;
  }
  std::vector<std::string> all_gather(const std::string& text, const std::string& step) override {
    steps.push_back(step);
    std::vector<std::string> v = others_s_;
    v.insert(v.begin() + rank_, text);
    return v;
  }
  std::vector<std::string> steps;

 private:
  int rank_;
  std::vector<double> others_d_;
  std::vector<std::string> others_s_;
};

// Threads as ranks: all_gather returns once every rank has called it.
struct Rendezvous {
  explicit Rendezvous(int n) : size(n), slots(static_cast<std::size_t>(n)) {}
  std::vector<std::string> exchange(int rank, const std::string& text) {
    std::unique_lock<std::mutex> lock(m);
    slots[static_cast<std::size_t>(rank)] = text;
    if (++arrived == size) {
      result = slots;
      arrived = 0;
      ++generation;
      cv.notify_all();
    } else {
      const long g = generation;
      cv.wait(lock, [&] { return generation != g; });
    }
    return result;
  }
  int size;
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::string> slots, result;
  int arrived = 0;
  long generation = 0;
};

class ThreadTeam final : public Team {
 public:
  ThreadTeam(Rendezvous& r, int rank) : r_(r), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return r_.size; }
  std::vector<double> all_gather(double value, const std::string&) override {
    std::vector<double> out;
    for (const std::string& s : r_.exchange(rank_, fmt::format("{}", value))) out.push_back(std::stod(s));
    return out;
  }
  std::vector<std::string> all_gather(const std::string& text, const std::string&) override {
    return r_.exchange(rank_, text);
  }

 private:
  Rendezvous& r_;
  int rank_;
};

Measured ok(double score, const std::string& name) {
  Measured m;
  m.score = score;
  m.figures = {{"case", name}, {"samples_per_s", score}};
  return m;
}

TEST(TuneTeamAgreement, OutcomesRoundTripExactly) {
  Measured m = ok(1.0 / 3.0 + 1e-13, "train/x");
  m.figures["noise_pct"] = 2.5;
  const Measured back = measured_from_text(measured_to_text(m));
  EXPECT_EQ(back.status, Status::Ok);
  EXPECT_EQ(back.score, m.score);  // bit for bit: every rank compares the same numbers
  EXPECT_EQ(back.figures, m.figures);
  for (Status s : {Status::Failed, Status::DoesNotFit, Status::Skipped}) {
    Measured f;
    f.status = s;
    f.reason = "out of host memory";
    f.score = std::numeric_limits<double>::quiet_NaN();
    const Measured b = measured_from_text(measured_to_text(f));
    EXPECT_EQ(b.status, s);
    EXPECT_EQ(b.reason, f.reason);
    EXPECT_TRUE(std::isnan(b.score));
  }
}

TEST(TuneTeamAgreement, ClockReadingsAreRankZeros) {
  ScriptedTeam team(1, {100.5}, {});
  double local = 7;
  const Clock clock = agreed_clock(team, [&] { return local += 1; });
  EXPECT_EQ(clock(), 100.5);
  EXPECT_EQ(clock(), 100.5);
  EXPECT_EQ(local, 9);  // this rank read its own clock each time (the exchange is symmetric)
  EXPECT_EQ(team.steps.size(), 2u);
}

TEST(TuneTeamAgreement, TheOutcomeIsRankZeros) {
  ScriptedTeam team(1, {}, {measured_to_text(ok(900, "train/a"))});
  const Measured m = agreed_measurement(team, [] { return ok(1100, "train/a"); }, "the outcome of a");
  EXPECT_EQ(m.status, Status::Ok);
  EXPECT_EQ(m.score, 900);
  EXPECT_EQ(m.figures["samples_per_s"], 900);
  EXPECT_EQ(team.steps, std::vector<std::string>{"the outcome of a"});
}

TEST(TuneTeamAgreement, AFailureOnAnyRankIsEveryRanks) {
  Measured failed;
  failed.status = Status::DoesNotFit;
  failed.reason = "out of host memory";
  // Rank 0 measured, rank 1 did not fit: a configuration that did not run everywhere fails.
  ScriptedTeam rank0(0, {}, {measured_to_text(failed)});
  Measured m = agreed_measurement(rank0, [] { return ok(900, "train/a"); }, "outcome");
  EXPECT_EQ(m.status, Status::DoesNotFit);
  EXPECT_EQ(m.reason, "rank 1: out of host memory");
  EXPECT_EQ(m.figures, nlohmann::ordered_json({{"case", "train/a"}}));  // no figures of a partial run
  // Rank 0 failed: its outcome, whatever the others found.
  ScriptedTeam rank1(1, {}, {measured_to_text(failed)});
  m = agreed_measurement(rank1, [] { return ok(900, "train/a"); }, "outcome");
  EXPECT_EQ(m.status, Status::DoesNotFit);
  EXPECT_EQ(m.reason, "out of host memory");
  // A rank whose measurement throws still takes part, with a failure.
  ScriptedTeam rank0b(0, {}, {measured_to_text(ok(900, "train/a"))});
  m = agreed_measurement(rank0b, []() -> Measured { throw std::runtime_error("no entry recorded"); }, "outcome");
  EXPECT_EQ(m.status, Status::Failed);
  EXPECT_EQ(m.reason, "no entry recorded");
  EXPECT_EQ(rank0b.steps.size(), 1u);
}

// Two ranks search the same candidates; their clocks run at different rates and their own
// measurements differ (rank 1 is noisier and slower): with agreement both take the same
// decisions and recommend the same configuration, within rank 0's budget.
TEST(TuneTeamAgreement, TwoRanksSearchIdentically) {
  std::vector<Candidate> candidates;
  for (int b = 1; b <= 9; ++b) {
    Candidate c;
    c.config = {{"micro_batch", std::to_string(b)}};
    c.prior = b;
    candidates.push_back(c);
  }
  SearchOptions so;
  so.budget_s = 30;
  Rendezvous rendezvous(2);
  SearchResult results[2];
  auto rank_main = [&](int rank) {
    ThreadTeam team(rendezvous, rank);
    double now = 0;  // this rank's clock: each measurement costs it 1 s (rank 1: 1.7 s)
    const Clock clock = agreed_clock(team, [&] { return now; });
    int calls = 0;
    const Oracle oracle = [&](const Config& c, int effort) {
      return agreed_measurement(
          team,
          [&] {
            now += (rank == 0 ? 1.0 : 1.7) * std::pow(3, effort);
            const int b = std::stoi(knob(c, "micro_batch"));
            // The true optimum is micro-batch 6; each rank sees its own noise.
            const double noise = rank == 0 ? 0.0 : ((++calls % 2) ? 40.0 : -40.0);
            if (b == 9) {
              Measured m;
              m.status = Status::DoesNotFit;
              m.reason = "out of memory";
              return m;
            }
            return ok(1000 - 10 * (b - 6) * (b - 6) + noise, "b" + std::to_string(b));
          },
          "outcome");
    };
    results[rank] = successive_halving(candidates, oracle, clock, so);
  };
  std::thread t1(rank_main, 1);
  rank_main(0);
  t1.join();
  ASSERT_TRUE(results[0].best);
  ASSERT_TRUE(results[1].best);
  EXPECT_EQ(*results[0].best, *results[1].best);
  EXPECT_EQ(knob(candidates[*results[0].best].config, "micro_batch"), "6");
  ASSERT_EQ(results[0].log.size(), results[1].log.size());
  for (std::size_t i = 0; i < results[0].log.size(); ++i) {
    EXPECT_EQ(results[0].log[i].config, results[1].log[i].config) << i;
    EXPECT_EQ(results[0].log[i].status, results[1].log[i].status) << i;
    EXPECT_EQ(results[0].log[i].score, results[1].log[i].score) << i;
    EXPECT_EQ(results[0].log[i].cost_s, results[1].log[i].cost_s) << i;
  }
  EXPECT_EQ(results[0].elapsed_s, results[1].elapsed_s);
  EXPECT_EQ(results[0].unfit, 1);
  EXPECT_EQ(results[1].unfit, 1);
}

// --- the data-parallel knob space ---

kernels::train::ParamLayout layout_of(kernels::train::ModelConfig c) { return kernels::train::param_layout(c); }

TEST(TuneTrainDpSpace, BucketCapsThatMakeNoDifferenceAreDropped) {
  kernels::train::ModelConfig mlp;  // the quick preset's CPU mlp: 2 x 128x128, head 128x2048 (~1.1 MiB)
  mlp.kind = kernels::train::ModelKind::Mlp;
  mlp.layers = 2;
  mlp.hidden = 128;
  mlp.vocab = 2048;
  // 1 MiB splits the gradient in two; 5, 25 and 100 all give one bucket: 25 (the default) stays.
  EXPECT_EQ(bucket_mb_values(layout_of(mlp), 2), (std::vector<std::string>{"1", "25"}));
  kernels::train::ModelConfig gpt2;  // GPT-2 small: ~500 MB of fp32 gradients, every cap differs
  gpt2.layers = 12;
  gpt2.hidden = 768;
  gpt2.heads = 12;
  gpt2.seq = 1024;
  gpt2.vocab = 50257;
  EXPECT_EQ(bucket_mb_values(layout_of(gpt2), 2), (std::vector<std::string>{"1", "5", "25", "100"}));
  kernels::train::ModelConfig tiny = mlp;  // 8 kB: one bucket whatever the cap
  tiny.layers = 1;
  tiny.hidden = 16;
  tiny.vocab = 16;
  EXPECT_EQ(bucket_mb_values(layout_of(tiny), 4), (std::vector<std::string>{"25"}));
}

DeviceInfo cpu() {
  DeviceInfo d;
  d.kind = DeviceKind::Cpu;
  d.name = "test cpu";
  return d;
}

TEST(TuneTrainDpSpace, SeveralRanksSearchTheDdpStepsBucketCap) {
  TrainTuneRequest r;
  r.device = cpu();
  r.model = "mlp";
  r.ranks = 2;
  r.launcher = "mpirun -np 2";
  const TrainSpace s = make_train_space(r, 1e12);
  // The preset's micro-batch 4 on each of 2 ranks: global batch 8, 4 per rank.
  EXPECT_EQ(s.global_batch, 8);
  EXPECT_EQ(s.knobs, (std::vector<std::string>{"precision", "micro_batch", "accum", "recompute", "dp", "bucket_mb"}));
  EXPECT_EQ(config_label(s.default_config), "precision=fp32 micro_batch=4 accum=1 recompute=none dp=ddp bucket_mb=25");
  std::set<std::string> seen;
  for (const Candidate& c : s.candidates) {
    EXPECT_EQ(knob(c.config, "dp"), "ddp");
    EXPECT_EQ(std::stoll(knob(c.config, "micro_batch")) * std::stoll(knob(c.config, "accum")) * 2, 8);
    seen.insert(knob(c.config, "micro_batch") + "/" + knob(c.config, "bucket_mb"));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"1/1", "1/25", "2/1", "2/25", "4/1", "4/25"}));
  EXPECT_EQ(s.fixed["ranks"], 2);
  EXPECT_EQ(s.fixed["launcher"], "mpirun -np 2");
  EXPECT_EQ(run_command(s, s.default_config, "cpu"),
            "mpirun -np 2 gpubench run --suite train --preset quick --device cpu --axis model=mlp --axis precision=fp32 "
            "--axis micro_batch=4 --axis accum=1 --axis recompute=none --axis dp=ddp --axis bucket_mb=25");
  // --dp ddp,zero1: both modes at each cap; the default keeps the first.
  r.dp_modes = {"ddp", "zero1"};
  const TrainSpace both = make_train_space(r, 1e12);
  EXPECT_EQ(both.candidates.size(), 12u);
  EXPECT_EQ(config_label(both.default_config), "precision=fp32 micro_batch=4 accum=1 recompute=none dp=ddp bucket_mb=25");
  std::set<std::string> modes;
  for (const Candidate& c : both.candidates) modes.insert(knob(c.config, "dp"));
  EXPECT_EQ(modes, (std::set<std::string>{"ddp", "zero1"}));
  r.dp_modes = {"ddp"};
  // The data-parallel knobs are searched, not fixed.
  r.shape_axes = {"bucket_mb=5"};
  EXPECT_THROW(make_train_space(r, 1e12), UsageError);
  r.shape_axes = {"dp=zero1"};
  EXPECT_THROW(make_train_space(r, 1e12), UsageError);
  r.shape_axes.clear();
  // One process: no data-parallel knobs, no launcher.
  r.ranks = 1;
  const TrainSpace one = make_train_space(r, 1e12);
  EXPECT_EQ(one.knobs, (std::vector<std::string>{"precision", "micro_batch", "accum", "recompute"}));
  EXPECT_EQ(run_command(one, one.default_config, "cpu").rfind("gpubench run ", 0), 0u);
}

}  // namespace
}  // namespace gpubench::tune
