// CPU ceilings: host memory bandwidth over every core (the array operations of
// stream_reference.hpp on the shared host thread pool) and vectorized FMA peak, on one core and on all of them.
#include <fmt/format.h>

#include <cmath>
#include <new>

#include "bench/core/errors.hpp"
#include "bench/suites/memory/memory.hpp"
#include "kernels/memory/host_pool.hpp"

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

class HostFmaCase final : public HostCase {
 public:
  // Steps per run: about a millisecond per core, well over waking and joining the pool's threads
  // (tens of microseconds even on large hosts), which the all-core run pays once per run.
  static constexpr std::int64_t kIterations = std::int64_t{1} << 18;

  HostFmaCase(kernels::HostFmaType type, bool all_cores)
      : type_(type), path_(kernels::host_fma_path(type)), threads_(all_cores ? kernels::host_threads() : 1) {}

  void setup() override {
    // One cache line of padding between threads' outputs.
    stride_ = static_cast<std::size_t>(path_.chains * path_.lanes) + 8;
    out_.assign(stride_ * static_cast<std::size_t>(threads_), 0.0);
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

  void run() override {
    if (threads_ == 1) {
      kernels::host_fma_run(type_, kIterations, out_.data());
      return;
    }
    kernels::HostPool::shared().run([this](int t) {
      kernels::host_fma_run(type_, kIterations, out_.data() + static_cast<std::size_t>(t) * stride_);
    });
  }

  Metrics metrics() const override {
    return {kernels::host_fma_flops(path_, kIterations) * threads_, 0,
            type_ == kernels::HostFmaType::F32 ? "fp32" : "fp64"};
  }

 private:
  kernels::HostFmaType type_;
  kernels::HostFmaPath path_;
  int threads_;
  std::size_t stride_ = 0;
  std::vector<double> out_;
};

}  // namespace

std::unique_ptr<Case> make_host_bandwidth_case(StreamOp op, std::int64_t bytes) {
  return std::make_unique<HostBandwidthCase>(op, bytes);
}

std::unique_ptr<Case> make_host_fma_case(kernels::HostFmaType type, bool all_cores) {
  return std::make_unique<HostFmaCase>(type, all_cores);
}

}  // namespace gpubench::suites::memory
