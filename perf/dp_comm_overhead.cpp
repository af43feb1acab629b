// The data-parallel communication path's overhead (issue 17): the train suite's gradient
// communicator (GradComm over MPI non-blocking collectives, bench/suites/train/dp.hpp) against
// bare blocking MPI collectives on the same buckets of the same buffers. Run under a launcher:
//   mpirun -np 2 build/ci/perf/gpubench_perf_dp_comm [ROUNDS]
// Cases: one bucket of 1, 5, 25 and 100 MiB (ddp: all-reduce), and GPT-2 small's whole
// gradient (124M fp32 parameters, the train suite's gpt2-124m layout) in the buckets the train
// suite plans at a 1, 5, 25 and 100 MiB cap (ddp), and at 25 MiB for zero1 (reduce-scatter then
// all-gather). Each side's time is the slowest rank's, from a barrier to the last bucket's
// completion; GradComm is handed every bucket back to back (calling progress() after each, as
// backward would between layers) and then waits; bare calls MPI_Allreduce (zero1:
// MPI_Reduce_scatter_block, then MPI_Allgather) bucket after bucket. Sides alternate within a
// round; the best and the median over rounds are compared. The first round of every case checks
// every element of the results. Rank 0 prints one row per case; exit 1 when a check fails.
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/mpi/session.hpp"
#include "bench/suites/train/dp.hpp"
#include "kernels/train/model_config.hpp"

namespace tr = gpubench::suites::train;
namespace kt = gpubench::kernels::train;

