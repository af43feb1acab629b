// The storage suite's engines, one job each: io_uring (liburing; fio's `ioengine=io_uring` with
// its defaults: no registered files or buffers, no polling; one enter per read submitted)
// and synchronous pread (fio's `psync`, one read in flight).
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "bench/core/errors.hpp"
#include "bench/suites/dataload/io.hpp"
#include "bench/suites/storage/storage.hpp"

// Set by bench/CMakeLists.txt where configure found liburing (a build without it, as the fuzz
// build, reads with pread only).
#ifndef GPUBENCH_HAVE_LIBURING
#define GPUBENCH_HAVE_LIBURING 0
#endif
#if GPUBENCH_HAVE_LIBURING
#include <liburing.h>
#endif

namespace gpubench::suites::storage {
namespace {

using Clock = std::chrono::steady_clock;

float seconds_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<float>(t1 - t0).count();
}

// The file, opened as the dataload suite opens it (O_DIRECT for direct=1: CaseSkipped where the
// filesystem refuses it), and blocks aligned for O_DIRECT.
dataload::IoMode mode_of(Io io) { return io == Io::Direct ? dataload::IoMode::Direct : dataload::IoMode::Cached; }

[[noreturn]] void read_failed(std::uint64_t offset, std::int64_t block, long long got) {
  throw std::runtime_error(got < 0 ? fmt::format("read of {} bytes at {} failed: {}", block, offset, std::strerror(static_cast<int>(-got)))
                                   : fmt::format("short read at {}: {} of {} bytes", offset, got, block));
}

class PsyncReader final : public Reader {
 public:
  PsyncReader(const Config& c, const std::filesystem::path& path, int job)
      : c_(c), file_(path, mode_of(c.io)), offsets_(c, job) {}

  void complete(std::int64_t n, std::vector<float>& latencies, const CheckRead* check) override {
    const auto block = static_cast<std::size_t>(c_.block);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t off = offsets_.next();
      const Clock::time_point t0 = Clock::now();
      const dataload::ReadResult r = file_.read(off, block, buffer_);
      latencies.push_back(seconds_since(t0, Clock::now()));
      if (!r.ok) read_failed(off, c_.block, static_cast<long long>(r.size));
      if (check != nullptr) (*check)(off, r.data, block);
    }
  }

 private:
  Config c_;
  dataload::RangeFile file_;
  dataload::ReadBuffer buffer_;
  Offsets offsets_;
};

#if GPUBENCH_HAVE_LIBURING
class UringReader final : public Reader {
 public:
  UringReader(const Config& c, const std::filesystem::path& path, int job)
      : c_(c), file_(path, mode_of(c.io)), buffers_(static_cast<std::size_t>(c.qd)), offsets_(c, job),
        offset_(static_cast<std::size_t>(c.qd)), submitted_(static_cast<std::size_t>(c.qd)) {
    for (dataload::ReadBuffer& b : buffers_) b.reserve(static_cast<std::size_t>(c.block));
    // One task submits and reaps (the job's thread made the ring): completions run in that task
    // when it enters (DEFER_TASKRUN, kernel 6.1), with no interrupting task work (COOP_TASKRUN,
    // 5.19), as fio sets them. Older kernels refuse the flags (EINVAL): then plain.
    int rc = io_uring_queue_init(static_cast<unsigned>(c.qd), &ring_,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_COOP_TASKRUN);
    if (rc == -EINVAL) rc = io_uring_queue_init(static_cast<unsigned>(c.qd), &ring_, 0);
    if (rc < 0) {
      throw CaseSkipped(fmt::format("io_uring_queue_init({}): {} (the kernel or a seccomp policy refuses io_uring; "
                                    "ioengine=psync reads without it)",
                                    c.qd, std::strerror(-rc)));
    }
  }

