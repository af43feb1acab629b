// Custom provider: gpubench's own GEMM kernels (kernels/gemm/custom_gemm.hpp), `custom:<variant>`.
// Verified like every provider, and more: the CPU reference on sampled entries and, for
// problems above 1024 entries, the device reference GEMM on every entry.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/gemm/custom_gemm.hpp"
#include "kernels/gemm/reference_gemm.cuh"
#include "kernels/gemm/simt_gemm.cuh"
#include "kernels/gemm/wgmma_gemm.cuh"
#include "kernels/gemm/wmma_gemm.cuh"

namespace gpubench::suites::gemm {
namespace {

using kernels::CustomGemm;
using kernels::CustomGemmSpec;
using kernels::Storage;

class CustomGemmCase final : public CudaCase {
 public:
  CustomGemmCase(const DeviceInfo& device, const GemmProblem& p, const CustomGemmSpec& spec)
      : CudaCase(device), p_(p), spec_(spec), storage_(kernels::gemm_storage(p.precision)) {}

  void setup() override {
    if (spec_.id == CustomGemm::Wgmma) {
      bool usable = false;
      GPUBENCH_CUDA_CHECK(kernels::wgmma_gemm_probe(&usable, stream()));
      if (!usable) throw CaseSkipped("custom:wgmma: the code loaded on this GPU is not the sm_90a build of the kernel");
    }
    const std::size_t es = kernels::storage_bytes(storage_);
    a_ = cuda::DeviceBuffer(count(p_.m, p_.k) * es);
    b_ = cuda::DeviceBuffer(count(p_.k, p_.n) * es);
    d_ = cuda::DeviceBuffer(count(p_.m, p_.n) * es);
    GPUBENCH_CUDA_CHECK(kernels::fill_uniform(a_.get(), storage_, count(p_.m, p_.k), p_.seed_a, stream()));
    GPUBENCH_CUDA_CHECK(kernels::fill_uniform(b_.get(), storage_, count(p_.k, p_.n), p_.seed_b, stream()));
    GPUBENCH_CUDA_CHECK(kernels::fill_uniform(d_.get(), storage_, count(p_.m, p_.n), p_.seed_c, stream()));
    if (p_.beta != 0) {  // D is overwritten by every run; the device check needs the original C
      c_ = cuda::DeviceBuffer(d_.bytes());
      GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(c_.get(), d_.get(), d_.bytes(), cudaMemcpyDeviceToDevice, stream()));
    }
    args_.m = static_cast<int>(p_.m);
    args_.n = static_cast<int>(p_.n);
    args_.k = static_cast<int>(p_.k);
    args_.a = a_.get();
    args_.b = b_.get();
    args_.d = d_.get();
    args_.alpha = static_cast<float>(p_.alpha);
    args_.beta = static_cast<float>(p_.beta);
    args_.storage = storage_;
    if (spec_.id == CustomGemm::Wmma) GPUBENCH_CUDA_CHECK(kernels::prepare_wmma_gemm(storage_));
    if (spec_.id == CustomGemm::Wgmma) {
      GPUBENCH_CUDA_CHECK(kernels::prepare_wgmma_gemm(storage_));
      const std::string why = kernels::encode_wgmma_tensor_maps(args_, &maps_);
      if (!why.empty()) throw CaseSkipped("custom:wgmma: " + why);
    }
    synchronize();
  }

