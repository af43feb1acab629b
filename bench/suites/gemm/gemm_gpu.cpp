#include "bench/suites/gemm/gemm_gpu.hpp"

#include <fmt/format.h>

#include <vector>

#include "bench/core/errors.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/gemm/epilogue.cuh"

namespace gpubench::suites::gemm {

using kernels::Storage;

GpuGemmCase::GpuGemmCase(const DeviceInfo& device, const GemmCaseSpec& spec, bool separate_c)
    : CudaCase(device), spec_(spec), p_(spec.problem), st_(kernels::gemm_storages(spec.problem.precision)),
      separate_c_(separate_c) {}

void GpuGemmCase::setup() {
  const std::size_t sc = kernels::storage_bytes(st_.c);
  a_ = cuda::DeviceBuffer(kernels::gemm_a_elements(p_) * kernels::storage_bytes(st_.a));
  b_ = cuda::DeviceBuffer(kernels::gemm_b_elements(p_) * kernels::storage_bytes(st_.b));
  d_ = cuda::DeviceBuffer(kernels::gemm_c_elements(p_) * sc);
  if (separate_c_) c_ = cuda::DeviceBuffer(kernels::gemm_c_elements(p_) * sc);
  if (p_.epilogue == GemmEpilogue::Bias || p_.epilogue == GemmEpilogue::BiasGelu) {
    bias_ = cuda::DeviceBuffer(static_cast<std::size_t>(p_.m) * sc);
    GPUBENCH_CUDA_CHECK(kernels::fill_uniform(bias_.get(), st_.c, static_cast<std::size_t>(p_.m), p_.seed_bias, stream()));
  }
  // Per-tensor scales as the library reads them: device floats (used by fp8 only).
  std::vector<float> scales(2 * kScaleStride, 0.0f);
  scales[0] = static_cast<float>(p_.scale_a);
  scales[kScaleStride] = static_cast<float>(p_.scale_b);
  scales_ = cuda::DeviceBuffer(scales.size() * sizeof(float));
  GPUBENCH_CUDA_CHECK(cudaMemcpy(scales_.get(), scales.data(), scales_.bytes(), cudaMemcpyHostToDevice));
  fill_inputs();
  synchronize();
  prepare();
  synchronize();
}

void GpuGemmCase::fill_inputs() {
  GPUBENCH_CUDA_CHECK(kernels::fill_uniform(a_.get(), st_.a, kernels::gemm_a_elements(p_), p_.seed_a, stream()));
  GPUBENCH_CUDA_CHECK(kernels::fill_uniform(b_.get(), st_.b, kernels::gemm_b_elements(p_), p_.seed_b, stream()));
  // C's values live in C's buffer, or in D when the GEMM works in place.
  void* c = separate_c_ ? c_.get() : d_.get();
  GPUBENCH_CUDA_CHECK(kernels::fill_uniform(c, st_.c, kernels::gemm_c_elements(p_), p_.seed_c, stream()));
}

void GpuGemmCase::run() {
  enqueue_gemm();
  if (spec_.fusion == Fusion::Separate && p_.epilogue != GemmEpilogue::None) {
    kernels::EpilogueArgs e;
    e.d = d_.get();
    e.storage = st_.c;
    e.m = p_.m;
    e.n = p_.n;
    e.ld = kernels::gemm_ldc(p_);
    e.batch = p_.batch;
    e.bias = bias_.get();
    e.has_bias = p_.epilogue == GemmEpilogue::Bias || p_.epilogue == GemmEpilogue::BiasGelu;
    e.gelu = p_.epilogue == GemmEpilogue::Gelu || p_.epilogue == GemmEpilogue::BiasGelu;
    GPUBENCH_CUDA_CHECK(kernels::apply_epilogue(e, stream()));
  }
}

Verification GpuGemmCase::verify() {
  fill_inputs();  // D may hold a previous run's output
  run();
  synchronize();
  const auto entries = kernels::gemm_sample_entries(p_.m, p_.n);
  const std::size_t es = kernels::storage_bytes(st_.c);
  std::vector<unsigned char> host;
  if (d_.bytes() <= (std::size_t{64} << 20)) {
    host.resize(d_.bytes());
    GPUBENCH_CUDA_CHECK(cudaMemcpy(host.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost));
  }
  auto value = [&](std::int64_t i, std::int64_t j, std::int64_t b) {
    const std::size_t idx = kernels::gemm_d_index(p_, i, j, b);
    if (!host.empty()) return kernels::load_element(st_.c, host.data(), idx);
    unsigned char one[8];
    GPUBENCH_CUDA_CHECK(cudaMemcpy(one, d_.as<unsigned char>() + idx * es, es, cudaMemcpyDeviceToHost));
    return kernels::load_element(st_.c, one, 0);
  };
  Verification v = to_verification(kernels::check_gemm_batched(p_, entries, value),
                                   "CPU reference (double) on sampled entries");
  fill_inputs();  // timed runs start from the same C
  synchronize();
  return v;
}

Metrics GpuGemmCase::metrics() const {
  Metrics m = gemm_metrics(p_, separate_c_);
  m.extra = extra_metrics();
  return m;
}

}  // namespace gpubench::suites::gemm
