// Checks the gemm suite's cuBLASLt goal (issue 3): gpubench's `cublaslt` provider on bf16
// 8192^3 (layout tn) runs within 2% of the same cublasLtMatmul called in a bare timed loop:
// the same wrapper (kernels/blas/cublaslt.hpp), heuristic's first algorithm, workspace size,
// separate C and D buffers and input values; CUDA events around batches of launches.
// Bare and harnessed measurements alternate (ROUNDS, default 5) and the best round of each
// side is compared, as harness_overhead.cpp does. Without a CUDA device it says so and exits 0
// (nothing was checked).
//   build/<preset>/perf/gpubench_perf_cublaslt [--plan] [ROUNDS] [SIZE]
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/core/cuda.hpp"
#include "bench/core/device.hpp"
#include "bench/core/harness.hpp"
#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/fill.cuh"
#include "perf/perf_common.hpp"

namespace gb = gpubench;

namespace {

// Mean seconds per GEMM over batches of `per_batch` launches filling at least `min_time`.
double bare_loop(const gb::DeviceInfo& device, std::int64_t n, double min_time) {
  gb::cuda::ScopedDevice current(device.ordinal);
  gb::cuda::Stream stream;
  gb::blas::LtHandle handle;
  gb::blas::LtProblem p;
  p.precision = gb::blas::LtPrecision::BF16;
  p.trans_a = true;
  p.m = p.n = p.k = n;
  const std::size_t ws = gb::blas::recommended_workspace_bytes(device.cc_major);
  gb::blas::LtMatmul mm(handle, p, ws);
  const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  gb::cuda::DeviceBuffer a(count * 2), b(count * 2), c(count * 2), d(count * 2), work(ws);
  GPUBENCH_CUDA_CHECK(gb::kernels::fill_uniform(a.get(), gb::kernels::Storage::BF16, count, 1, stream.get()));
  GPUBENCH_CUDA_CHECK(gb::kernels::fill_uniform(b.get(), gb::kernels::Storage::BF16, count, 2, stream.get()));
  GPUBENCH_CUDA_CHECK(gb::kernels::fill_uniform(c.get(), gb::kernels::Storage::BF16, count, 3, stream.get()));
  const auto algo = mm.first_heuristic();
  if (!algo) {
    fmt::print(stderr, "cuBLASLt has no algorithm for bf16 {}^3\n", n);
    std::exit(1);
  }
  auto launch = [&] { mm.run(a.get(), b.get(), c.get(), d.get(), algo->algo, work.get(), stream.get()); };
  for (int i = 0; i < 10; ++i) launch();  // warm-up
  gb::cuda::Event start, stop;
  start.record(stream.get());
  launch();
  stop.record(stream.get());
  const double one = gb::cuda::Event::elapsed_ms(start, stop) * 1e-3;
  const int per_batch = std::max(1, static_cast<int>(0.05 / std::max(one, 1e-7)));
  double total = 0;
  long runs = 0;
  while (total < min_time) {
    start.record(stream.get());
    for (int i = 0; i < per_batch; ++i) launch();
    stop.record(stream.get());
    total += gb::cuda::Event::elapsed_ms(start, stop) * 1e-3;
    runs += per_batch;
  }
  return total / static_cast<double>(runs);
}

}  // namespace

int main(int argc, char** argv) {
  // --plan: the wall time this run plans for, without touching a GPU (gpu-smoke.sh --dry-run):
  // per round 2 s bare and 2 s through gpubench, plus an allowance of 3 s for the CUDA context,
  // cuBLASLt's handle, the inputs and the harness's verification against the reference GEMM.
  const bool plan = argc > 1 && std::string(argv[1]) == "--plan";
  if (plan) --argc, ++argv;
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::int64_t n = argc > 2 ? std::max(64, std::atoi(argv[2])) : 8192;
  if (plan) {
    fmt::print("plan: 1 case, about {:.1f} s\n", rounds * (2.0 + 2.0) + 3.0);
    return 0;
  }
  gb::parse_benchmark_flags({});
  const gb::DeviceInventory inventory = gb::discover_devices();
  if (inventory.cuda.empty()) {
    fmt::print("cuBLASLt bf16 {}^3: not checked, no CUDA device ({})\n", n, inventory.cuda_unavailable_reason);
    return 0;
  }
  const gb::DeviceInfo& gpu = inventory.cuda.front();
  const gb::Suite& gemm = gpubench::perf::suite_named("gemm");
  const std::vector<std::string> axes = {"provider=cublaslt", "dtype=bf16", "layout=tn", fmt::format("m={}", n)};
  std::vector<double> bare, harness;
  for (int r = 0; r < rounds; ++r) {
    bare.push_back(bare_loop(gpu, n, 2.0));
    harness.push_back(gpubench::perf::through_harness(gemm, axes, 2.0, gpu));
    fmt::print("  round {}: bare {:.5g} s/run  gpubench {:.5g} s/run\n", r, bare.back(), harness.back());
  }
  const double b = *std::min_element(bare.begin(), bare.end()), h = *std::min_element(harness.begin(), harness.end());
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const double diff = (h - b) / b * 100;
  const bool ok = diff < 2.0;
  fmt::print("cuBLASLt bf16 {}^3 on {}: bare {:.1f} TFLOP/s, gpubench cublaslt {:.1f} TFLOP/s, difference {:+.2f}% "
             "(goal < 2%) {}\n",
             n, gpu.name, flops / b / 1e12, flops / h / 1e12, diff, ok ? "PASS" : "FAIL");
  fmt::print("medians: bare {:.5g}, gpubench {:.5g}\n", gpubench::perf::median(bare), gpubench::perf::median(harness));
  return ok ? 0 : 1;
}
