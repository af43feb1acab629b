// The storage suite's engines, one job each: io_uring (liburing; fio's `ioengine=io_uring` with
// its defaults: no registered files or buffers, no polling; one enter submits and waits)
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

  // A call is whole: it fills the queue with min(qd, n) reads, keeps it full until n have been
  // submitted, and returns when all n have completed, none left in flight. (Reads left in
  // flight between calls would complete off the clock, between the harness's samples, and
  // count for free.) The fill and the drain are at most qd of the n reads' time: the case asks
  // for n >= 32 x qd. One io_uring_enter per batch: the replacements prepared since the last
  // enter are submitted and at least one completion waited for in the same system call
  // (io_uring_submit_and_wait, as fio submits and reaps), then every completion already posted
  // is reaped and replaced while reads remain to be submitted.
  void complete(std::int64_t n, std::vector<float>& latencies, const CheckRead* check) override {
    std::int64_t issued = 0, done = 0;
    for (int s = 0; s < c_.qd && issued < n; ++s, ++issued) prepare(s);
    while (done < n) {
      const Clock::time_point sent = Clock::now();  // the submission starts the system call
      const int rc = io_uring_submit_and_wait(&ring_, 1);
      if (rc < 0 && rc != -EINTR) throw std::runtime_error(fmt::format("io_uring_submit_and_wait: {}", std::strerror(-rc)));
      if (rc >= 0) mark_submitted(sent);
      const Clock::time_point now = Clock::now();
      io_uring_cqe* cqe = nullptr;
      while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
        const int slot = static_cast<int>(io_uring_cqe_get_data64(cqe));
        const int res = cqe->res;
        io_uring_cqe_seen(&ring_, cqe);
        --in_flight_;
        const std::uint64_t off = offset_[static_cast<std::size_t>(slot)];
        if (res != c_.block) read_failed(off, c_.block, res);
        latencies.push_back(seconds_since(submitted_[static_cast<std::size_t>(slot)], now));
        if (check != nullptr) (*check)(off, buffers_[static_cast<std::size_t>(slot)].data(), static_cast<std::size_t>(c_.block));
        ++done;
        if (issued < n) {
          prepare(slot);
          ++issued;
        }
      }
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
  void mark_submitted(Clock::time_point at) {
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
