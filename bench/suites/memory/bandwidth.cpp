// Device memory bandwidth: the array operations of stream_reference.hpp on three device arrays
// of `size` bytes each (kernels/memory/stream.cu). GB/s and % of datasheet bandwidth.
#include <cmath>

#include "bench/core/cuda_case.hpp"
#include "bench/suites/memory/cuda_util.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/memory/stream.cuh"

namespace gpubench::suites::memory {
namespace {

using kernels::StreamOp;

class BandwidthCase final : public CudaCase {
 public:
  BandwidthCase(const DeviceInfo& device, StreamOp op, std::int64_t bytes)
      : CudaCase(device), op_(op), n_(static_cast<std::size_t>(bytes) / sizeof(double)) {}

  void setup() override {
    // One full wave of grid-stride blocks: every SM holds all of its blocks at once, so none
    // waits for a second turn while the others finish.
    const int per_sm = kernels::stream_blocks_per_sm(op_);
    if (per_sm <= 0) throw cuda::CudaError("cudaOccupancyMaxActiveBlocksPerMultiprocessor failed for the stream kernel");
    grid_ = static_cast<unsigned>(std::max(1, device().sm_count) * per_sm);
    const std::size_t bytes = n_ * sizeof(double);
    a_ = cuda::DeviceBuffer(bytes);
    b_ = cuda::DeviceBuffer(bytes);
    c_ = cuda::DeviceBuffer(bytes);
    partials_ = cuda::DeviceBuffer(grid_ * sizeof(double));
    double* arrays[3] = {a_.as<double>(), b_.as<double>(), c_.as<double>()};
    for (int k = 0; k < 3; ++k) {
      // fill_uniform stores uniform_value(seed, i): exactly stream_initial(k, i).
      GPUBENCH_CUDA_CHECK(kernels::fill_uniform(arrays[k], kernels::Storage::F64, n_, kernels::kStreamSeed[k], stream()));
    }
    synchronize();
  }

  Verification verify() override {
    run();
    synchronize();
    Verification v;
    if (op_ == StreamOp::Dot) {
      std::vector<double> partials(grid_);
      GPUBENCH_CUDA_CHECK(cudaMemcpy(partials.data(), partials_.get(), grid_ * sizeof(double), cudaMemcpyDeviceToHost));
      double got = 0;
      for (double p : partials) got += p;
      const kernels::DotReference ref = kernels::stream_dot_reference(n_);
      v.checked = 1;
      v.max_error = std::fabs(got - ref.value) / (1e-12 * ref.abs_sum + 1e-300);
      v.passed = v.max_error <= 1.0;
      v.method = "dot product vs a double-precision CPU sum of the generated inputs";
      if (!v.passed) v.detail = fmt::format("dot = {}, expected {}", got, ref.value);
      return v;
    }
    const int out = kernels::stream_output(op_);
    const double* dev = out == 0 ? a_.as<double>() : out == 1 ? b_.as<double>() : c_.as<double>();
    v.passed = true;
    v.method = "sampled entries vs the element-wise reference";
    for (std::size_t i : sample_indices(n_, 4096)) {
      double got = 0;
      GPUBENCH_CUDA_CHECK(cudaMemcpy(&got, dev + i, sizeof got, cudaMemcpyDeviceToHost));
      const double want = kernels::stream_expected(op_, i);
      // The GPU may fuse b + s*c into one fma: allow a few ulps of a value below 2.
      const double err = std::fabs(got - want) / 1e-12;
      v.max_error = std::max(v.max_error, err);
      ++v.checked;
      if (!(err <= 1.0) && v.passed) {
        v.passed = false;
        v.detail = fmt::format("{}[{}] = {}, expected {}", kernels::stream_op_name(op_), i, got, want);
      }
    }
    return v;
  }

  void run() override {
    GPUBENCH_CUDA_CHECK(kernels::launch_stream(op_, a_.as<double>(), b_.as<double>(), c_.as<double>(), n_,
                                               partials_.as<double>(), grid_, stream()));
  }

  Metrics metrics() const override {
    return {0, kernels::stream_bytes(op_, static_cast<double>(n_ * sizeof(double))), "memory_bandwidth"};
  }

 private:
  StreamOp op_;
  std::size_t n_;
  unsigned grid_ = 1;
  cuda::DeviceBuffer a_, b_, c_, partials_;
};

}  // namespace

std::unique_ptr<Case> make_bandwidth_case(const DeviceInfo& device, StreamOp op, std::int64_t bytes) {
  return std::make_unique<BandwidthCase>(device, op, bytes);
}

}  // namespace gpubench::suites::memory
