// GPU arithmetic peak: FMA chains per precision and mma.sync loops per Tensor Core type
// (kernels/memory/peak.cu). TFLOP/s against the datasheet; the SM clock the kernel measured
// goes to the summary, which scales the datasheet figure to it.
#include <cmath>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "gpubench/version.hpp"
#include "bench/suites/memory/cuda_util.hpp"
#include "kernels/memory/peak.cuh"
#include "kernels/memory/peak_wgmma.cuh"

namespace gpubench::suites::memory {
namespace {

using kernels::FmaType;
using kernels::MmaType;

// Steps per thread (FMA) or per accumulator (mma) in one launch: about a millisecond on a
// large GPU, and small enough that the mma check stays exact in fp32 (see peak_reference.hpp).
constexpr std::int64_t kIterations = 4096;
constexpr unsigned kBlock = 256;
// The Hopper wgmma loops: each iteration is 4 m64n256kK (1-4 MFLOP per warpgroup), so fewer
// iterations give about the same time, and their checks stay exact (peak_reference.hpp).
constexpr std::int64_t kWgmmaIterations = 1024;
static_assert(kWgmmaIterations <= kernels::kWgmmaMaxExactIterations);
// fp8 alternates +r and -r in B (peak_reference.hpp): an odd count leaves a product to check.
std::int64_t odd_for_fp8(std::optional<kernels::MmaType> t, std::int64_t iterations) {
  return t == kernels::MmaType::FP8 ? iterations | 1 : iterations;
}

std::string peak_key_of(const std::string& test) {
  if (test == "fma_fp64") return "fp64";
  if (test == "fma_fp32") return "fp32";
  if (test.rfind("mma_", 0) == 0) return test.substr(4) + "_tensor";
  return "";  // fp16x2, bf16x2, int32: no datasheet figure for the non-tensor paths
}

class PeakCase final : public CudaCase {
 public:
  PeakCase(const DeviceInfo& device, std::string test, std::shared_ptr<Observations> observations)
      : CudaCase(device), test_(std::move(test)), observations_(std::move(observations)) {
    const std::string dtype = test_.substr(4);
    if (test_.rfind("mma_", 0) == 0) mma_ = kernels::parse_mma_type(dtype);
    else fma_ = kernels::parse_fma_type(dtype);
    if (!mma_ && !fma_) throw std::logic_error("memory: unknown peak test " + test_);
  }

  void setup() override {
    if (mma_ == MmaType::FP8) {
      choose_fp8_kernel();
    } else if (mma_ && device().cc_major * 10 + device().cc_minor == 90) {
      // sm_90: wgmma from this build's sm_90a code reaches the dense rate; mma.sync does not (its
      // figure is then recorded but is no ceiling: metrics()).
      int arch = 0;
      GPUBENCH_CUDA_CHECK(kernels::wgmma_peak_code_arch(*mma_, &arch));
      wgmma_ = arch == 90;
    }
    // One full wave: as many blocks as every SM holds at once (registers and thread limits
    // differ per GPU and kernel), so no partial second wave dilutes the rate.
    const int sms = std::max(1, device().sm_count);
    const int per_sm = wgmma_ ? kernels::wgmma_peak_blocks_per_sm(*mma_)
                       : mma_ ? kernels::mma_blocks_per_sm(*mma_, kBlock)
                              : kernels::fma_blocks_per_sm(*fma_, kBlock);
    if (per_sm <= 0) throw cuda::CudaError("cudaOccupancyMaxActiveBlocksPerMultiprocessor failed for " + test_);
    grid_ = static_cast<unsigned>(sms * per_sm);
    threads_ = static_cast<std::int64_t>(grid_) * block();
    const std::size_t outputs = static_cast<std::size_t>(outputs_count());
    out_ = cuda::DeviceBuffer(outputs * sizeof(double));
    clock_ = cuda::DeviceBuffer(2 * sizeof(unsigned long long));
  }

  Verification verify() override {
    for (int i = 0; i < 5; ++i) launch(nullptr);  // let the clocks ramp up before the clock reading
    launch(clock_.as<unsigned long long>());
    synchronize();
    unsigned long long clk[2] = {0, 0};
    GPUBENCH_CUDA_CHECK(cudaMemcpy(clk, clock_.get(), sizeof clk, cudaMemcpyDeviceToHost));
    if (clk[1] > 0) observations_->record_clock(device().id(), test_, static_cast<double>(clk[0]) / clk[1] * 1e3);

    Verification v;
    v.passed = true;
    const std::int64_t outputs = outputs_count();
    v.method = wgmma_ ? "wgmma: sum of D over sampled warpgroups vs iterations * 4 * N * r * sum(A)"
               : mma_ ? "sum of D over sampled warps vs iterations * accumulators * N * r * sum(A)"
                      : "sampled threads' chain results vs a scalar CPU chain";
    for (std::size_t i : sample_indices(static_cast<std::size_t>(outputs), 256)) {
      double got = 0;
      GPUBENCH_CUDA_CHECK(cudaMemcpy(&got, out_.as<double>() + i, sizeof got, cudaMemcpyDeviceToHost));
      const auto idx = static_cast<std::int64_t>(i);
      const double want = wgmma_ ? kernels::wgmma_group_sum(*mma_, idx, iterations())
                          : mma_ ? kernels::mma_warp_sum(*mma_, idx, iterations())
                                 : kernels::fma_reference(*fma_, idx, iterations());
      // The mma and wgmma sums are exact (peak_reference.hpp): fp8's B alternates sign so that D
      // never grows past a few steps of its products, within what fp8 accumulation keeps.
      const double tol = (mma_ ? 1e-6 : kernels::fma_tolerance(*fma_)) * std::max(1.0, std::fabs(want));
      const double err = tol > 0 ? std::fabs(got - want) / tol : (got == want ? 0.0 : 2.0);
      v.max_error = std::max(v.max_error, err);
      ++v.checked;
      if (!(err <= 1.0) && v.passed) {
        v.passed = false;
        v.detail = fmt::format("{} {} = {}, expected {}", mma_ ? "warp" : "thread", i, got, want);
      }
    }
    return v;
  }

