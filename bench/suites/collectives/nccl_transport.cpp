// The NCCL backend: the collectives on GPU memory, in one of two launch modes:
// - one process driving GPUs first_gpu .. first_gpu+gpus-1 (ncclCommInitAll, and every call
//   issued for all GPUs between ncclGroupStart/ncclGroupEnd);
// - one rank per GPU under MPI: the rank's GPU is its local rank (host-name order), rank 0
//   creates the NCCL unique id and the MPI session broadcasts it (ncclCommInitRank).
// Timing as nccl-tests: the host clock around a batch of calls and the wait for every stream;
// with timing=per_iter, CUDA events around every single call on every GPU (the longest span).
// Communicators under MPI are non-blocking (a rank that never joins must not hang the run), so
// every NCCL call that may answer ncclInProgress (init, ncclGroupEnd, also inside a graph
// capture) is followed by a wait until ncclCommGetAsyncError no longer says so (progress.hpp):
// only then is the work on the stream. Waits poll with a deadline: a collective that does not
// complete aborts the communicators (ncclCommAbort) and ends the run naming the operation.
// Buffers are filled and read on the communicator's own stream (the legacy default stream does
// not order with the non-blocking streams NCCL runs on).
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "bench/core/cuda.hpp"
#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/mpi/session.hpp"
#include "bench/suites/collectives/collectives.hpp"
#include "bench/suites/collectives/nccl_comm.hpp"
#include "bench/suites/collectives/progress.hpp"
#include "kernels/common/l2_flush.cuh"
#include "kernels/common/rows.cuh"

namespace gpubench::suites::collectives {
namespace {

ncclDataType_t nccl_type(Dtype t) {
  switch (t) {
    case Dtype::F32:
      return ncclFloat32;
    case Dtype::F16:
      return ncclFloat16;
    case Dtype::BF16:
      return ncclBfloat16;
    case Dtype::F64:
      return ncclFloat64;
    case Dtype::I32:
      return ncclInt32;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case Dtype::F8E4M3:
      return ncclFloat8e4m3;
    case Dtype::F8E5M2:
      return ncclFloat8e5m2;
#else
    default:
      break;
#endif
  }
  throw CaseSkipped(fmt::format("{}: this NCCL ({}) has no such type", info(t).name, NCCL_VERSION_CODE));
}

ncclRedOp_t nccl_op(RedOp op) {
  switch (op) {
    case RedOp::Sum:
      return ncclSum;
    case RedOp::Prod:
      return ncclProd;
    case RedOp::Max:
      return ncclMax;
    case RedOp::Min:
      return ncclMin;
    case RedOp::Avg:
      return ncclAvg;
  }
  return ncclSum;
}

struct Local {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cuda::DeviceBuffer send, recv, flush;
  void* send_ptr = nullptr;
  void* recv_ptr = nullptr;
  cudaGraphExec_t graph = nullptr;
  // moe_dispatch: this rank's tokens grouped by destination, the tokens the combine returns,
  // and the packing order (Exchange::packed) on the device.
  cuda::DeviceBuffer packed, returned, order;
  std::unique_ptr<cuda::Event> started, stopped;  // timing=per_iter
};

class NcclTransport final : public Transport {
 public:
  NcclTransport(int first_gpu, int gpus, double timeout_s) : timeout_s_(timeout_s) {
    session_ = mpi::active() ? mpi::session() : nullptr;
    if (session_ != nullptr && session_->size() > 1) {
      int count = 0;
      GPUBENCH_CUDA_CHECK(cudaGetDeviceCount(&count));
      const int device = session_->local_rank() % count;
      ranks_ = session_->size();
      locals_.resize(1);
      locals_[0].device = device;
      locals_[0].rank = session_->rank();
      locals_[0].comm = mpi_comm(*session_, device, timeout_s_);
    } else {
      session_ = nullptr;
      ranks_ = gpus;
      locals_.resize(static_cast<std::size_t>(gpus));
      std::vector<ncclComm_t> comms = process_comms(first_gpu, gpus, timeout_s_);
      for (int g = 0; g < gpus; ++g) {
        locals_[static_cast<std::size_t>(g)].device = first_gpu + g;
        locals_[static_cast<std::size_t>(g)].rank = g;
        locals_[static_cast<std::size_t>(g)].comm = comms[static_cast<std::size_t>(g)];
      }
    }
    for (Local& l : locals_) {
      cuda::ScopedDevice on(l.device);
      GPUBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    }
  }

