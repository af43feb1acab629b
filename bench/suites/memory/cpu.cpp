// CPU ceilings: host memory bandwidth over every core (the array operations of
// stream_reference.hpp on the shared host thread pool), vectorized FMA peak, on one core and on
// all of them, and the latency of a load (a pointer chase through a buffer in random order).
#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <cmath>
#include <new>

#include "bench/core/errors.hpp"
#include "bench/suites/memory/memory.hpp"
#include "kernels/memory/host_pool.hpp"
#include "kernels/memory/pointer_chase.hpp"

namespace gpubench::suites::memory {
namespace {

using kernels::StreamOp;

struct AlignedFree {
  void operator()(double* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using HostArray = std::unique_ptr<double[], AlignedFree>;

HostArray allocate(std::size_t n) {
  try {
    return HostArray(static_cast<double*>(::operator new[](n * sizeof(double), std::align_val_t(64))));
  } catch (const std::bad_alloc&) {
    throw CaseSkipped(fmt::format("out of host memory for 3 arrays of {} bytes", n * sizeof(double)));
  }
}

class HostBandwidthCase final : public HostCase {
 public:
  HostBandwidthCase(StreamOp op, std::int64_t bytes) : op_(op), n_(static_cast<std::size_t>(bytes) / sizeof(double)) {}

  void setup() override {
    a_ = allocate(n_);
    b_ = allocate(n_);
    c_ = allocate(n_);
    kernels::host_stream_init(a_.get(), b_.get(), c_.get(), n_);  // first touch by the threads that use the pages
  }

  Verification verify() override {
    Verification v;
    const double got_dot = kernels::host_stream_run(op_, a_.get(), b_.get(), c_.get(), n_);
    if (op_ == StreamOp::Dot) {
      const kernels::DotReference ref = kernels::stream_dot_reference(n_);
      const double tol = 1e-12 * ref.abs_sum + 1e-300;
      v.checked = 1;
      v.max_error = std::fabs(got_dot - ref.value) / tol;
      v.passed = v.max_error <= 1.0;
      v.method = "dot product vs a double-precision CPU sum of the generated inputs";
      if (!v.passed) v.detail = fmt::format("dot = {} , expected {}", got_dot, ref.value);
      return v;
    }
    const double* out = op_ == StreamOp::Copy || op_ == StreamOp::Add ? c_.get() : op_ == StreamOp::Scale ? b_.get() : a_.get();
    v.passed = true;
    v.method = "sampled entries vs the element-wise reference";
    for (std::size_t i : sample_indices(n_)) {
      const double want = kernels::stream_expected(op_, i);
      const double err = std::fabs(out[i] - want) / 1e-12;
      v.max_error = std::max(v.max_error, err);
      ++v.checked;
      if (!(err <= 1.0) && v.passed) {
        v.passed = false;
        v.detail = fmt::format("{}[{}] = {}, expected {}", kernels::stream_op_name(op_), i, out[i], want);
      }
    }
    return v;
  }

  void run() override { sink_ = kernels::host_stream_run(op_, a_.get(), b_.get(), c_.get(), n_); }

  Metrics metrics() const override {
    return {0, kernels::stream_bytes(op_, static_cast<double>(n_ * sizeof(double))), "memory_bandwidth"};
  }

 private:
  StreamOp op_;
  std::size_t n_;
  HostArray a_, b_, c_;
  volatile double sink_ = 0;
};

// CPU time the calling thread has used, in seconds.
double thread_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class HostFmaCase final : public HostCase {
 public:
  // Steps per run: about 10 ms per core with AVX-512 (more on narrower paths), several
  // scheduler time slices, so that one run is a sustained window: a ~1 ms run could be read
  // while two threads shared one core and still look like a clean, low-noise figure. Also far
  // over waking and joining the pool's threads (tens of microseconds even on large hosts).
  static constexpr std::int64_t kIterations = std::int64_t{1} << 21;

  HostFmaCase(kernels::HostFmaType type, bool all_cores)
      : type_(type), path_(kernels::host_fma_path(type)), threads_(all_cores ? kernels::host_threads() : 1) {}

  void setup() override {
    // One cache line of padding between threads' outputs (and CPU times).
    stride_ = static_cast<std::size_t>(path_.chains * path_.lanes) + 8;
    out_.assign(stride_ * static_cast<std::size_t>(threads_), 0.0);
    cpu_s_.assign(kPad * static_cast<std::size_t>(threads_), 0.0);
  }

  Verification verify() override {
    run();
    Verification v;
    v.passed = true;
    v.method = fmt::format("every 7th and the last lane of every thread vs a scalar chain ({}, {} threads)", path_.isa,
                           threads_);
    const double tol = type_ == kernels::HostFmaType::F32 ? 1e-6 : 1e-14;
    const int lanes = path_.chains * path_.lanes;
    for (int j = 0; j < lanes; ++j) {
      if (j % 7 != 0 && j != lanes - 1) continue;  // the scalar reference is slow: a sample of lanes
      const double want = kernels::host_fma_reference(type_, path_, j, kIterations);
      for (int t = 0; t < threads_; ++t) {
        const double got = out_[static_cast<std::size_t>(t) * stride_ + static_cast<std::size_t>(j)];
        const double err = std::fabs(got - want) / (tol * std::max(1.0, std::fabs(want)));
        v.max_error = std::max(v.max_error, err);
        ++v.checked;
        if (!(err <= 1.0) && v.passed) {
          v.passed = false;
          v.detail = fmt::format("thread {} lane {}: {} , expected {}", t, j, got, want);
        }
      }
    }
    return v;
  }

  // Per run, besides the work: the run's wall time and its threads' CPU time (each thread's
  // own clock around its chains), for details().
  void run() override {
    const double t0 = steady_s();
    if (threads_ == 1) {
      const double c0 = thread_cpu_s();
      kernels::host_fma_run(type_, kIterations, out_.data());
      cpu_s_[0] = thread_cpu_s() - c0;
    } else {
      kernels::HostPool::shared().run([this](int t) {
        const double c0 = thread_cpu_s();
        kernels::host_fma_run(type_, kIterations, out_.data() + static_cast<std::size_t>(t) * stride_);
        cpu_s_[static_cast<std::size_t>(t) * kPad] = thread_cpu_s() - c0;
      });
    }
    double cpu = 0;
    for (int t = 0; t < threads_; ++t) cpu += cpu_s_[static_cast<std::size_t>(t) * kPad];
    runs_.push_back({steady_s() - t0, cpu});
  }

  Metrics metrics() const override {
    return {kernels::host_fma_flops(path_, kIterations) * threads_, 0,
            type_ == kernels::HostFmaType::F32 ? "fp32" : "fp64"};
  }

  // Over the timed runs (the last `runs`): `parallelism`, the threads' CPU time over the wall
  // time (how many of them ran at once on average: below `threads` when they shared cores), and
  // `thread_cpu_tflops`, the work over the mean thread's CPU time: the rate had every thread
  // had a core of its own while it ran. The memory summary keeps it as the ceiling when the
  // threads shared cores (summary.cpp, ceiling_figure).
  nlohmann::ordered_json details(std::int64_t runs) override {
    const std::size_t n = std::min(runs_.size(), static_cast<std::size_t>(std::max<std::int64_t>(runs, 0)));
    double wall = 0, cpu = 0;
    for (std::size_t i = runs_.size() - n; i < runs_.size(); ++i) wall += runs_[i].wall_s, cpu += runs_[i].cpu_s;
    nlohmann::ordered_json j{{"isa", path_.isa}, {"threads", threads_}};
    if (n == 0 || wall <= 0 || cpu <= 0) return j;
    j["parallelism"] = cpu / wall;
    j["thread_cpu_tflops"] = metrics().flops * static_cast<double>(n) / (cpu / threads_) / 1e12;
    return j;
  }

 private:
  kernels::HostFmaType type_;
  kernels::HostFmaPath path_;
  static constexpr std::size_t kPad = 8;  // doubles per cache line
  struct RunTimes {
    double wall_s, cpu_s;
  };
  int threads_;
  std::size_t stride_ = 0;
  std::vector<double> out_;
  std::vector<double> cpu_s_;  // this run's CPU time of thread t at [t * kPad]
  std::vector<RunTimes> runs_;  // every run since setup (warm-up and verification included)
};

// host_latency: one thread walks `size` bytes of 64-byte lines linked into one cycle in a
// random order (kernels::random_cycle): every load waits for the one before and no prefetcher
// guesses the next line, so a buffer larger than the last-level cache gives the DRAM latency and
// a smaller one that of the cache it fits in (lmbench's lat_mem_rd, with a random walk). The
// figure is ns per access: the run's time over its accesses.
class HostLatencyCase final : public HostCase {
 public:
  explicit HostLatencyCase(std::int64_t bytes) : lines_(static_cast<std::uint32_t>(bytes / kLine)) {}

  void setup() override {
    if (lines_ < 2) throw CaseSkipped(fmt::format("host_latency needs at least two {}-byte lines", kLine));
    next_ = kernels::random_cycle(lines_, kSeed);
    try {
      buffer_.reset(static_cast<unsigned char*>(::operator new[](static_cast<std::size_t>(lines_) * kLine, std::align_val_t(kLine))));
    } catch (const std::bad_alloc&) {
      throw CaseSkipped(fmt::format("out of host memory for {} bytes", static_cast<std::size_t>(lines_) * kLine));
    }
    for (std::uint32_t i = 0; i < lines_; ++i) *reinterpret_cast<const void**>(line(i)) = line(next_[i]);
    at_ = line(0);
  }

  // The walk through memory must follow the cycle line by line and come back to its start after
  // exactly `lines` steps (one cycle through every line).
  Verification verify() override {
    Verification v;
    v.method = "a walk of every line follows the random cycle and returns to its start";
    v.passed = true;
    const void* p = line(0);
    std::uint32_t expected = 0;
    for (std::uint32_t k = 0; k < lines_; ++k) {
      p = kernels::chase(p, 1);
      expected = next_[expected];
      ++v.checked;
      if (p != line(expected)) {
        v.passed = false;
        v.detail = fmt::format("step {}: at line {}, expected line {}", k + 1,
                               (static_cast<const unsigned char*>(p) - buffer_.get()) / kLine, expected);
        break;
      }
    }
    if (v.passed && p != line(0)) {
      v.passed = false;
      v.detail = "the walk did not return to its start after one pass over every line";
    }
    return v;
  }

  void run() override { at_ = kernels::chase(at_, kAccessesPerRun); }

  Metrics metrics() const override { return access_metrics(kAccessesPerRun); }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    annotate_access(g, seconds_per_run, kAccessesPerRun, static_cast<std::size_t>(lines_) * kLine,
                    "host memory, random order of 64-byte lines");
  }

 private:
  static constexpr std::size_t kLine = kernels::kHostChaseLineBytes;
  static constexpr std::uint64_t kSeed = 41;
  static constexpr std::int64_t kAccessesPerRun = kernels::kHostChaseAccessesPerRun;
  struct AlignedBytesFree {
    void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t(kLine)); }
  };
  unsigned char* line(std::uint32_t i) const { return buffer_.get() + static_cast<std::size_t>(i) * kLine; }

  std::uint32_t lines_;
  std::vector<std::uint32_t> next_;
  std::unique_ptr<unsigned char[], AlignedBytesFree> buffer_;
  const void* at_ = nullptr;
};

}  // namespace

std::unique_ptr<Case> make_host_latency_case(std::int64_t bytes) { return std::make_unique<HostLatencyCase>(bytes); }

std::unique_ptr<Case> make_host_bandwidth_case(StreamOp op, std::int64_t bytes) {
  return std::make_unique<HostBandwidthCase>(op, bytes);
}

std::unique_ptr<Case> make_host_fma_case(kernels::HostFmaType type, bool all_cores) {
  return std::make_unique<HostFmaCase>(type, all_cores);
}

}  // namespace gpubench::suites::memory
