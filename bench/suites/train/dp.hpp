#pragma once
// Data-parallel training steps: the pure pieces (the `dp` mode, the gradient bucket plan, the
// communicator interface the step drives). Free of harness and model details, so the CPU step
// (dp_cpu.cpp), the GPU step and the perf/ benchmarks share them with plain buffers.
//
// The flat gradient buffer is the model's parameter layout (kernels/train/model_config.hpp:
// tensors in forward order at multiples of kParamAlign). Backward produces gradients in the
// reverse of that order (the LM head / last layer first; the tied embedding `wte` at offset 0
// completes last), so "every gradient at offsets >= w is complete" is a watermark w that only
// decreases during backward, and bucket i is ready when w <= buckets[i].offset.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/core/case.hpp"
#include "kernels/train/model_config.hpp"

namespace gpubench::suites::train {

// none: one device, no communication (the default; the only mode outside a launcher).
// ddp: every rank holds the whole model; gradients are averaged by all-reduce, every rank runs
//      AdamW on all parameters.
// zero1: gradients are reduce-scattered; each rank runs AdamW on its shard only (optimizer
//      state for the shard only) and the parameters are all-gathered.
enum class DpMode { None, Ddp, Zero1 };
std::optional<DpMode> parse_dp(const std::string& s);  // "none", "ddp", "zero1"
std::string to_string(DpMode m);

// PyTorch DDP's default bucket_cap_mb (torch.nn.parallel.DistributedDataParallel): 25 MiB.
inline constexpr double kDefaultBucketMb = 25;
// Bytes of one "MB" of bucket_mb: PyTorch's cap is int(bucket_cap_mb * 1024 * 1024).
inline constexpr double kBucketMbBytes = 1024.0 * 1024.0;

// One bucket: the span [offset, offset + count) of the flat gradient (and parameter) buffer.
// With zero1 every count is a multiple of the ranks and rank r owns the shard
// [offset + r * shard, offset + (r + 1) * shard), shard = count / ranks.
struct Bucket {
  std::int64_t offset = 0;
  std::int64_t count = 0;
  std::int64_t shard = 0;  // count / ranks (zero1; count for ddp and none)
  // Layout tensors [first_tensor, last_tensor] start in this span (none when a zero1 boundary
  // move left the bucket only the tail of a tensor: first_tensor > last_tensor).
  int first_tensor = 0;
  int last_tensor = -1;
  std::int64_t shard_offset(int rank) const { return offset + rank * shard; }
};

// Buckets in backward order: buckets[0] holds the highest offsets (ready first),
// buckets.back() starts at offset 0 (ready when backward ends).
struct BucketPlan {
  std::vector<Bucket> buckets;
  std::int64_t elements = 0;  // flat buffer elements the buckets cover: layout.total padded (see below)
  std::int64_t padding = 0;   // elements - layout.total (zeros appended to the flat buffers)
  int ranks = 1;
  DpMode mode = DpMode::None;
  std::size_t element_bytes = 4;
  double cap_bytes = 0;

  std::int64_t bytes() const { return elements * static_cast<std::int64_t>(element_bytes); }
  // Index of the first bucket not yet ready at watermark w (buckets.size() when all are).
  std::size_t ready_count(std::int64_t watermark) const;
  // This rank's shard elements over all buckets (zero1), or `elements` (ddp, none).
  std::int64_t shard_elements() const;
};

// Groups the layout's tensors, walked in backward order (highest offset first), into buckets of
// about `bucket_mb` MiB of `element_bytes` elements, as PyTorch DDP does: a tensor joins the
// open bucket, which closes once it holds at least the cap; a tensor of the cap or more is a
// bucket of its own. A tensor's extent runs from its offset to the next tensor's (the alignment
// gap after it, whose gradients are always zero, goes with it).
//
// zero1 (reduce-scatter needs a count divisible by the ranks): each boundary between buckets
// is moved up (toward the end of the buffer) to a multiple of the ranks, so a few elements of
// a bucket's lowest tensor move into the next bucket (that bucket is ready later, so it never
// waits on them early); and the buffer end is padded with zeros to a multiple of the ranks
// (`padding` elements, which the model's flat buffers must have: their gradient is zero and
// AdamW keeps a zero parameter with zero gradient at zero). A bucket that would be empty after
// the moves is merged into the next one.
// Throws std::invalid_argument for bucket_mb <= 0 or ranks < 1.
BucketPlan plan_buckets(const kernels::train::ParamLayout& layout, double bucket_mb, std::size_t element_bytes,
                        DpMode mode, int ranks);

// A plan of buckets of the given element counts, in backward order (buckets[0] at the end of
// the buffer), without a model: for benchmarks of the communication path with plain buffers
// (perf/). zero1 rounds each count up to a multiple of the ranks. Throws std::invalid_argument
// for a count < 1 or ranks < 1.
BucketPlan plan_from_counts(const std::vector<std::int64_t>& counts, std::size_t element_bytes, DpMode mode,
                            int ranks);

// Bytes one rank sends per step for the plan, counted as the algorithm-independent payload
// (nccl-tests' "size"): ddp = one all-reduce of every bucket (elements * element_bytes);
// zero1 = one reduce-scatter plus one all-gather of every bucket (2 * elements *
// element_bytes). None: 0.
double comm_bytes_per_step(const BucketPlan& plan);

// The communication of one step, driven by the step in this order:
//   backward: start_bucket(i) as each bucket becomes ready (in order), progress() between
//             layers; then wait_gradients().
//   ddp:      the gradient spans now hold the sum over ranks (the step pre-divides by ranks).
//   zero1:    shard_gradients() holds this rank's reduced shards, bucket after bucket
//             (bucket i at shard_base(i)); the step updates its parameter shards, then
//             gather_parameters() and wait_parameters().
// An implementation over MPI (mpi_grad_comm) and one over NCCL (the GPU path) share it; the
// buffers are the caller's and must outlive the communicator.
class GradComm {
 public:
  virtual ~GradComm() = default;
  virtual const BucketPlan& plan() const = 0;
  virtual int rank() const = 0;
  virtual void start_bucket(std::size_t i) = 0;
  // Lets started collectives advance (MPI's non-blocking collectives progress only inside MPI
  // calls); cheap, call it often.
  virtual void progress() = 0;
  virtual void wait_gradients() = 0;
  // zero1 only.
  virtual const float* shard_gradients() const { return nullptr; }
  virtual void gather_parameters() {}
  virtual void wait_parameters() {}
  // Seconds from each bucket's start_bucket to when its collective was seen complete (by
  // progress or a wait), for the last step; empty where not measured.
  virtual std::vector<double> bucket_seconds() const { return {}; }
  // Every rank arrives before any goes on (bounded like the waits): timed steps then start
  // together, so one rank's head start is not counted as another's communication.
  virtual void barrier() {}
  // The median time of an all-reduce of one float on this communicator, outside the timed
  // steps: the latency the scaling projection cannot read off one bucket size (a bucket's time
  // mixes latency and bandwidth). nullopt where not measured. Every rank calls it.
  virtual std::optional<double> small_all_reduce_seconds() { return std::nullopt; }

