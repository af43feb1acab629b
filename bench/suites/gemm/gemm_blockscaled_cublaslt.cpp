// dtype=mxfp8 / nvfp4 with provider=cublaslt: a block-scaled GEMM D = alpha A B (TN, D bf16)
// through cuBLASLt's block scaling (CUDA 12.8+, sm_100 / sm_120), from bf16 inputs.
//
// What is specific here (the rest is the gemm suite's): A (m x k) and B (n x k, both K-major)
// are filled with random bf16 on the device and quantised there by gpubench's quantiser
// (kernels/gemm/block_quantize.cuh); verification checks that quantiser bit for bit against the
// CPU's (every value code, every scale un-swizzled from cuBLASLt's tiled layout, NVFP4's tensor
// scale), then D on a slice of rows and columns against emulated_gemm of the CPU's codes. The
// headline time is the GEMM alone; metrics add the GEMM with the quantisation of both inputs
// (tflops_with_quantize, quantize_overhead_pct), the quantisation's cost a framework pays when
// its activations arrive in bf16.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/gemm_cublaslt.hpp"
#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/gemm/block_quantize.cuh"
#include "kernels/gemm/block_quantize.hpp"
#include "kernels/gemm/block_quantize_math.hpp"

namespace gpubench::suites::gemm {

bool block_scaled_gemm_built() { return blas::lt_block_scaling_built(); }
std::string block_scaled_toolkit() { return fmt::format("built with cuBLAS {}", CUBLAS_VERSION); }

namespace {

using kernels::BlockFormat;
using kernels::BlockScaled;

// One operand: its bf16 source, codes and scales on the device.
struct Operand {
  std::int64_t rows = 0;
  cuda::DeviceBuffer src, values, scales;
};

class BlockScaledGemmCase final : public CudaCase {
 public:
  BlockScaledGemmCase(const DeviceInfo& device, const GemmCaseSpec& spec)
      : CudaCase(device), p_(spec.problem),
        format_(p_.precision == GemmPrecision::MXFP8 ? BlockFormat::Mxfp8 : BlockFormat::Nvfp4) {}

  void setup() override {
    const std::int64_t bs = kernels::block_size(format_);
    for (Operand* o : {&a_, &b_}) {
      o->rows = o == &a_ ? p_.m : p_.n;
      const std::size_t elems = static_cast<std::size_t>(o->rows * p_.k);
      o->src = cuda::DeviceBuffer(elems * 2);
      o->values = cuda::DeviceBuffer(format_ == BlockFormat::Mxfp8 ? elems : elems / 2);
      o->scales = cuda::DeviceBuffer(static_cast<std::size_t>(kernels::bq::block_scale_bytes(o->rows, p_.k / bs)));
      GPUBENCH_CUDA_CHECK(cudaMemsetAsync(o->scales.get(), 0, o->scales.bytes(), stream()));  // the padding
      GPUBENCH_CUDA_CHECK(kernels::fill_uniform(o->src.get(), kernels::Storage::BF16, elems, o == &a_ ? p_.seed_a : p_.seed_b, stream()));
    }
    d_ = cuda::DeviceBuffer(static_cast<std::size_t>(p_.m * p_.n) * 2);
    small_ = cuda::DeviceBuffer(1024);  // amax scratch, tensor scales, device alpha/beta: 256 bytes apart
    GPUBENCH_CUDA_CHECK(cudaMemsetAsync(small_.get(), 0, small_.bytes(), stream()));
    quantize();
    synchronize();
    try {
      handle_ = std::make_unique<blas::LtHandle>();
      const std::size_t ws = blas::recommended_workspace_bytes(device().cc_major);
      workspace_ = cuda::DeviceBuffer(ws);
      blas::LtProblem lt;
      lt.precision = blas::LtPrecision::BF16;  // C, D bf16; fp32 compute and scale
      lt.block_scale = format_ == BlockFormat::Mxfp8 ? blas::LtBlockScale::Mxfp8 : blas::LtBlockScale::Nvfp4;
      lt.trans_a = true;
      lt.m = p_.m;
      lt.n = p_.n;
      lt.k = p_.k;
      lt.alpha = p_.alpha;
      matmul_ = std::make_unique<blas::LtMatmul>(*handle_, lt, ws);
      blas::LtExtraPointers ptrs;
      ptrs.a_block_scales = a_.scales.get();
      ptrs.b_block_scales = b_.scales.get();
      if (format_ == BlockFormat::Nvfp4) ptrs.device_alpha_beta = alpha_beta();
      matmul_->set_pointers(ptrs);
      algo_ = first_that_runs();
    } catch (const blas::LtError& e) {
      rethrow_lt_error(e);
    }
    synchronize();
  }