namespace {

struct Case {
  std::string label;
  tr::BucketPlan plan;
};

// One bucket of `mib` MiB (a whole number of elements per rank).
tr::BucketPlan one_bucket(double mib, int ranks) {
  tr::BucketPlan p;
  p.ranks = ranks;
  p.mode = tr::DpMode::Ddp;
  p.element_bytes = 4;
  p.cap_bytes = mib * tr::kBucketMbBytes;
  std::int64_t n = static_cast<std::int64_t>(std::llround(p.cap_bytes / 4));
  n -= n % ranks;
  p.elements = n;
  tr::Bucket b;
  b.offset = 0;
  b.count = b.shard = n;
  p.buckets = {b};
  return p;
}

// GPT-2 small (the train suite's gpt2-124m preset): 12 layers, hidden 768, 12 heads,
// context 1024, vocabulary 50257.
kt::ParamLayout gpt2_small() {
  kt::ModelConfig c;
  c.kind = kt::ModelKind::Transformer;
  c.layers = 12;
  c.hidden = 768;
  c.heads = 12;
  c.ffn_mult = 4;
  c.seq = 1024;
  c.batch = 1;
  c.vocab = 50257;
  return kt::param_layout(c);
}

double median(std::vector<double> v) {  // upper median for even counts
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double slowest(double mine) {
  double max = 0;
  MPI_Allreduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

class Runner {
 public:
  Runner(const tr::BucketPlan& plan, int rank, int ranks)
      : plan_(plan), rank_(rank), ranks_(ranks),
        grads_(static_cast<std::size_t>(plan.elements)), params_(static_cast<std::size_t>(plan.elements)),
        shard_(static_cast<std::size_t>(plan.shard_elements())) {
    MPI_Comm_dup(MPI_COMM_WORLD, &bare_comm_);
    comm_ = tr::make_mpi_grad_comm(plan_, grads_.data(), params_.data());
  }
  ~Runner() { MPI_Comm_free(&bare_comm_); }
  bool ok() const { return comm_ != nullptr; }

  // Inputs every side starts from: gradients rank + 1 everywhere; parameters this rank's
  // shards rank + 1, the rest 0 (zero1's all-gather fills them in).
  void reset() {
    std::fill(grads_.begin(), grads_.end(), static_cast<float>(rank_ + 1));
    if (plan_.mode != tr::DpMode::Zero1) return;
    std::fill(params_.begin(), params_.end(), 0.0f);
    for (const tr::Bucket& b : plan_.buckets) {
      std::fill_n(params_.begin() + b.shard_offset(rank_), b.shard, static_cast<float>(rank_ + 1));
    }
  }

  double time_gradcomm() {
    reset();
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < plan_.buckets.size(); ++i) {
      comm_->start_bucket(i);
      comm_->progress();
    }
    comm_->wait_gradients();
    if (plan_.mode == tr::DpMode::Zero1) {
      comm_->gather_parameters();
      comm_->wait_parameters();
    }
    const double t = seconds_since(t0);
    reduced_ = plan_.mode == tr::DpMode::Zero1 ? comm_->shard_gradients() : grads_.data();
    return slowest(t);
  }

  double time_bare() {
    reset();
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    std::int64_t base = 0;
    for (const tr::Bucket& b : plan_.buckets) {
      if (plan_.mode == tr::DpMode::Zero1) {
        MPI_Reduce_scatter_block(grads_.data() + b.offset, shard_.data() + base, static_cast<int>(b.shard), MPI_FLOAT,
                                 MPI_SUM, bare_comm_);
        base += b.shard;
      } else {
        MPI_Allreduce(MPI_IN_PLACE, grads_.data() + b.offset, static_cast<int>(b.count), MPI_FLOAT, MPI_SUM,
                      bare_comm_);
      }
    }
    if (plan_.mode == tr::DpMode::Zero1) {
      for (const tr::Bucket& b : plan_.buckets) {
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, params_.data() + b.offset, static_cast<int>(b.shard),
                      MPI_FLOAT, bare_comm_);
      }
    }
    const double t = seconds_since(t0);
    reduced_ = plan_.mode == tr::DpMode::Zero1 ? shard_.data() : grads_.data();
    return slowest(t);
  }

  // Every element of the last side's results: the reduced gradients (all of them, or this
  // rank's shards) equal the sum over ranks of rank + 1; zero1's gathered parameters hold
  // each shard owner's rank + 1. Returns the wrong elements over every rank.
  long long wrong_elements() const {
    const float sum = static_cast<float>(ranks_ * (ranks_ + 1) / 2);
    long long wrong = 0;
    const std::int64_t reduced = plan_.mode == tr::DpMode::Zero1 ? plan_.shard_elements() : plan_.elements;
    for (std::int64_t i = 0; i < reduced; ++i) wrong += reduced_[i] != sum;
    if (plan_.mode == tr::DpMode::Zero1) {
      for (const tr::Bucket& b : plan_.buckets) {
        for (int r = 0; r < ranks_; ++r) {
          const float* p = params_.data() + b.shard_offset(r);
          for (std::int64_t j = 0; j < b.shard; ++j) wrong += p[j] != static_cast<float>(r + 1);
        }
      }
    }
    long long all = 0;
    MPI_Allreduce(&wrong, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
  }

 private:
  const tr::BucketPlan& plan_;
  int rank_, ranks_;
  std::vector<float> grads_, params_, shard_;
  MPI_Comm bare_comm_ = MPI_COMM_NULL;
  std::unique_ptr<tr::GradComm> comm_;
  const float* reduced_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  gpubench::mpi::choose_library_settings();  // the MPI settings gpubench runs with
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);  // as gpubench (bench/mpi/session_mpi.cpp)
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  if (ranks < 2) {
    if (rank == 0) std::fprintf(stderr, "gpubench_perf_dp_comm: run it under a launcher with 2 or more ranks (mpirun -np 2 ...)\n");
    MPI_Finalize();
    return 2;
  }

  std::vector<Case> cases;
  for (double mib : {1.0, 5.0, 25.0, 100.0}) cases.push_back({fmt::format("1 bucket of {:g} MiB, ddp", mib), one_bucket(mib, ranks)});
  const kt::ParamLayout gpt2 = gpt2_small();
  for (double cap : {1.0, 5.0, 25.0, 100.0}) {
    cases.push_back({fmt::format("gpt2-124m, cap {:g} MiB, ddp", cap), tr::plan_buckets(gpt2, cap, 4, tr::DpMode::Ddp, ranks)});
  }
  cases.push_back({"gpt2-124m, cap 25 MiB, zero1", tr::plan_buckets(gpt2, 25, 4, tr::DpMode::Zero1, ranks)});

  if (rank == 0) {
    fmt::print("GradComm (MPI non-blocking) vs bare blocking MPI on the same buckets: {} ranks, {} rounds, slowest rank\n",
               ranks, rounds);
    fmt::print("{:<32} {:>7} {:>10} | {:>10} {:>10} {:>9} | {:>10} {:>10} {:>9}\n", "case", "buckets", "MB", "bare best",
               "GradComm", "overhead", "bare med", "GradComm", "overhead");
  }
  int status = 0;
  for (const Case& c : cases) {
    Runner run(c.plan, rank, ranks);
    if (!run.ok()) {
      if (rank == 0) std::fprintf(stderr, "gpubench_perf_dp_comm: no MPI gradient communicator (built without MPI)\n");
      MPI_Finalize();
      return 2;
    }
    std::vector<double> bare, grad;
    for (int r = 0; r < rounds; ++r) {
      // Alternate which side goes first, so drift in the machine's load hits both.
      for (int side = 0; side < 2; ++side) {
        const bool gradcomm_side = (side == 0) == (r % 2 == 0);
        (gradcomm_side ? grad : bare).push_back(gradcomm_side ? run.time_gradcomm() : run.time_bare());
        if (r == 0) {
          const long long wrong = run.wrong_elements();
          if (wrong != 0) {
            status = 1;
            if (rank == 0) fmt::print(stderr, "{}: {} has {} wrong elements\n", c.label, gradcomm_side ? "GradComm" : "bare", wrong);
          }
        }
      }
    }
    if (rank == 0) {
      const double bb = *std::min_element(bare.begin(), bare.end()), gb = *std::min_element(grad.begin(), grad.end());
      const double bm = median(bare), gm = median(grad);
      fmt::print("{:<32} {:>7} {:>10.1f} | {:>8.2f}ms {:>8.2f}ms {:>8.1f}% | {:>8.2f}ms {:>8.2f}ms {:>8.1f}%\n", c.label,
                 c.plan.buckets.size(), static_cast<double>(c.plan.bytes()) / 1e6, bb * 1e3, gb * 1e3, (gb / bb - 1) * 100,
                 bm * 1e3, gm * 1e3, (gm / bm - 1) * 100);
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return status;
}