  ~NcclTransport() override {
    // Never throws (a throwing destructor ends the whole run): after a sticky error CUDA refuses
    // even the device switch, and the frees below then fail quietly.
    for (Local& l : locals_) {
      cuda::ScopedDevice on(l.device, std::nothrow);
      if (l.graph != nullptr) (void)cudaGraphExecDestroy(l.graph);
      if (l.stream != nullptr) (void)cudaStreamDestroy(l.stream);
    }
  }

  std::vector<int> local_ranks() const override {
    std::vector<int> r;
    for (const Local& l : locals_) r.push_back(l.rank);
    return r;
  }

  void prepare(const CaseConfig& c) override {
    c_ = c;
    type_ = nccl_type(c.input.dtype);
    const std::size_t esize = static_cast<std::size_t>(info(c.input.dtype).bytes);
    for (Local& l : locals_) {
      cuda::ScopedDevice on(l.device);
      const std::size_t send_bytes = static_cast<std::size_t>(c.counts.send) * esize;
      const std::size_t recv_bytes = static_cast<std::size_t>(c.counts.recv) * esize;
      std::vector<unsigned char> host(std::max(send_bytes, recv_bytes));
      if (c.in_place) {
        const auto [send_off, recv_off] = c.op->in_place_offsets(c.counts, l.rank);
        if (l.recv.bytes() == 0) l.recv = cuda::DeviceBuffer(host.size());
        unsigned char* base = static_cast<unsigned char*>(l.recv.get());
        l.send_ptr = base + static_cast<std::size_t>(send_off) * esize;
        l.recv_ptr = base + static_cast<std::size_t>(recv_off) * esize;
        fill_input(c, l.rank, host.data(), c.counts.send);
        GPUBENCH_CUDA_CHECK(cudaMemsetAsync(base, 0, host.size(), l.stream));
        GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.send_ptr, host.data(), send_bytes, cudaMemcpyHostToDevice, l.stream));
      } else {
        if (l.send.bytes() == 0) l.send = cuda::DeviceBuffer(send_bytes);
        if (l.recv.bytes() == 0) l.recv = cuda::DeviceBuffer(recv_bytes);
        l.send_ptr = l.send.get();
        l.recv_ptr = l.recv.get();
        fill_input(c, l.rank, host.data(), c.counts.send);
        GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.send_ptr, host.data(), send_bytes, cudaMemcpyHostToDevice, l.stream));
        GPUBENCH_CUDA_CHECK(cudaMemsetAsync(l.recv_ptr, 0, recv_bytes, l.stream));
      }
      if (c.counts.exchange && c.counts.exchange->tokens > 0) prepare_moe(l, *c.counts.exchange, esize);
      // On the stream the collectives run on, so ordered before them; waited for here since
      // `host` goes away (and a pageable source is not guaranteed copied at return).
      GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(l.stream));
    }
    if (c.graph && locals_.front().graph == nullptr) capture();
  }

  void run() override {
    if (c_.graph) {
      for (Local& l : locals_) GPUBENCH_CUDA_CHECK(cudaGraphLaunch(l.graph, l.stream));
      return;
    }
    issue_all(c_.op->name.c_str());
  }

  void synchronize() override {
    const auto deadline = deadline_after(timeout_s_);
    for (Local& l : locals_) {
      while (true) {
        const cudaError_t e = cudaStreamQuery(l.stream);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) GPUBENCH_CUDA_CHECK(e);
        ncclResult_t async = ncclSuccess;
        (void)ncclCommGetAsyncError(l.comm, &async);
        if (async != ncclSuccess && async != ncclInProgress) {
          abort_all();
          throw std::runtime_error(fmt::format("{} on rank {}: {}", c_.op->name, l.rank, ncclGetErrorString(async)));
        }
        if (std::chrono::steady_clock::now() > deadline) {
          abort_all();
          const std::string what = fmt::format("{} ({} bytes) on rank {} (GPU {}) did not complete within {} s",
                                               c_.op->name, c_.size_bytes, l.rank, l.device, timeout_s_);
          if (session_ != nullptr) session_->abort_run(what);
          throw std::runtime_error(what);
        }
      }
    }
  }

  std::vector<unsigned char> receive_buffer(int local_index) override {
    Local& l = locals_[static_cast<std::size_t>(local_index)];
    cuda::ScopedDevice on(l.device);
    std::vector<unsigned char> host(static_cast<std::size_t>(c_.counts.recv) *
                                    static_cast<std::size_t>(info(c_.input.dtype).bytes));
    // On the collective's stream: the legacy default stream does not wait for a non-blocking one.
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(host.data(), l.recv_ptr, host.size(), cudaMemcpyDeviceToHost, l.stream));
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(l.stream));
    return host;
  }

  std::unique_ptr<Timer> make_timer() override {
    if (c_.per_iteration) return std::make_unique<EventsTimer>(*this);
    return std::make_unique<StreamsTimer>(*this);
  }

  // Cold: each GPU's L2 flushed on its stream before the sample by reading twice its size, as
  // CudaCase does (bench/core/cuda_case.cpp: a read leaves only clean lines in L2, a memset would
  // leave dirty ones to be written back during the timed collective).
  void flush_cache() override {
    for (Local& l : locals_) {
      cuda::ScopedDevice on(l.device);
      int sms = 0;
      GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, l.device));
      const unsigned grid = l2_flush_grid(sms);
      if (l.flush.bytes() == 0) {
        int l2 = 0;
        GPUBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, l.device));
        l.flush = cuda::DeviceBuffer(l2_flush_bytes(l2));
        GPUBENCH_CUDA_CHECK(cudaMemsetAsync(l.flush.get(), 0x5A, l.flush.bytes(), l.stream));
        GPUBENCH_CUDA_CHECK(kernels::launch_l2_flush_read(l.flush.get(), l.flush.bytes(), grid, l.stream));
      }
      GPUBENCH_CUDA_CHECK(kernels::launch_l2_flush_read(l.flush.get(), l.flush.bytes(), grid, l.stream));
    }
    synchronize();
  }

  int ranks() const override { return ranks_; }
  int nodes() const override { return session_ != nullptr ? session_->nodes() : 1; }
  int local_gpus() const override {
    return session_ != nullptr ? session_->local_size() : static_cast<int>(locals_.size());
  }
  std::string name() const override { return "nccl"; }
  std::string launch_mode() const override { return session_ != nullptr ? "mpi ranks" : "single process"; }

 private:
  // The host clock around the calls and the wait for every stream (nccl-tests' timing).
  class StreamsTimer final : public Timer {
   public:
    explicit StreamsTimer(NcclTransport& t) : t_(t) {}
    void start() override { start_ = std::chrono::steady_clock::now(); }
    double stop() override {
      t_.synchronize();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    const char* kind() const override { return "host_steady_streams"; }

   private:
    NcclTransport& t_;
    std::chrono::steady_clock::time_point start_;
  };

  // timing=per_iter: events on every GPU's stream around the call; the longest span over the
  // GPUs this process drives (its call ends when its last GPU's does).
  class EventsTimer final : public Timer {
   public:
    explicit EventsTimer(NcclTransport& t) : t_(t) {
      for (Local& l : t_.locals_) {
        cuda::ScopedDevice on(l.device);
        if (!l.started) l.started = std::make_unique<cuda::Event>();
        if (!l.stopped) l.stopped = std::make_unique<cuda::Event>();
      }
    }
    void start() override {
      for (Local& l : t_.locals_) {
        cuda::ScopedDevice on(l.device);
        GPUBENCH_CUDA_CHECK(cudaEventRecord(l.started->get(), l.stream));
      }
    }
    double stop() override {
      for (Local& l : t_.locals_) {
        cuda::ScopedDevice on(l.device);
        GPUBENCH_CUDA_CHECK(cudaEventRecord(l.stopped->get(), l.stream));
      }
      t_.synchronize();  // bounded by the timeout, unlike an event wait
      double longest = 0;
      for (Local& l : t_.locals_) {
        cuda::ScopedDevice on(l.device);
        longest = std::max(longest, cuda::Event::elapsed_ms(*l.started, *l.stopped) * 1e-3);
      }
      return longest;
    }
    const char* kind() const override { return "cuda_events_per_gpu"; }

   private:
    NcclTransport& t_;
  };

  // Every local rank's part of one call. Most operations are one NCCL group; moe_dispatch is
  // four steps in order (op_moe_dispatch.cpp): the pack kernel, the dispatch's group, the
  // combine's group (the dispatch must have landed), the unpack kernel. Kernels stay outside
  // the groups: NCCL enqueues a group's work at ncclGroupEnd, after any kernel launched inside.
  void issue_all(const char* what) {
    if (!c_.counts.exchange || c_.counts.exchange->tokens == 0) {
      GPUBENCH_NCCL_CHECK(ncclGroupStart());
      for (Local& l : locals_) issue(l);
      GPUBENCH_NCCL_CHECK(ncclGroupEnd());
      await_enqueued(what);
      return;
    }
    const Exchange& e = *c_.counts.exchange;
    const std::size_t row = static_cast<std::size_t>(e.hidden) * static_cast<std::size_t>(info(c_.input.dtype).bytes);
    for (Local& l : locals_) {
      cuda::ScopedDevice on(l.device);
      GPUBENCH_CUDA_CHECK(
          kernels::launch_gather_rows(l.packed.get(), l.send_ptr, l.order.as<std::int64_t>(), e.tokens, row, l.stream));
    }
    GPUBENCH_NCCL_CHECK(ncclGroupStart());
    for (Local& l : locals_) exchange(l, e, l.packed.get(), l.recv_ptr, /*forward=*/true);
    GPUBENCH_NCCL_CHECK(ncclGroupEnd());
    await_enqueued(what);
    GPUBENCH_NCCL_CHECK(ncclGroupStart());
    for (Local& l : locals_) exchange(l, e, l.recv_ptr, l.returned.get(), /*forward=*/false);
    GPUBENCH_NCCL_CHECK(ncclGroupEnd());
    await_enqueued(what);
    const std::size_t dispatched = static_cast<std::size_t>(e.max_received()) * static_cast<std::size_t>(info(c_.input.dtype).bytes);
    for (Local& l : locals_) {
      cuda::ScopedDevice on(l.device);
      GPUBENCH_CUDA_CHECK(kernels::launch_scatter_rows(static_cast<char*>(l.recv_ptr) + dispatched, l.returned.get(),
                                                       l.order.as<std::int64_t>(), e.tokens, row, l.stream));
    }
  }

  // One all-to-all-v as grouped point-to-point (as nccl-tests' alltoallv): forward sends this
  // rank's blocks (Exchange::send_displ) and receives its peers' (recv_displ); backward sends
  // every received block back to its sender, which receives it where it had sent it from.
  void exchange(const Local& l, const Exchange& e, const void* from, void* to, bool forward) {
    const std::size_t esize = static_cast<std::size_t>(info(c_.input.dtype).bytes);
    const int n = e.ranks, r = l.rank;
    for (int peer = 0; peer < n; ++peer) {
      const auto mine = static_cast<std::size_t>(r * n + peer), theirs = static_cast<std::size_t>(peer * n + r);
      const std::int64_t out = forward ? e.count[mine] : e.count[theirs];
      const std::int64_t in = forward ? e.count[theirs] : e.count[mine];
      const std::int64_t out_at = forward ? e.send_displ[mine] : e.recv_displ[mine];
      const std::int64_t in_at = forward ? e.recv_displ[mine] : e.send_displ[mine];
      if (out > 0) {
        GPUBENCH_NCCL_CHECK(ncclSend(static_cast<const char*>(from) + static_cast<std::size_t>(out_at) * esize,
                                     static_cast<std::size_t>(out), type_, peer, l.comm, l.stream));
      }
      if (in > 0) {
        GPUBENCH_NCCL_CHECK(ncclRecv(static_cast<char*>(to) + static_cast<std::size_t>(in_at) * esize,
                                     static_cast<std::size_t>(in), type_, peer, l.comm, l.stream));
      }
    }
  }

  // moe_dispatch's staging buffers and this rank's packing order, once per case.
  static void prepare_moe(Local& l, const Exchange& e, std::size_t esize) {
    const std::size_t bytes = static_cast<std::size_t>(e.tokens * e.hidden) * esize;
    if (l.packed.bytes() == 0) l.packed = cuda::DeviceBuffer(bytes);
    if (l.returned.bytes() == 0) l.returned = cuda::DeviceBuffer(bytes);
    if (l.order.bytes() == 0) l.order = cuda::DeviceBuffer(static_cast<std::size_t>(e.tokens) * sizeof(std::int64_t));
    const std::int64_t* order = e.packed.data() + static_cast<std::size_t>(l.rank) * static_cast<std::size_t>(e.tokens);
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(l.order.get(), order, l.order.bytes(), cudaMemcpyHostToDevice, l.stream));
  }

  void issue(Local& l) {
    const std::size_t esize = static_cast<std::size_t>(info(c_.input.dtype).bytes);
    const std::size_t count = static_cast<std::size_t>(c_.counts.param);
    const ncclRedOp_t op = nccl_op(c_.input.redop);
    const std::string& name = c_.op->name;
    if (name == "all_reduce") {
      GPUBENCH_NCCL_CHECK(ncclAllReduce(l.send_ptr, l.recv_ptr, count, type_, op, l.comm, l.stream));
    } else if (name == "all_gather") {
      GPUBENCH_NCCL_CHECK(ncclAllGather(l.send_ptr, l.recv_ptr, count, type_, l.comm, l.stream));
    } else if (name == "reduce_scatter") {
      GPUBENCH_NCCL_CHECK(ncclReduceScatter(l.send_ptr, l.recv_ptr, count, type_, op, l.comm, l.stream));
    } else if (name == "broadcast") {
      GPUBENCH_NCCL_CHECK(ncclBroadcast(l.send_ptr, l.recv_ptr, count, type_, c_.root, l.comm, l.stream));
    } else if (name == "reduce") {
      GPUBENCH_NCCL_CHECK(ncclReduce(l.send_ptr, l.recv_ptr, count, type_, op, c_.root, l.comm, l.stream));
    } else if (name == "alltoall") {
      // Grouped point-to-point, as nccl-tests (ncclAlltoAll exists only from NCCL 2.28).
      for (int peer = 0; peer < ranks_; ++peer) {
        const std::size_t off = static_cast<std::size_t>(peer) * count * esize;
        GPUBENCH_NCCL_CHECK(ncclSend(static_cast<char*>(l.send_ptr) + off, count, type_, peer, l.comm, l.stream));
        GPUBENCH_NCCL_CHECK(ncclRecv(static_cast<char*>(l.recv_ptr) + off, count, type_, peer, l.comm, l.stream));
      }
    } else if (name == "sendrecv") {
      GPUBENCH_NCCL_CHECK(ncclSend(l.send_ptr, count, type_, (l.rank + 1) % ranks_, l.comm, l.stream));
      GPUBENCH_NCCL_CHECK(ncclRecv(l.recv_ptr, count, type_, (l.rank - 1 + ranks_) % ranks_, l.comm, l.stream));
    } else if (name == "alltoallv") {
      exchange(l, *c_.counts.exchange, l.send_ptr, l.recv_ptr, /*forward=*/true);
    } else {
      throw std::logic_error("nccl backend: no " + name);
    }
  }

  // One collective captured into a CUDA Graph per GPU (this process drives one GPU: the suite
  // allows graphs only then); run() launches the graph.
  void capture() {
    Local& l = locals_.front();
    cuda::ScopedDevice on(l.device);
    cudaGraph_t graph = nullptr;
    GPUBENCH_CUDA_CHECK(cudaStreamBeginCapture(l.stream, cudaStreamCaptureModeThreadLocal));
    issue_all("graph capture");  // the capture must hold the collective before it ends
    GPUBENCH_CUDA_CHECK(cudaStreamEndCapture(l.stream, &graph));
    GPUBENCH_CUDA_CHECK(cudaGraphInstantiate(&l.graph, graph, 0));
    GPUBENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  }

  std::vector<ncclComm_t> comms() const {
    std::vector<ncclComm_t> out;
    for (const Local& l : locals_) out.push_back(l.comm);
    return out;
  }

  // After ncclGroupEnd: waits until NCCL has put the calls on the streams (at once with blocking
  // communicators; ncclInProgress first with non-blocking ones). An error or the deadline
  // aborts the communicators and ends the case (and an MPI run) naming the operation.
  void await_enqueued(const char* what) {
    const Settled s = settle(comms(), deadline_after(timeout_s_));
    if (s.outcome == Settled::Outcome::Ready) return;
    const Local& l = locals_[s.comm];
    const std::string message =
        s.outcome == Settled::Outcome::Failed
            ? fmt::format("{} on rank {} (GPU {}): {} ({})", what, l.rank, l.device,
                          ncclGetErrorString(static_cast<ncclResult_t>(s.code)), ncclGetLastError(l.comm))
            : fmt::format("{} ({} bytes) on rank {} (GPU {}): NCCL did not enqueue it within {} s", what,
                          c_.size_bytes, l.rank, l.device, timeout_s_);
    abort_all();
    if (session_ != nullptr && s.outcome == Settled::Outcome::TimedOut) session_->abort_run(message);
    throw std::runtime_error(message);
  }

  void abort_all() { abort_all_comms(); }

  double timeout_s_;
  mpi::Session* session_ = nullptr;
  int ranks_ = 1;
  std::vector<Local> locals_;
  CaseConfig c_;
  ncclDataType_t type_ = ncclFloat32;
};

}  // namespace

bool have_nccl_backend() { return true; }

std::string nccl_version() {
  int v = nccl_version_code();
  if (v <= 0) return "";
  // NCCL >= 2.9 encodes X*10000 + Y*100 + Z.
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

int nccl_version_code() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return 0;
  return v;
}

std::optional<std::string> nccl_dtype_unsupported(Dtype t, int cc_major) {
  if (t != Dtype::F8E4M3 && t != Dtype::F8E5M2) return std::nullopt;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
  if (nccl_version_code() < NCCL_VERSION(2, 24, 0)) {
    return fmt::format("{} needs NCCL 2.24 or newer at run time (loaded: {})", info(t).name, nccl_version());
  }
  if (cc_major < 9) return fmt::format("{}: NCCL reduces fp8 on compute capability 9.0 and newer", info(t).name);
  return std::nullopt;
#else
  (void)cc_major;
  return fmt::format("{} needs NCCL 2.24 or newer (built against {})", info(t).name, NCCL_VERSION_CODE);
#endif
}

std::unique_ptr<Transport> make_nccl_transport(int first_gpu, int gpus, double timeout_s) {
  return std::make_unique<NcclTransport>(first_gpu, gpus, timeout_s);
}

}  // namespace gpubench::suites::collectives