  void run() override { gemm(); }

  Verification verify() override {
    quantize();
    run();
    synchronize();
    Verification v;
    v.method = "GPU quantiser bit for bit against the CPU's; D on a slice against the emulated GEMM (double) of the CPU's codes";
    const BlockScaled qa = check_quantiser(a_, "A", v), qb = v.detail.empty() ? check_quantiser(b_, "B", v) : BlockScaled{};
    if (!v.detail.empty()) return v;  // passed = false, the first differing code named
    check_d(qa, qb, v);
    if (v.passed) time_with_quantize();
    return v;
  }

  Metrics metrics() const override {
    Metrics m = gemm_metrics(p_, /*separate_c=*/false);
    // What the GEMM reads and writes: the codes and scales (not the bf16 sources), D in bf16.
    const double operands = static_cast<double>(a_.values.bytes() + a_.scales.bytes() + b_.values.bytes() + b_.scales.bytes());
    m.bytes = operands + static_cast<double>(d_.bytes());
    m.footprint_bytes = operands + static_cast<double>(a_.src.bytes() + b_.src.bytes() + d_.bytes());
    const double flops = m.flops;
    m.extra = {{"algorithm", blas::to_string(algo_.config)},
               {"workspace_bytes", algo_.workspace_bytes},
               {"block_size", kernels::block_size(format_)},
               {"gemm_time_s", gemm_s_},
               {"gemm_with_quantize_time_s", with_quantize_s_},
               {"tflops_with_quantize", with_quantize_s_ > 0 ? flops / with_quantize_s_ * 1e-12 : 0.0},
               {"quantize_overhead_pct", gemm_s_ > 0 ? (with_quantize_s_ / gemm_s_ - 1.0) * 100.0 : 0.0}};
    return m;
  }

 private:
  unsigned* amax_bits(const Operand& o) const { return reinterpret_cast<unsigned*>(small_.as<unsigned char>() + (&o == &a_ ? 0 : 256)); }
  float* tensor_scale(const Operand& o) const { return reinterpret_cast<float*>(small_.as<unsigned char>() + (&o == &a_ ? 512 : 640)); }
  float* alpha_beta() const { return reinterpret_cast<float*>(small_.as<unsigned char>() + 768); }

  // Both inputs from bf16 to codes and scales (and NVFP4's alpha).
  void quantize() {
    for (const Operand* o : {&a_, &b_}) {
      const auto* src = o->src.as<std::uint16_t>();
      auto* values = o->values.as<std::uint8_t>();
      auto* scales = o->scales.as<std::uint8_t>();
      GPUBENCH_CUDA_CHECK(format_ == BlockFormat::Mxfp8
                              ? kernels::quantize_mxfp8(src, o->rows, p_.k, values, scales, stream())
                              : kernels::quantize_nvfp4(src, o->rows, p_.k, values, scales, amax_bits(*o), tensor_scale(*o), stream()));
    }
    if (format_ == BlockFormat::Nvfp4) {
      GPUBENCH_CUDA_CHECK(kernels::nvfp4_alpha(tensor_scale(a_), tensor_scale(b_), static_cast<float>(p_.alpha), alpha_beta(), stream()));
    }
  }

  cublasStatus_t enqueue(const cublasLtMatmulAlgo_t& algo) {
    return matmul_->enqueue(a_.values.get(), b_.values.get(), d_.get(), d_.get(), algo, workspace_.get(), stream());
  }
  void gemm() {
    const cublasStatus_t s = enqueue(algo_.algo);
    if (s != CUBLAS_STATUS_SUCCESS) rethrow_lt_error(blas::LtError(s, fmt::format("cublasLtMatmul failed: {}", cublasLtGetStatusString(s))));
  }