  std::int64_t shard_base(std::size_t i) const;  // prefix sum of the shards before bucket i
};

// The bucket timeline every train case writes in its entry's `gpubench.details` (the scaling
// projection reads it; docs/results-format.md): grad_buckets [{bytes, ready_s}] in backward
// order (ready_s from the start of the last micro-step's backward until the bucket's gradients
// are complete, from a compute-only step timed outside the measured runs), backward_s (that
// backward), step_s (the compute-only step), bucket_mb, grad_bytes, param_count, dp, ranks,
// and comm_s when given (dp cases: the collectives' time per step when nothing hides them).
nlohmann::ordered_json timeline_details(const BucketPlan& plan, double bucket_mb, const std::vector<double>& ready_s,
                                        double backward_s, double step_s, std::int64_t param_count,
                                        std::optional<double> comm_s);

// The CPU communicator: MPI non-blocking collectives on a duplicate of MPI_COMM_WORLD, fp32
// sum (MPI_Iallreduce in place for ddp; MPI_Ireduce_scatter_block into a shard buffer and
// MPI_Iallgather in place for zero1), progressed with MPI_Testall. `grads` and `params` hold
// plan.elements floats. Null when gpubench was built without MPI or MPI is not initialised
// (a program of its own calls MPI_Init first; gpubench's run joins the mpi::session).
std::unique_ptr<GradComm> make_mpi_grad_comm(const BucketPlan& plan, float* grads, float* params);

// The figures of a data-parallel case (CPU and GPU alike) from its timing rounds: rounds[kind]
// holds every rank's times of each round for the three kinds of step (0 overlapped, 1 with
// communication off, 2 every collective after backward). A round counts its slowest rank and
// each figure is the median over rounds; comm_s = serial - compute only (at least 0);
// spread_pct = (max - min) / max of the ranks' compute-only medians.
struct DpRoundFigures {
  double step_s = 0, compute_s = 0, comm_s = 0, spread_pct = 0;
  std::array<std::vector<double>, 3> rank_median_s;  // per kind: each rank's median
  // Share of the communication hidden behind backward, %: (comm - exposed) / comm in [0, 100];
  // 0 without communication.
  double overlap_pct() const;
};
DpRoundFigures summarize_dp_rounds(const std::array<std::vector<std::vector<double>>, 3>& rounds);
double dp_median(std::vector<double> v);  // 0 for none

// What the CPU and the GPU data-parallel steps both report (docs/suite-train.md, "Metrics").
// add_dp_metrics: `m` holds one rank's step metrics (FLOPs and MFU per device); its items become
// the whole global batch's, and the figures of the timing rounds join its extras.
void add_dp_metrics(Metrics& m, const DpRoundFigures& f, DpMode mode, int ranks, const BucketPlan& plan);
// The entry's details: the bucket timeline (compute-only step and comm_s from `f`), each rank's
// medians, the round count and the global batch. `bucket_comm_s` (one per bucket, or empty):
// each bucket's collective alone (all-reduce for ddp, reduce-scatter for zero1), written as
// grad_buckets[i].comm_s; `gpubench scaling` reads them as a curve when no collectives suite ran.
nlohmann::ordered_json dp_details(const BucketPlan& plan, double bucket_mb, const std::vector<double>& ready_s,
                                  double backward_s, std::int64_t param_count, const DpRoundFigures& f, int rounds,
                                  std::int64_t global_batch, const std::vector<double>& bucket_comm_s = {});
// The `suspect` reason when the compute-only step measured more than `tolerance` times the step
// that also communicates (scaling_efficiency above it: noise, not a believable figure).
// details.latency_probe {op: "all_reduce", bytes: 4, seconds}: GradComm::small_all_reduce_seconds
// where it was measured (the scaling projection's latency; docs/results-format.md).
void add_latency_probe(nlohmann::ordered_json& details, std::optional<double> seconds);

std::optional<std::string> dp_suspect(const DpRoundFigures& f, double tolerance);

}  // namespace gpubench::suites::train