  void run() override { launch(nullptr); }

  Metrics metrics() const override {
    const double flops = wgmma_ ? kernels::wgmma_flops(*mma_, grid_, iterations())
                         : mma_ ? kernels::mma_flops(*mma_, threads_ / 32, iterations())
                                : kernels::fma_flops(*fma_, threads_, iterations());
    Metrics m{flops, 0, peak_key_of(test_)};
    if (mma_) {
      m.extra["instruction"] = kernels::tensor_peak_instruction(*mma_, wgmma_);
      if (!wgmma_) {
        if (auto why = kernels::mma_sync_not_a_ceiling(device().cc_major * 10 + device().cc_minor)) {
          m.extra["ceiling"] = false;  // summary.cpp keeps it out of the measured ceilings
          m.extra["not_a_ceiling"] = *why;
        }
      }
    }
    return m;
  }

 private:
  // Native fp8 mma.sync (sm_89, sm_12x code on such a GPU), wgmma (sm_90a code on sm_90), or a
  // skip that says why: never the fp16 emulation that sm_90 and sm_10x make of mma.sync fp8.
  void choose_fp8_kernel() {
    int mma_arch = 0, wgmma_arch = 0;
    GPUBENCH_CUDA_CHECK(kernels::mma_code_arch(MmaType::FP8, &mma_arch));
    GPUBENCH_CUDA_CHECK(kernels::wgmma_peak_code_arch(MmaType::FP8, &wgmma_arch));
    const kernels::Fp8PeakChoice c = kernels::choose_fp8_peak(device().cc_major * 10 + device().cc_minor, mma_arch,
                                                              wgmma_arch, kCudaArchitectures);
    if (c.path == kernels::Fp8PeakPath::None) throw CaseSkipped(c.skip_reason);
    wgmma_ = c.path == kernels::Fp8PeakPath::Wgmma;
  }
  unsigned block() const { return wgmma_ ? kernels::kWgmmaPeakThreads : kBlock; }
  // One double per thread (FMA), per warp (mma.sync) or per block = warpgroup (wgmma).
  std::int64_t outputs_count() const { return wgmma_ ? grid_ : mma_ ? threads_ / 32 : threads_; }

  void launch(unsigned long long* clock) {
    if (wgmma_) {
      GPUBENCH_CUDA_CHECK(kernels::launch_wgmma_peak(*mma_, out_.as<double>(), iterations(), grid_, clock, stream()));
    } else if (mma_) {
      GPUBENCH_CUDA_CHECK(kernels::launch_mma(*mma_, out_.as<double>(), iterations(), grid_, kBlock, clock, stream()));
    } else {
      GPUBENCH_CUDA_CHECK(kernels::launch_fma_chain(*fma_, out_.as<double>(), iterations(), grid_, kBlock, clock, stream()));
    }
  }

  std::string test_;
  std::shared_ptr<Observations> observations_;
  std::optional<FmaType> fma_;
  // Steps per accumulator (mma, wgmma) or per thread (fma) in one launch.
  std::int64_t iterations() const { return odd_for_fp8(mma_, wgmma_ ? kWgmmaIterations : kIterations); }
  std::optional<MmaType> mma_;
  bool wgmma_ = false;  // the Hopper wgmma kernel of the type (sm_90a code on sm_90)
  unsigned grid_ = 1;
  std::int64_t threads_ = 0;
  cuda::DeviceBuffer out_, clock_;
};

}  // namespace

std::unique_ptr<Case> make_peak_case(const DeviceInfo& device, const std::string& test,
                                     std::shared_ptr<Observations> observations) {
  return std::make_unique<PeakCase>(device, test, std::move(observations));
}

std::optional<std::string> peak_plan_note(const DeviceInfo& device, const std::string& test) {
  if (test.rfind("mma_", 0) != 0) return std::nullopt;
  const auto mma = kernels::parse_mma_type(test.substr(4));
  if (!mma) return std::nullopt;
  const int cc = device.cc_major * 10 + device.cc_minor;
  const bool wgmma = kernels::tensor_peak_uses_wgmma(cc, kernels::wgmma_peak_built());
  std::string note = "instruction: " + kernels::tensor_peak_instruction(*mma, wgmma);
  if (!wgmma) {
    if (auto why = kernels::mma_sync_not_a_ceiling(cc)) note += "; " + *why;
  }
  return note;
}

}  // namespace gpubench::suites::memory
