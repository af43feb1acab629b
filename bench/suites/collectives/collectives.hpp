#pragma once
// The `collectives` suite: NCCL collectives across GPUs (one process driving every local GPU,
// or one rank per GPU under MPI) and the same operations on host memory through MPI's own
// collectives (device cpu), with the figures nccl-tests reports computed the same way.
//
// As in nccl-tests, one common harness (collective_case.cpp) and one short file per operation
// (op_*.cpp) holding only what is specific to it: how a byte size becomes per-rank counts, the
// bytes algbw counts, the bus-bandwidth factor, and the exact answer of every output element.
// Inputs are small integers chosen so that every answer is exact in every type (exact.cpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/core/suite.hpp"

namespace gpubench::suites::collectives {

// ---- element types and reductions (exact.cpp) ----
enum class Dtype { F32, F16, BF16, F64, I32, F8E4M3, F8E5M2 };
enum class RedOp { Sum, Prod, Max, Min, Avg };

struct DtypeInfo {
  Dtype type;
  const char* name;  // axis value
  int bytes;
  double max_exact;  // every integer 0..max_exact is exactly representable
  double epsilon;    // 2^-(mantissa bits): the relative step, for the one inexact case (avg)
  bool is_float;
};
const std::vector<DtypeInfo>& dtypes();
const DtypeInfo& info(Dtype t);
std::optional<Dtype> parse_dtype(const std::string& name);
const std::vector<std::string>& redop_names();  // sum, prod, max, min, avg
std::optional<RedOp> parse_redop(const std::string& name);

// Stores `v` as element `i` of a buffer of `t` (rounded to nearest even) and reads it back.
void store_element(Dtype t, void* buffer, std::int64_t i, double v);
double load_element(Dtype t, const void* buffer, std::int64_t i);
double round_to(Dtype t, double v);  // the value `v` becomes once stored as `t`

// What the inputs of one case depend on.
struct InputSpec {
  Dtype dtype = Dtype::F32;
  RedOp redop = RedOp::Sum;
  bool reduces = false;  // a reducing operation (else the values only move)
  int ranks = 1;
};
// Element `i` of rank `rank`'s input: a small integer (see exact.cpp for the schemes).
double input_value(const InputSpec& spec, int rank, std::int64_t i);
// The reduction over ranks of element `i` of the inputs, as the collective must store it.
double reduced_value(const InputSpec& spec, std::int64_t i);
// Whether `got` is the answer `expected`: equal, except an average of floats over a rank count
// that is not a power of two (x/n is then rounded, in an order NCCL and MPI do not fix), which
// may differ by two steps of the type.
bool matches(const InputSpec& spec, double got, double expected);

// ---- uneven exchanges (exchange.cpp): alltoallv and moe_dispatch ----
// Who sends how many elements to whom in one all-to-all-v, with MPI_Alltoallv's displacements:
// each rank's send buffer holds its blocks packed in destination order, each receive buffer
// the blocks it gets packed in source order.
struct Exchange {
  int ranks = 0;
  std::vector<std::int64_t> count;       // [src * ranks + dst]: elements src sends dst
  std::vector<std::int64_t> send_displ;  // [src * ranks + dst]: where src's block for dst starts
  std::vector<std::int64_t> recv_displ;  // [dst * ranks + src]: where dst's block from src starts
  std::int64_t sent(int src) const;
  std::int64_t received(int dst) const;
  std::int64_t max_sent() const { return most_sent; }
  std::int64_t max_received() const { return most_received; }
  std::int64_t most_sent = 0, most_received = 0;  // over ranks; set by make_exchange
  // Receive element `j` of `dst`: the rank that sent it and its index in that rank's send
  // buffer; nullopt past what `dst` receives.
  std::optional<std::pair<int, std::int64_t>> source_of(int dst, std::int64_t j) const;

