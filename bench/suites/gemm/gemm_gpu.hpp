#pragma once
// What every GPU provider of the gemm suite shares: the buffers (A, B, C, D, bias and the fp8
// scales) filled on the device with the reference's counter-based values, verification of
// sampled D entries against the CPU reference, the unfused epilogue kernel for fusion=separate,
// and the metrics. A provider implements prepare() (handles, algorithm choice) and
// enqueue_gemm() (one GEMM on stream()).
#include <nlohmann/json.hpp>

#include "bench/core/cuda_case.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench::suites::gemm {

class GpuGemmCase : public CudaCase {
 public:
  // `separate_c`: C and D are different buffers (cuBLASLt); otherwise D overwrites C in place
  // (cublasGemmEx), so with beta != 0 timed runs accumulate into D.
  GpuGemmCase(const DeviceInfo& device, const GemmCaseSpec& spec, bool separate_c);

  void setup() override;
  Verification verify() override;
  void run() override;
  Metrics metrics() const override;

 protected:
  virtual void prepare() {}
  virtual void enqueue_gemm() = 0;
  // Extra fields for gpubench.metrics (algorithm, tuning gain).
  virtual nlohmann::ordered_json extra_metrics() const { return nlohmann::ordered_json::object(); }
  // Whether the provider applies the epilogue inside the GEMM (fusion=fused).
  bool fused_epilogue() const { return spec_.fusion == Fusion::Fused && p_.epilogue != GemmEpilogue::None; }

  const GemmProblem& problem() const { return p_; }
  const GemmCaseSpec& spec() const { return spec_; }
  const kernels::GemmStorages& storages() const { return st_; }
  const void* a() const { return a_.get(); }
  const void* b() const { return b_.get(); }
  const void* c() const { return separate_c_ ? c_.get() : d_.get(); }
  void* d() const { return d_.get(); }
  void* bias() const { return bias_.get(); }
  // fp8's per-tensor scales, each at its own 256-byte offset (as cudaMalloc aligns): on an H200
  // cuBLASLt 13.1 refused every algorithm ("not supported") with B's scale 4 bytes after A's.
  static constexpr std::size_t kScaleStride = 256 / sizeof(float);
  const float* scale_a() const { return scales_.as<float>(); }
  const float* scale_b() const { return scales_.as<float>() + kScaleStride; }

 private:
  void fill_inputs();  // (re)fills every input, D included when it doubles as C

  GemmCaseSpec spec_;
  GemmProblem p_;
  kernels::GemmStorages st_;
  bool separate_c_;
  cuda::DeviceBuffer a_, b_, c_, d_, bias_, scales_;
};

}  // namespace gpubench::suites::gemm