  Verification verify() override {
    run();
    synchronize();
    // CPU reference (double) on up to 1024 sampled entries, read back as for cuBLAS: the whole
    // of D when small, else entry by entry.
    const std::size_t es = kernels::storage_bytes(storage_);
    std::vector<unsigned char> host;
    if (d_.bytes() <= (std::size_t{64} << 20)) {
      host.resize(d_.bytes());
      GPUBENCH_CUDA_CHECK(cudaMemcpy(host.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost));
    }
    auto value = [&](std::int64_t i, std::int64_t j) {
      const std::size_t idx = static_cast<std::size_t>(i + j * p_.m);
      if (!host.empty()) return kernels::load_element(storage_, host.data(), idx);
      unsigned char one[8];
      GPUBENCH_CUDA_CHECK(cudaMemcpy(one, d_.as<unsigned char>() + idx * es, es, cudaMemcpyDeviceToHost));
      return kernels::load_element(storage_, one, 0);
    };
    const kernels::GemmCheckResult cpu = kernels::check_gemm(p_, kernels::gemm_sample_entries(p_.m, p_.n), value);
    if (!cpu.passed || p_.m * p_.n <= 1024) return to_verification(cpu, "CPU reference (double) on every entry up to 1024, else sampled");

    // Every entry against the device reference (fp64 accumulation).
    kernels::ReferenceGemmArgs ref;
    ref.m = p_.m, ref.n = p_.n, ref.k = p_.k;
    ref.alpha = p_.alpha, ref.beta = p_.beta;
    ref.a = kernels::column_major(a_.get(), storage_, p_.m);
    ref.b = kernels::column_major(b_.get(), storage_, p_.k);
    ref.c = kernels::column_major(c_.get(), storage_, p_.m);
    ref.u = kernels::gemm_unit_roundoff(p_.precision);
    kernels::GemmCheckResult all;
    const cudaError_t err = kernels::check_gemm_on_device(ref, kernels::column_major(d_.get(), storage_, p_.m), stream(), &all);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return to_verification(cpu, "CPU reference (double) on 1024 sampled entries (no memory left for the device reference)");
    }
    GPUBENCH_CUDA_CHECK(err);
    all.max_error = std::max(all.max_error, cpu.max_error);
    return to_verification(all, "device reference GEMM (fp64 accumulation) on every entry, and CPU reference (double) on 1024 sampled entries");
  }

  void run() override {
    switch (spec_.id) {
      case CustomGemm::Naive: GPUBENCH_CUDA_CHECK(kernels::launch_naive_gemm(args_, stream())); break;
      case CustomGemm::Tiled: GPUBENCH_CUDA_CHECK(kernels::launch_tiled_gemm(args_, stream())); break;
      case CustomGemm::RegBlock: GPUBENCH_CUDA_CHECK(kernels::launch_regblock_gemm(args_, stream())); break;
      case CustomGemm::Wmma: GPUBENCH_CUDA_CHECK(kernels::launch_wmma_gemm(args_, stream())); break;
      case CustomGemm::Wgmma: GPUBENCH_CUDA_CHECK(kernels::launch_wgmma_gemm(args_, maps_, stream())); break;
    }
  }

  Metrics metrics() const override {
    const double elems = static_cast<double>(count(p_.m, p_.k) + count(p_.k, p_.n) + count(p_.m, p_.n));
    return {gemm_flops(p_), elems * static_cast<double>(kernels::storage_bytes(storage_)), peak_key(p_.precision)};
  }

 private:
  static std::size_t count(std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

  GemmProblem p_;
  const CustomGemmSpec& spec_;
  Storage storage_;
  cuda::DeviceBuffer a_, b_, c_, d_;
  kernels::CustomGemmArgs args_;
  kernels::WgmmaTensorMaps maps_{};
};

const CustomGemmSpec* spec_for(const std::string& variant) { return kernels::find_custom_gemm(variant); }

}  // namespace

bool wgmma_gemm_built() { return kernels::wgmma_gemm_built(); }

std::unique_ptr<Case> make_custom_case(const DeviceInfo& device, const GemmProblem& problem, const std::string& variant) {
  const CustomGemmSpec* spec = spec_for(variant);
  if (spec == nullptr) throw std::logic_error("gemm: unknown custom kernel " + variant);
  return std::make_unique<CustomGemmCase>(device, problem, *spec);
}

}  // namespace gpubench::suites::gemm
