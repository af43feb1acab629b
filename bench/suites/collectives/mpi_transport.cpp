// The MPI CPU backend: the same operations on host memory through MPI's own collectives
// (MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Bcast, MPI_Reduce,
// MPI_Alltoall, MPI_Sendrecv along the ring, MPI_Alltoallv for alltoallv and moe_dispatch's
// two exchanges), one rank per process, timed on the host clock.
// MPI has no 16-bit or 8-bit float types: those move as MPI_UINT16_T / MPI_UINT8_T and reduce
// through a user-defined MPI_Op that converts each element. MPI has no average: avg is MPI_SUM
// followed by a division of the result (inside the timed run, as NCCL divides in its kernel).
#include <fmt/format.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <cstring>
#include <mutex>
#include <thread>

#include "bench/core/errors.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/collectives/collectives.hpp"
#include "kernels/common/rows.hpp"

namespace gpubench::suites::collectives {
namespace {

double combine(RedOp op, double a, double b) {
  switch (op) {
    case RedOp::Sum:
    case RedOp::Avg:
      return a + b;
    case RedOp::Prod:
      return a * b;
    case RedOp::Max:
      return std::max(a, b);
    case RedOp::Min:
      return std::min(a, b);
  }
  return a;
}

// MPI_User_function for a type MPI lacks: inout[i] = inout[i] (op) in[i], rounded to the type.
template <Dtype T, RedOp R>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) {
    store_element(T, inout, i, combine(R, load_element(T, in, i), load_element(T, inout, i)));
  }
}

template <Dtype T>
MPI_User_function* user_function_for(RedOp op) {
  switch (op) {
    case RedOp::Sum:
    case RedOp::Avg:
      return &user_reduce<T, RedOp::Sum>;
    case RedOp::Prod:
      return &user_reduce<T, RedOp::Prod>;
    case RedOp::Max:
      return &user_reduce<T, RedOp::Max>;
    case RedOp::Min:
      return &user_reduce<T, RedOp::Min>;
  }
  return nullptr;
}

MPI_User_function* user_function(Dtype t, RedOp op) {
  switch (t) {
    case Dtype::F16:
      return user_function_for<Dtype::F16>(op);
    case Dtype::BF16:
      return user_function_for<Dtype::BF16>(op);
    case Dtype::F8E4M3:
      return user_function_for<Dtype::F8E4M3>(op);
    case Dtype::F8E5M2:
      return user_function_for<Dtype::F8E5M2>(op);
    default:
      return nullptr;
  }
}