  // moe_dispatch only: every rank holds `tokens` tokens of `hidden` elements. Token t of rank
  // r goes to rank dest[r * tokens + t]; packed[r * tokens + p] is the token at position p of
  // r's send buffer (its tokens grouped by destination, in token order within a group).
  std::int64_t tokens = 0, hidden = 0;
  std::vector<int> dest;
  std::vector<std::int64_t> packed;
};
// The displacements of `count` ([src * ranks + dst]).
Exchange make_exchange(int ranks, std::vector<std::int64_t> count);
// alltoallv's counts: each rank splits `per_rank` elements over every rank (itself included) in
// proportion to weights 1 + 2u, u uniform in [0, 1) from kernels/common/random.hpp's counter
// generator (seed, index src * ranks + dst); largest-remainder rounding (ties to the lower
// rank) makes every row sum to exactly `per_rank`. So the blocks differ up to 3:1 and the
// totals received differ between ranks, as an uneven exchange's do.
std::vector<std::int64_t> uneven_counts(std::int64_t per_rank, int ranks, std::uint64_t seed);
// moe_dispatch's router: top-1, every token to a rank drawn uniformly (counter generator over
// seed, rank and token), as a balanced router's expectation; the draw makes the blocks uneven.
int moe_route(std::uint64_t seed, int rank, std::int64_t token, int ranks);
Exchange moe_exchange(std::int64_t tokens, std::int64_t hidden, int ranks, std::uint64_t seed);
// The same exchange's counts and displacements without the per-token table (dest and packed stay
// empty): what planning needs (sizes, footprints), at no cost in memory.
Exchange moe_exchange_counts(std::int64_t tokens, std::int64_t hidden, int ranks, std::uint64_t seed);
constexpr std::uint64_t kExchangeSeed = 31;
// moe_dispatch's routing table is held in memory for the check: at most this many tokens a rank.
constexpr std::int64_t kMaxMoeTokens = std::int64_t{1} << 22;

// ---- operations (one file each) ----
// Counts of one collective call from the size axis (bytes per rank, as nccl-tests' -b/-e).
struct Counts {
  std::int64_t send = 0;          // elements in each rank's send buffer (the largest, when uneven)
  std::int64_t recv = 0;          // elements in each rank's receive buffer (the largest, when uneven)
  std::int64_t param = 0;         // the count argument of the call (per-rank block for the gathers/scatters)
  std::int64_t bus_elements = 0;  // elements algbw counts (nccl-tests' "size"): max(send, recv)
  std::shared_ptr<const Exchange> exchange;  // alltoallv, moe_dispatch: who sends what to whom
};

// What the counts of one call depend on besides the size: the rank count, and the elements of
// one token (moe_dispatch).
struct CountArgs {
  std::int64_t elements = 0;  // the size axis in elements
  int ranks = 1;
  std::int64_t hidden = 0;
  // false: the plan's counts only. moe_dispatch then leaves out its per-token routing table,
  // which a full preset on eight GPUs would otherwise build (up to 8 x 4M tokens) for each
  // applies() check of each case.
  bool routing = true;
};

struct Operation {
  std::string name;
  bool reduces;   // takes a reduction op
  bool rooted;    // takes a root rank
  bool in_place;  // has an in-place form
  std::string bus_factor_formula;
  std::function<double(int ranks)> bus_factor;
  std::function<Counts(const CountArgs&)> counts;
  // The answer at receive element `j` on `rank`, or nullopt where the operation defines none
  // (reduce on ranks other than the root).
  std::function<std::optional<double>(const InputSpec&, const Counts&, int rank, int root, std::int64_t j)> expected;
  // In-place layout (NCCL's): one buffer of max(send, recv) elements per rank, holding the send
  // data at the first offset and the result at the second (elements).
  std::function<std::pair<std::int64_t, std::int64_t>(const Counts&, std::int64_t rank)> in_place_offsets;
};
// Shared by the operations: every count is the whole buffer (all_reduce, broadcast, reduce,
// sendrecv), and an in-place result lies where the input was (offsets 0, 0).
Counts whole_buffer_counts(const CountArgs& a);
std::pair<std::int64_t, std::int64_t> same_place(const Counts& c, std::int64_t rank);

const std::vector<const Operation*>& operations();
const Operation* find_operation(const std::string& name);

const Operation& all_reduce_op();
const Operation& all_gather_op();
const Operation& reduce_scatter_op();
const Operation& broadcast_op();
const Operation& reduce_op();
const Operation& alltoall_op();
const Operation& sendrecv_op();
const Operation& alltoallv_op();
const Operation& moe_dispatch_op();

// ---- one case's configuration, and its checks (collective_case.cpp) ----
struct CaseConfig {
  const Operation* op = nullptr;
  InputSpec input;
  std::int64_t size_bytes = 0;
  Counts counts;
  bool in_place = false;
  int root = 0;
  bool graph = false;          // NCCL: launch through a captured CUDA Graph
  bool per_iteration = false;  // timing=per_iter: every call timed alone (SamplingPolicy)
  std::int64_t hidden = 0;     // moe_dispatch: elements per token
};
// The counts of `op` for a size in bytes (a whole number of `t`).
Counts counts_for(const Operation& op, std::int64_t size_bytes, Dtype t, int ranks, std::int64_t hidden,
                  bool routing = true);
// Why `size_bytes` cannot give this operation a non-empty buffer on `ranks` ranks, or nullopt.
std::optional<std::string> size_unsupported(const Operation& op, std::int64_t size_bytes, Dtype t, int ranks,
                                            std::int64_t hidden);

// Fills rank `rank`'s send data (`count` elements) for a case.
void fill_input(const CaseConfig& c, int rank, void* buffer, std::int64_t count);
// Checks rank `rank`'s receive buffer; returns the wrong-element count and the first mismatch.
struct Check {
  std::int64_t checked = 0, wrong = 0;
  double max_error = 0;  // largest |got - expected| / max(1, |expected|)
  std::string first;
};
Check check_output(const CaseConfig& c, int rank, const void* recv);

// ---- transports ----
// One communicator's transport, driving `local_ranks()` of its ranks from this process: the
// MPI CPU backend drives one; the NCCL backend one per GPU (single process) or one (MPI).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::vector<int> local_ranks() const = 0;
  // Allocates the buffers of every local rank and fills the send data with `fill(rank, buffer, count)`.
  virtual void prepare(const CaseConfig& c) = 0;
  virtual void run() = 0;          // one collective (queued on GPUs)
  virtual void synchronize() = 0;  // waits for the queued work (bounded by the timeout)
  virtual std::vector<unsigned char> receive_buffer(int local_index) = 0;  // copy to host
  virtual std::unique_ptr<Timer> make_timer() = 0;
  virtual void flush_cache() = 0;
  // Scale of the communicator, for the results: ranks, nodes and GPUs on this node.
  virtual int ranks() const = 0;
  virtual int nodes() const = 0;
  virtual int local_gpus() const = 0;
  virtual std::string name() const = 0;         // "mpi", "nccl"
  virtual std::string launch_mode() const = 0;  // "mpi ranks", "single process"
  // How the harness samples this transport's calls; default: nccl-tests' mean of back-to-back calls.
  virtual SamplingPolicy sampling() const { return {}; }
};