  // The heuristic's first algorithm that cublasLtMatmul accepts (as the cublaslt provider:
  // the heuristic does not promise that its answers run).
  blas::LtCandidate first_that_runs() {
    const std::vector<blas::LtCandidate> all = matmul_->heuristics(8);
    if (all.empty()) throw CaseSkipped("cuBLASLt has no block-scaled algorithm for this problem on this GPU");
    cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
    for (const blas::LtCandidate& cand : all) {
      if ((last = enqueue(cand.algo)) == CUBLAS_STATUS_SUCCESS) return cand;
    }
    rethrow_lt_error(blas::LtError(last, fmt::format("cublasLtMatmul refused each of the {} block-scaled algorithm(s) of the heuristic: {}",
                                                     all.size(), cublasLtGetStatusString(last))));
  }

  // The CPU quantiser on the very bf16 values the GPU read, against what the GPU wrote. Sets
  // v.detail (and leaves passed false) at the first difference.
  BlockScaled check_quantiser(const Operand& o, const char* name, Verification& v) {
    const std::size_t elems = static_cast<std::size_t>(o.rows * p_.k);
    std::vector<std::uint16_t> src(elems);
    std::vector<std::uint8_t> values(o.values.bytes()), scales(o.scales.bytes());
    GPUBENCH_CUDA_CHECK(cudaMemcpy(src.data(), o.src.get(), elems * 2, cudaMemcpyDeviceToHost));
    GPUBENCH_CUDA_CHECK(cudaMemcpy(values.data(), o.values.get(), values.size(), cudaMemcpyDeviceToHost));
    GPUBENCH_CUDA_CHECK(cudaMemcpy(scales.data(), o.scales.get(), scales.size(), cudaMemcpyDeviceToHost));
    float t = 1.0f;
    if (format_ == BlockFormat::Nvfp4) GPUBENCH_CUDA_CHECK(cudaMemcpy(&t, tensor_scale(o), sizeof t, cudaMemcpyDeviceToHost));
    std::vector<float> in(elems);
    for (std::size_t i = 0; i < elems; ++i) in[i] = kernels::bfloat16_bits_to_float(src[i]);
    BlockScaled q = kernels::quantize(format_, in.data(), o.rows, p_.k);
    const std::int64_t bs = kernels::block_size(format_), per_value = format_ == BlockFormat::Mxfp8 ? 1 : 2;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != q.values[i]) {
        const std::int64_t col = static_cast<std::int64_t>(i) * per_value % p_.k, row = static_cast<std::int64_t>(i) * per_value / p_.k;
        v.detail = fmt::format("GPU quantiser differs from the CPU's: {} value byte {} (row {}, col {}): GPU 0x{:02x}, CPU 0x{:02x} "
                               "(input {})",
                               name, i, row, col, values[i], q.values[i], in[i]);
        return q;
      }
    }
    const std::int64_t cols = p_.k / bs;
    for (std::int64_t r = 0; r < o.rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::uint8_t gpu = scales[static_cast<std::size_t>(kernels::bq::block_scale_offset(r, c, cols))];
        const std::uint8_t cpu = q.scales[static_cast<std::size_t>(r * cols + c)];
        if (gpu != cpu) {
          v.detail = fmt::format("GPU quantiser differs from the CPU's: {} scale of row {}, block {}: GPU 0x{:02x}, CPU 0x{:02x}",
                                 name, r, c, gpu, cpu);
          return q;
        }
      }
    }
    if (std::memcmp(&t, &q.tensor_scale, sizeof t) != 0) {
      v.detail = fmt::format("GPU quantiser differs from the CPU's: {} tensor scale GPU {} CPU {}", name, t, q.tensor_scale);
    }
    return q;
  }

  // The rows `idx` of a quantised matrix (rows are independent: whole blocks, the same tensor scale).
  static BlockScaled rows_of(const BlockScaled& q, const std::vector<std::int64_t>& idx) {
    BlockScaled s = q;
    s.rows = static_cast<std::int64_t>(idx.size());
    const std::size_t vb = q.values.size() / static_cast<std::size_t>(q.rows), sb = q.scales.size() / static_cast<std::size_t>(q.rows);
    s.values.clear();
    s.scales.clear();
    for (std::int64_t r : idx) {
      s.values.insert(s.values.end(), q.values.begin() + static_cast<std::ptrdiff_t>(r * vb), q.values.begin() + static_cast<std::ptrdiff_t>((r + 1) * vb));
      s.scales.insert(s.scales.end(), q.scales.begin() + static_cast<std::ptrdiff_t>(r * sb), q.scales.begin() + static_cast<std::ptrdiff_t>((r + 1) * sb));
    }
    return s;
  }
  // Up to 64 indices spread over [0, n), first and last included.
  static std::vector<std::int64_t> spread(std::int64_t n) {
    std::vector<std::int64_t> out;
    const std::int64_t count = std::min<std::int64_t>(n, 64);
    for (std::int64_t i = 0; i < count; ++i) out.push_back(count == 1 ? 0 : i * (n - 1) / (count - 1));
    return out;
  }

  // D (column-major bf16) on a slice against emulated_gemm, with the gemm suite's tolerance
  // model (gemm_reference.hpp): 8 (u_out |ref| + u_acc sqrt(k) S), S = sqrt(sum of squared
  // products), u from gemm_unit_roundoff (fp8 Tensor Core accumulation, bf16 output).
  void check_d(const BlockScaled& qa, const BlockScaled& qb, Verification& v) {
    const std::vector<std::int64_t> rows = spread(p_.m), cols = spread(p_.n);
    const BlockScaled sa = rows_of(qa, rows), sb = rows_of(qb, cols);
    const std::vector<double> ref = kernels::emulated_gemm(sa, sb);
    std::vector<std::uint16_t> d(static_cast<std::size_t>(p_.m * p_.n));
    GPUBENCH_CUDA_CHECK(cudaMemcpy(d.data(), d_.get(), d.size() * 2, cudaMemcpyDeviceToHost));
    const kernels::GemmUnitRoundoff u = kernels::gemm_unit_roundoff(p_.precision);
    const std::vector<double> da = kernels::decode(sa), db = kernels::decode(sb);
    const std::size_t k = static_cast<std::size_t>(p_.k);
    v.passed = true;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (std::size_t j = 0; j < cols.size(); ++j) {
        double s2 = 0;
        for (std::size_t t = 0; t < k; ++t) {
          const double prod = da[i * k + t] * db[j * k + t];
          s2 += prod * prod;
        }
        const double expect = p_.alpha * ref[i * cols.size() + j];
        const double got = kernels::bfloat16_bits_to_float(d[static_cast<std::size_t>(rows[i] + cols[j] * p_.m)]);
        const double tol = 8 * (u.u_out * std::fabs(expect) + u.u_acc * std::sqrt(static_cast<double>(p_.k)) * std::fabs(p_.alpha) * std::sqrt(s2)) +
                           std::numeric_limits<double>::min();
        const double err = std::fabs(got - expect) / tol;
        ++v.checked;
        if (!(err <= 1.0) && v.passed) {
          v.passed = false;
          v.detail = fmt::format("D({}, {}) = {}, emulated GEMM {} (tolerance {:.3g})", rows[i], cols[j], got, expect, tol);
        }
        if (std::isfinite(err)) v.max_error = std::max(v.max_error, err);
      }
    }
  }

  // The GEMM alone and the GEMM after quantising both inputs, each the best of 3 batches of a
  // run count sized to about 20 ms, measured in pairs by this case (the headline GEMM time is
  // the harness's; these two make the overhead a like-for-like ratio).
  void time_with_quantize() {
    cuda::Event start, stop;
    auto batch = [&](bool with_quantize, int reps) {
      start.record(stream());
      for (int r = 0; r < reps; ++r) {
        if (with_quantize) quantize();
        gemm();
      }
      stop.record(stream());
      return cuda::Event::elapsed_ms(start, stop) * 1e-3 / reps;
    };
    const double estimate = std::max(batch(true, 1), 1e-7);
    const int reps = static_cast<int>(std::clamp(std::ceil(20e-3 / estimate), 1.0, 1000.0));
    gemm_s_ = with_quantize_s_ = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 3; ++i) {
      gemm_s_ = std::min(gemm_s_, batch(false, reps));
      with_quantize_s_ = std::min(with_quantize_s_, batch(true, reps));
    }
  }

  GemmProblem p_;
  BlockFormat format_;
  Operand a_, b_;
  cuda::DeviceBuffer d_, small_, workspace_;
  std::unique_ptr<blas::LtHandle> handle_;
  std::unique_ptr<blas::LtMatmul> matmul_;
  blas::LtCandidate algo_{};
  double gemm_s_ = 0, with_quantize_s_ = 0;
};

}  // namespace

std::unique_ptr<Case> make_blockscaled_case(const DeviceInfo& device, const GemmCaseSpec& spec) {
  return std::make_unique<BlockScaledGemmCase>(device, spec);
}

}  // namespace gpubench::suites::gemm