MPI_Datatype mpi_type(Dtype t) {
  switch (t) {
    case Dtype::F32:
      return MPI_FLOAT;
    case Dtype::F64:
      return MPI_DOUBLE;
    case Dtype::I32:
      return MPI_INT32_T;
    case Dtype::F16:
    case Dtype::BF16:
      return MPI_UINT16_T;
    case Dtype::F8E4M3:
    case Dtype::F8E5M2:
      return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op native_op(RedOp op) {
  switch (op) {
    case RedOp::Sum:
    case RedOp::Avg:
      return MPI_SUM;
    case RedOp::Prod:
      return MPI_PROD;
    case RedOp::Max:
      return MPI_MAX;
    case RedOp::Min:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

// Ends the run when a rank stops making progress inside a collective (a blocking MPI call that
// never returns because another rank crashed or hangs). run() counts a heartbeat; a thread
// checks that it moves while a case is armed.
class Watchdog {
 public:
  static Watchdog& get() {
    static Watchdog* w = new Watchdog();  // never destroyed: its thread lives with the process
    return *w;
  }
  void arm(std::string what, double timeout_s, mpi::Session* session) {
    std::lock_guard lock(mutex_);
    what_ = std::move(what);
    timeout_s_ = timeout_s;
    session_ = session;
    armed_.store(true);
  }
  void disarm() { armed_.store(false); }
  void beat() { beats_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Watchdog() {
    std::thread([this] { watch(); }).detach();
  }
  void watch() {
    std::uint64_t last = 0;
    auto since = std::chrono::steady_clock::now();
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const std::uint64_t now_beats = beats_.load(std::memory_order_relaxed);
      const auto now = std::chrono::steady_clock::now();
      if (!armed_.load() || now_beats != last) {
        last = now_beats;
        since = now;
        continue;
      }
      std::lock_guard lock(mutex_);
      if (std::chrono::duration<double>(now - since).count() > timeout_s_ && session_ != nullptr) {
        session_->abort_run(
            fmt::format("{} made no progress for {} s (another rank has stopped or hangs)", what_, timeout_s_));
      }
    }
  }
  std::mutex mutex_;
  std::string what_;
  double timeout_s_ = 300;
  mpi::Session* session_ = nullptr;
  std::atomic<bool> armed_{false};
  std::atomic<std::uint64_t> beats_{0};
};

// The communicator the benchmarks use: MPI_COMM_WORLD itself, not a duplicate. Open MPI
// gives a new communicator its id through a non-blocking all-reduce on the parent, and that
// registers coll/libnbc's progress function for the rest of the process: every later call
// runs it (7% of a 2-rank 8 B all-reduce's samples under perf; issue 17). No benchmark message
// can match the harness's agreement messages all the same: MPI keeps a collective's messages
// apart from point-to-point ones on the same communicator (MPI-3.1 section 5.1), and the
// agreements' point-to-point tags (bench/mpi/session_mpi.cpp, 7701-7703) are not the ring's 0.
MPI_Comm bench_comm() { return MPI_COMM_WORLD; }

class MpiTransport final : public Transport {
 public:
  MpiTransport(mpi::Session* session, double timeout_s) : session_(session), timeout_s_(timeout_s) {}
  ~MpiTransport() override {
    // Only when armed here: the first Watchdog::get() starts a thread, which may throw, and a
    // destructor must not.
    if (armed_) Watchdog::get().disarm();
    if (user_op_ != MPI_OP_NULL) MPI_Op_free(&user_op_);
  }

  std::vector<int> local_ranks() const override { return {session_->rank()}; }

  void prepare(const CaseConfig& c) override {
    c_ = c;
    const int rank = session_->rank();
    const std::size_t esize = static_cast<std::size_t>(info(c.input.dtype).bytes);
    type_ = mpi_type(c.input.dtype);
    op_ = native_op(c.input.redop);
    if (c.op->reduces && user_function(c.input.dtype, c.input.redop) != nullptr && user_op_ == MPI_OP_NULL) {
      MPI_Op_create(user_function(c.input.dtype, c.input.redop), /*commute=*/1, &user_op_);
    }
    if (user_op_ != MPI_OP_NULL) op_ = user_op_;
    if (c.counts.exchange) prepare_exchange(*c.counts.exchange, rank);
    if (c.in_place) {
      // One buffer. NCCL's layout for the send data, except MPI_Reduce_scatter_block in place,
      // which reads the whole buffer and writes its block at the start.
      const auto [send_off, recv_off] = c.op->in_place_offsets(c.counts, rank);
      (void)recv_off;
      recv_.assign(static_cast<std::size_t>(std::max(c.counts.send, c.counts.recv)) * esize, 0);
      fill_input(c, rank, recv_.data() + static_cast<std::size_t>(send_off) * esize, c.counts.send);
      send_.clear();
    } else {
      send_.assign(static_cast<std::size_t>(c.counts.send) * esize, 0);
      recv_.assign(static_cast<std::size_t>(c.counts.recv) * esize, 0);
      fill_input(c, rank, send_.data(), c.counts.send);
    }
    Watchdog::get().arm(fmt::format("{} ({} bytes, {})", c.op->name, c.size_bytes, info(c.input.dtype).name),
                        timeout_s_, session_);
    armed_ = true;
  }

  void run() override {
    Watchdog::get().beat();
    MPI_Comm comm = bench_comm();
    const int n = session_->size(), rank = session_->rank();
    const bool in_place = c_.in_place;
    const void* send = in_place ? MPI_IN_PLACE : static_cast<const void*>(send_.data());
    void* recv = recv_.data();
    const int count = static_cast<int>(c_.counts.param);
    const std::string& name = c_.op->name;
    if (name == "all_reduce") {
      MPI_Allreduce(send, recv, count, type_, op_, comm);
      divide_for_avg(recv, c_.counts.recv);
    } else if (name == "all_gather") {
      MPI_Allgather(send, count, type_, recv, count, type_, comm);
    } else if (name == "reduce_scatter") {
      MPI_Reduce_scatter_block(send, recv, count, type_, op_, comm);
      divide_for_avg(recv, c_.counts.recv);
    } else if (name == "broadcast") {
      // MPI_Bcast has one buffer: the root sends from its send buffer, the others receive.
      void* buffer = (in_place || rank != c_.root) ? recv : send_.data();
      MPI_Bcast(buffer, count, type_, c_.root, comm);
    } else if (name == "reduce") {
      if (in_place && rank != c_.root) send = recv;  // MPI_IN_PLACE is for the root only
      MPI_Reduce(send, rank == c_.root ? recv : nullptr, count, type_, op_, c_.root, comm);
      if (rank == c_.root) divide_for_avg(recv, c_.counts.recv);
    } else if (name == "alltoall") {
      MPI_Alltoall(send_.data(), count, type_, recv, count, type_, comm);
    } else if (name == "sendrecv") {
      MPI_Sendrecv(send_.data(), count, type_, (rank + 1) % n, 0, recv, count, type_, (rank - 1 + n) % n, 0, comm,
                   MPI_STATUS_IGNORE);
    } else if (name == "alltoallv") {
      MPI_Alltoallv(send_.data(), out_.count.data(), out_.displ.data(), type_, recv, in_.count.data(),
                    in_.displ.data(), type_, comm);
    } else if (name == "moe_dispatch") {
      moe_round_trip(comm);
    } else {
      throw std::logic_error("mpi backend: no " + name);
    }
  }

  void synchronize() override {}

  std::vector<unsigned char> receive_buffer(int) override {
    const std::size_t esize = static_cast<std::size_t>(info(c_.input.dtype).bytes);
    const std::size_t bytes = static_cast<std::size_t>(c_.counts.recv) * esize;
    if (c_.op->name == "broadcast" && !c_.in_place && session_->rank() == c_.root) {
      return {send_.begin(), send_.begin() + static_cast<std::ptrdiff_t>(bytes)};  // the root's data stays in place
    }
    // In place, MPI's results start at the buffer's start (MPI_Reduce_scatter_block's block
    // too), except all_gather's, which fill the buffer.
    return {recv_.begin(), recv_.begin() + static_cast<std::ptrdiff_t>(bytes)};
  }

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<HostTimer>(); }
  void flush_cache() override { flush_host_caches(); }
  int ranks() const override { return session_->size(); }
  int nodes() const override { return session_->nodes(); }
  int local_gpus() const override { return 0; }
  std::string name() const override { return "mpi"; }
  std::string launch_mode() const override { return "mpi ranks"; }
  // Short windows of back-to-back calls, the ranks aligned by a barrier before each, the median
  // over windows as the headline. The mean of back-to-back calls over --min-time (the NCCL
  // backend's policy, as nccl-tests) counts every preemption: ranks on shared cores lose
  // whole scheduler slices, and at a few microseconds per call one lost slice outweighs
  // thousands of calls. OSU's osu_allreduce times single calls between barriers instead.
  SamplingPolicy sampling() const override {
    SamplingPolicy p;
    p.headline = SamplingPolicy::Headline::Median;
    p.window_s = kWindowS;
    p.barrier = true;
    return p;
  }
  static constexpr double kWindowS = 200e-6;

 private:
  // MPI_Alltoallv's arguments of one side of an exchange: per-peer counts and displacements.
  struct Side {
    std::vector<int> count, displ;
  };

  static int as_int(std::int64_t v, const char* what) {
    if (v > std::numeric_limits<int>::max()) {
      throw CaseSkipped(fmt::format("MPI_Alltoallv takes int counts: {} of {} elements is too large", what, v));
    }
    return static_cast<int>(v);
  }

  // The dispatch's sides from this rank's row and column of the exchange; the combine runs the
  // same exchange backwards (this rank sends back what it received, from where it received it).
  void prepare_exchange(const Exchange& e, int rank) {
    const int n = e.ranks;
    out_ = Side{std::vector<int>(static_cast<std::size_t>(n)), std::vector<int>(static_cast<std::size_t>(n))};
    in_ = out_;
    for (int peer = 0; peer < n; ++peer) {
      const auto k = static_cast<std::size_t>(peer);
      out_.count[k] = as_int(e.count[static_cast<std::size_t>(rank * n + peer)], "a block");
      out_.displ[k] = as_int(e.send_displ[static_cast<std::size_t>(rank * n + peer)], "an offset");
      in_.count[k] = as_int(e.count[static_cast<std::size_t>(peer * n + rank)], "a block");
      in_.displ[k] = as_int(e.recv_displ[static_cast<std::size_t>(rank * n + peer)], "an offset");
    }
    if (e.tokens > 0) {
      const std::size_t bytes = static_cast<std::size_t>(e.tokens * e.hidden) * static_cast<std::size_t>(info(c_.input.dtype).bytes);
      packed_.assign(bytes, 0);
      returned_.assign(bytes, 0);
    }
  }

  // moe_dispatch (op_moe_dispatch.cpp): pack by destination, dispatch, combine, unpack. The
  // dispatched tokens stay at the start of the receive buffer; the unpacked ones follow them.
  void moe_round_trip(MPI_Comm comm) {
    const Exchange& e = *c_.counts.exchange;
    const std::size_t row = static_cast<std::size_t>(e.hidden) * static_cast<std::size_t>(info(c_.input.dtype).bytes);
    const std::int64_t* order = e.packed.data() + static_cast<std::size_t>(session_->rank()) * static_cast<std::size_t>(e.tokens);
    kernels::gather_rows(packed_.data(), send_.data(), order, e.tokens, row);
    MPI_Alltoallv(packed_.data(), out_.count.data(), out_.displ.data(), type_, recv_.data(), in_.count.data(),
                  in_.displ.data(), type_, comm);
    MPI_Alltoallv(recv_.data(), in_.count.data(), in_.displ.data(), type_, returned_.data(), out_.count.data(),
                  out_.displ.data(), type_, comm);
    const std::size_t dispatched = static_cast<std::size_t>(e.max_received()) * static_cast<std::size_t>(info(c_.input.dtype).bytes);
    kernels::scatter_rows(recv_.data() + dispatched, returned_.data(), order, e.tokens, row);
  }

  void divide_for_avg(void* buffer, std::int64_t count) const {
    if (c_.input.redop != RedOp::Avg) return;
    const int n = session_->size();
    const bool is_float = info(c_.input.dtype).is_float;
    if (c_.input.dtype == Dtype::F32) {
      float* p = static_cast<float*>(buffer);
      for (std::int64_t i = 0; i < count; ++i) p[i] /= static_cast<float>(n);
    } else if (c_.input.dtype == Dtype::F64) {
      double* p = static_cast<double*>(buffer);
      for (std::int64_t i = 0; i < count; ++i) p[i] /= n;
    } else if (c_.input.dtype == Dtype::I32) {
      std::int32_t* p = static_cast<std::int32_t*>(buffer);
      for (std::int64_t i = 0; i < count; ++i) p[i] /= n;  // truncation, as NCCL's integer average
    } else {
      for (std::int64_t i = 0; i < count; ++i) {
        const double v = load_element(c_.input.dtype, buffer, i);
        store_element(c_.input.dtype, buffer, i, is_float ? v / n : std::trunc(v / n));
      }
    }
  }

  mpi::Session* session_;
  double timeout_s_;
  CaseConfig c_;
  std::vector<unsigned char> send_, recv_;
  Side out_, in_;                              // alltoallv, moe_dispatch: this rank's sides of the exchange
  std::vector<unsigned char> packed_, returned_;  // moe_dispatch: tokens grouped by destination, and back
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MPI_Op op_ = MPI_OP_NULL, user_op_ = MPI_OP_NULL;
  bool armed_ = false;  // the watchdog watches this transport's collectives
};

}  // namespace

bool have_mpi_backend() { return true; }

std::unique_ptr<Transport> make_mpi_transport(double timeout_s) {
  mpi::Session* s = mpi::session(timeout_s);
  if (s == nullptr) return nullptr;
  return std::make_unique<MpiTransport>(s, timeout_s);
}

}  // namespace gpubench::suites::collectives