// The MPI CPU backend (null when built without MPI), and the NCCL backend (null when built
// without NCCL). `gpus` is the number of GPUs one process drives (0: every one) when not under
// MPI; `first_gpu` the first of them.
std::unique_ptr<Transport> make_mpi_transport(double timeout_s);
std::unique_ptr<Transport> make_nccl_transport(int first_gpu, int gpus, double timeout_s);
bool have_mpi_backend();
bool have_nccl_backend();
std::string nccl_version();  // "2.28.9"; empty without NCCL
int nccl_version_code();     // NCCL_VERSION_CODE of the library loaded; 0 without NCCL
// Whether this NCCL supports `t` (fp8 needs NCCL 2.24 and compute capability 9.0).
std::optional<std::string> nccl_dtype_unsupported(Dtype t, int cc_major);

// The case: the common harness over a transport.
std::unique_ptr<Case> make_case(CaseConfig config, std::unique_ptr<Transport> transport);

// The latency (small sizes) and bandwidth (large sizes) summary (summary.cpp).
nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries);

// Timeout of one collective and of the ranks' agreement steps (seconds); GPUBENCH_COLLECTIVE_TIMEOUT.
double collective_timeout_s();

std::unique_ptr<Suite> make_suite();

}  // namespace gpubench::suites::collectives