  ~UringReader() override {
    // After a failed call reads may still be in flight into buffers_: wait for them first.
    for (int left = in_flight_; left > 0; --left) {
      io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe(&ring_, &cqe) != 0) break;
      io_uring_cqe_seen(&ring_, cqe);
    }
    io_uring_queue_exit(&ring_);
  }

  // The queue stays full: the first call fills it with qd reads, every reaped completion is
  // replaced at once, and a call returns after n completions, the queue still full, so the
  // next call carries on where this one stopped, as fio's one continuous run does. (A call that
  // drained its queue before returning lost part of a latency of depth at its end and its
  // start: at 1 MiB and depth 32, 13 ms of a 430 ms run, 3-5% of the bandwidth, fio's
  // figure above ours.) The reads in flight between calls complete during the harness's
  // hand-off (~10 us, against runs of at least 8 MiB); the destructor waits for them.
  //
  // The ring is driven as fio 3.33 drives it (seen with strace: every io_uring_enter is
  // `to_submit 1, min_complete 0, GETEVENTS`): each replacement is submitted on its own as soon
  // as its completion is reaped, and that enter also runs the deferred completions that have
  // arrived, so while the device keeps completing the loop never sleeps; it waits (min_complete 1)
  // only when nothing has completed. A loop that waited for one completion per batch instead
  // (io_uring_submit_and_wait) read random 4 KiB at depth 32 at 0.84 of fio's IOPS on a
  // virtual disk, where waking a sleeping vCPU costs tens of microseconds a read.
  void complete(std::int64_t n, std::vector<float>& latencies, const CheckRead* check) override {
    if (in_flight_ == 0) {
      for (int s = 0; s < c_.qd; ++s) prepare(s);
      submit();
    }
    for (std::int64_t done = 0; done < n;) {
      io_uring_cqe* cqe = nullptr;
      if (io_uring_peek_cqe(&ring_, &cqe) != 0) {
        const int rc = io_uring_wait_cqe(&ring_, &cqe);
        if (rc == -EINTR) continue;
        if (rc < 0) throw std::runtime_error(fmt::format("io_uring_wait_cqe: {}", std::strerror(-rc)));
      }
      const Clock::time_point now = Clock::now();
      const int slot = static_cast<int>(io_uring_cqe_get_data64(cqe));
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      --in_flight_;
      const std::uint64_t off = offset_[static_cast<std::size_t>(slot)];
      if (res != c_.block) read_failed(off, c_.block, res);
      latencies.push_back(seconds_since(submitted_[static_cast<std::size_t>(slot)], now));
      if (check != nullptr) (*check)(off, buffers_[static_cast<std::size_t>(slot)].data(), static_cast<std::size_t>(c_.block));
      ++done;
      prepare(slot);
      submit();
    }
  }

 private:
  void prepare(int slot) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) throw std::runtime_error("io_uring: no free submission entry");
    const std::uint64_t off = offsets_.next();
    io_uring_prep_read(sqe, file_.fd(), buffers_[static_cast<std::size_t>(slot)].data(), static_cast<unsigned>(c_.block), off);
    io_uring_sqe_set_data64(sqe, static_cast<std::uint64_t>(slot));
    offset_[static_cast<std::size_t>(slot)] = off;
    pending_.push_back(slot);
  }
  // Submits the prepared reads and, in the same enter, posts the completions already there
  // (IORING_ENTER_GETEVENTS with min_complete 0: never sleeps).
  void submit() {
    const Clock::time_point at = Clock::now();  // the submission starts the system call
    int rc = 0;
    do {
      rc = io_uring_submit_and_get_events(&ring_);
    } while (rc == -EINTR);
    if (rc < 0) throw std::runtime_error(fmt::format("io_uring_submit: {}", std::strerror(-rc)));
    for (int s : pending_) submitted_[static_cast<std::size_t>(s)] = at;
    in_flight_ += static_cast<int>(pending_.size());
    pending_.clear();
  }

  Config c_;
  dataload::RangeFile file_;
  std::vector<dataload::ReadBuffer> buffers_;  // one a slot, each at least bs, aligned for O_DIRECT
  Offsets offsets_;
  io_uring ring_{};
  std::vector<std::uint64_t> offset_;           // per slot: the offset its read asked for
  std::vector<Clock::time_point> submitted_;    // per slot: when it was submitted
  std::vector<int> pending_;                    // slots prepared since the last submit
  int in_flight_ = 0;
};
#endif

}  // namespace

bool have_uring() { return GPUBENCH_HAVE_LIBURING != 0; }

std::string uring_missing_reason() {
  return "ioengine=io_uring: this gpubench was built without liburing (install liburing-dev and rebuild; ioengine=psync "
         "reads without it)";
}

std::unique_ptr<Reader> make_reader(const Config& c, const std::filesystem::path& path, int job) {
  if (c.engine == Engine::Psync) return std::make_unique<PsyncReader>(c, path, job);
#if GPUBENCH_HAVE_LIBURING
  return std::make_unique<UringReader>(c, path, job);
#else
  throw CaseSkipped(uring_missing_reason());
#endif
}

}  // namespace gpubench::suites::storage
