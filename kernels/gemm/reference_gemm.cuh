#pragma once
// Device reference GEMM for verifying large problems on EVERY output entry (the CPU reference
// of gemm_reference.hpp checks a sample). Math, per entry (i, j) of batch b:
//   ref = alpha * sum_l A(i, l) B(l, j) + beta * C(i, j)     products and sums in fp64
//   tol = gemm_tolerance(u, k, ref, |alpha| sqrt(sum_l (A(i,l) B(l,j))^2), beta C(i, j))
// the same tolerance model as the CPU check (gemm_tolerance.hpp). fp64 keeps the reference's
// own error far below any tolerance (products of fp32 or 16-bit values are exact in fp64); a
// 16x16-tiled kernel computes 4096^3 in tens of milliseconds even at 1/64-rate fp64.
//
// Operands are described by strides, so transposed, padded and batched layouts use the same
// kernels: element (i, j) of batch b is data[b * batch_stride + i * row_stride + j * col_stride]
// (column-major with leading dimension ld: row_stride 1, col_stride ld; transposed: swapped).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/common/float_formats.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench::kernels {

struct DeviceMatrix {
  const void* data = nullptr;
  Storage storage = Storage::F32;
  std::int64_t row_stride = 1, col_stride = 0, batch_stride = 0;
};

// Column-major rows x cols, leading dimension `rows`.
inline DeviceMatrix column_major(const void* data, Storage storage, std::int64_t rows) {
  return {data, storage, 1, rows, 0};
}

struct ReferenceGemmArgs {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  double alpha = 1, beta = 0;
  DeviceMatrix a, b;
  DeviceMatrix c;  // read only when beta != 0
  GemmUnitRoundoff u{};
};

// Writes ref and tol of every entry to compact column-major buffers of m*n*batch elements:
// entry (i, j) of batch b at b*m*n + i + j*m.
cudaError_t launch_reference_gemm(const ReferenceGemmArgs& args, double* ref, float* tol, cudaStream_t stream);

// What the compare kernel found. Zero-initialise before the launch.
struct DeviceCheckCounters {
  unsigned long long checked;
  unsigned long long failed;       // entries with |D - ref| > tol (NaN and inf count)
  unsigned int max_error_bits;     // float bits of the largest |D - ref| / tol (+inf for NaN)
  int first_recorded;              // 1 once first_* describe a failing entry
  long long first_index;           // its index in the compact layout above
  double first_got, first_ref, first_tol;
};

// Compares D (m x n x batch, described by `d`) with ref/tol; accumulates into `counters`
// (device memory).
cudaError_t launch_gemm_compare(const DeviceMatrix& d, std::int64_t m, std::int64_t n, std::int64_t batch,
                                const double* ref, const float* tol, DeviceCheckCounters* counters,
                                cudaStream_t stream);

// Both, with temporary buffers (m*n*batch * 12 bytes, stream-ordered allocations), and the
// outcome as a GemmCheckResult (detail names the first failing entry). Synchronizes `stream`.
// Returns the first CUDA error (out of memory included); `result` is valid only on cudaSuccess.
cudaError_t check_gemm_on_device(const ReferenceGemmArgs& args, const DeviceMatrix& d, cudaStream_t stream,
                                 GemmCheckResult* result);

}  // namespace gpubench::kernels
