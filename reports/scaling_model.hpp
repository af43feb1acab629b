#pragma once
// The data-parallel scaling model of `gpubench scaling` (docs/scaling.md): collective times read
// off measured bus-bandwidth curves and converted to N ranks, hierarchical across nodes, and
// overlapped with backward along a bucket timeline measured on one device. Pure arithmetic on
// numbers the callers extract from results files; no I/O, no CUDA.
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpubench::reports::scaling {

enum class Op { all_reduce, reduce_scatter, all_gather };
const char* op_name(Op op);

// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw x factor, where for a
// ring all-reduce every rank sends and receives 2(n-1)/n of the buffer, for reduce-scatter
// and all-gather (n-1)/n. 0 for n <= 1 (no communication).
double bus_factor(Op op, int n);
// Sequential steps of the ring algorithm, each paying one link latency: 2(n-1) for all-reduce
// (reduce-scatter then all-gather), n-1 for reduce-scatter and all-gather.
int ring_steps(Op op, int n);

// One operation's measured curve at `ranks` ranks: time per call against nccl-tests' size
// (the larger of a rank's send and receive buffers, in bytes).
struct Curve {
  struct Point {
    double bytes = 0;
    double seconds = 0;
  };
  Op op = Op::all_reduce;
  int ranks = 0;
  std::vector<Point> points;  // sorted by bytes, one per size, seconds > 0
  std::string label;          // where it came from, for notes ("all_reduce, 2 ranks, mpi, 1 node")
  // A small message timed apart from the curve on the same ranks (a data-parallel case's
  // details.latency_probe: one float all-reduced), where there is one.
  struct Probe {
    Op op = Op::all_reduce;
    double bytes = 0;
    double seconds = 0;
  };
  std::optional<Probe> latency_probe;
};

// Sizes up to this many bytes are taken as latency alone: at 256 B even a 1 GB/s link adds
// 0.26 us, below the latency of any collective measured (a 2-rank MPI all-reduce on one host
// ~0.2 us at 4 B and ~0.27 us at 256 B, OSU 7.4 in docs/scaling.md).
inline constexpr double kLatencyOnlyBytes = 256;

// The latency of one ring step of curve `c` (at c.ranks), and how it was found:
//  1. the curve's smallest size is at most kLatencyOnlyBytes: its time / ring_steps(m);
//  2. else a latency probe: its time / ring_steps(probe's op, m);
//  3. else two or more sizes: the line t = ring_steps(m) x alpha + S x slope through the two
//     smallest, alpha clamped to [0, t(smallest) / ring_steps(m)];
//  4. else (one size, no probe) latency and bandwidth cannot be told apart: throws
//     std::invalid_argument naming the measurement that is missing.
struct StepLatency {
  double seconds = 0;
  std::string how;  // empty for 1; else a note for the projection's assumptions
};
StepLatency step_latency(const Curve& c);

// Network figures given on the command line (--inter-node-gbps, --inter-node-latency-us):
// bus bandwidth per GPU in GB/s (decimal) and the latency of one ring step.
struct LinkFigures {
  double busbw_gbps = 0;
  double latency_s = 0;
};

// What the model had to assume while computing a time (sizes outside the measured range,
// rank counts other than the measured one); shown beside the projection.
using Notes = std::set<std::string>;

// "512 B", "64 KiB", "1.5 MiB".
std::string size_text(double bytes);

// Bus bandwidth of the curve at `bytes`: linear interpolation in log(size) between the two
// measured sizes around it; clamped to the end points outside the measured range.
double busbw_at(const Curve& c, double bytes);

// Time of one call on `bytes` at n ranks from a curve measured at m = c.ranks ranks:
//   alpha  = step_latency(c)                                 (latency of one ring step)
//   t_m(S) = S x bus_factor(m) / busbw_at(S)                 (the measured curve, interpolated)
//   t_n(S) = ring_steps(n) x alpha + max(0, t_m(S) - ring_steps(m) x alpha) x bus_factor(n) / bus_factor(m)
// i.e. the bandwidth part of the measured time scaled by the bus factors and the latency part
// by the ring's step count. At n = m it returns the measured time (within the measured range).
// Below the measured range the bandwidth part is taken as zero (latency only), above it the
// last bus bandwidth holds; both add a note. 0 for n <= 1 or bytes <= 0.
double curve_time(const Curve& c, double bytes, int n, Notes* notes = nullptr);

// The same from figures: ring_steps(n) x latency + S x bus_factor(n) / busbw.
double link_time(Op op, const LinkFigures& f, double bytes, int n);

// Where collectives run: curves measured inside one node (and between nodes when measured),
// or figures for the network between nodes. gpus_per_node 0: flat, every rank on the intra
// network (no hierarchy).
struct Network {
  std::vector<Curve> intra;  // any of the three operations, any rank counts
  std::vector<Curve> inter;  // measured across nodes
  std::optional<LinkFigures> inter_figures;  // wins over `inter` when given
  int gpus_per_node = 0;
};

// Time of `op` on `bytes` (nccl-tests' size) across n ranks on network `net`:
// n <= gpus_per_node or flat: the intra curve; else hierarchical over k = n / gpus_per_node
// nodes: the intra part at gpus_per_node ranks on the whole buffer plus the inter part at k
// ranks on bytes / gpus_per_node (one ring per GPU "rail", all in parallel):
//   all-reduce     = intra all-reduce(S, G) + inter all-reduce(S/G, k)
//   reduce-scatter = intra reduce-scatter(S, G) + inter reduce-scatter(S/G, k); all-gather alike.
// A missing operation's curve is derived (reduce-scatter or all-gather = half an all-reduce;
// all-reduce = reduce-scatter + all-gather), with a note. Curve choice: the one measured at n
// ranks (intra) when there is one, else the one at the most ranks.
// Throws std::invalid_argument naming what is missing (no curve for the operation; no
// inter-node curve nor figures when nodes are involved; n not a multiple of gpus_per_node).
double op_time(const Network& net, Op op, double bytes, int n, Notes* notes = nullptr);

// ---------------------------------------------------------------- the step

enum class Dp { ddp, zero1 };
const char* dp_name(Dp dp);

struct Bucket {
  double bytes = 0;
  double ready_s = 0;  // from the start of the (last micro-step's) backward
};

// A data-parallel step over the bucket timeline: each bucket's collective starts at
// max(ready_s, previous collective's end) and runs for its time; ddp: all-reduce per bucket;
// zero1: reduce-scatter per bucket in the same way, then after the optimizer an all-gather of
// every bucket's parameters, which nothing overlaps.
//   exposed = max(0, end of the last overlapped collective - backward_s) + the all-gathers
//   step    = compute_s + exposed
//   overlap_pct = 100 x (comm_s - exposed) / comm_s (share of the communication time hidden
//                 behind backward; 100 when there is none)
//   scaling_efficiency = compute_s / step
//   zero1 compute_s = compute_s - optimizer_s x (1 - 1/N): each rank updates its 1/N shard
struct StepInput {
  std::vector<Bucket> buckets;  // in backward order
  double backward_s = 0;
  double compute_s = 0;    // the compute-only step
  double optimizer_s = 0;  // the whole model's optimizer update within it (0: unknown, not credited)
};
struct StepProjection {
  int gpus = 1;
  int nodes = 1;
  double compute_s = 0, comm_s = 0, exposed_s = 0, step_s = 0, overlap_pct = 100, efficiency = 1;
};
StepProjection project_step(const Network& net, Dp dp, const StepInput& in, int gpus, Notes* notes = nullptr);

// Only the overlap arithmetic, for given collective times (one per bucket); for the tests.
struct Overlap {
  double comm_end_s = 0, comm_s = 0, exposed_s = 0;
};
Overlap overlap(const std::vector<Bucket>& buckets, const std::vector<double>& seconds, double backward_s);

}  // namespace gpubench::reports::scaling
