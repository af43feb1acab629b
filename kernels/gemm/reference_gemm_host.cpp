// check_gemm_on_device: the device reference and compare kernels with their temporary buffers.
#include <cstring>
#include <sstream>

#include "kernels/gemm/reference_gemm.cuh"

namespace gpubench::kernels {

cudaError_t check_gemm_on_device(const ReferenceGemmArgs& args, const DeviceMatrix& d, cudaStream_t stream,
                                 GemmCheckResult* result) {
  const std::size_t entries = static_cast<std::size_t>(args.m * args.n * args.batch);
  double* ref = nullptr;
  float* tol = nullptr;
  DeviceCheckCounters* counters = nullptr;
  DeviceCheckCounters host{};
  cudaError_t err = cudaMallocAsync(reinterpret_cast<void**>(&ref), entries * sizeof(double), stream);
  if (err == cudaSuccess) err = cudaMallocAsync(reinterpret_cast<void**>(&tol), entries * sizeof(float), stream);
  if (err == cudaSuccess) err = cudaMallocAsync(reinterpret_cast<void**>(&counters), sizeof(DeviceCheckCounters), stream);
  if (err == cudaSuccess) err = cudaMemsetAsync(counters, 0, sizeof(DeviceCheckCounters), stream);
  if (err == cudaSuccess) err = launch_reference_gemm(args, ref, tol, stream);
  if (err == cudaSuccess) err = launch_gemm_compare(d, args.m, args.n, args.batch, ref, tol, counters, stream);
  if (err == cudaSuccess) err = cudaMemcpyAsync(&host, counters, sizeof(host), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  // Free whatever was allocated, keeping the first error.
  for (void* p : {static_cast<void*>(ref), static_cast<void*>(tol), static_cast<void*>(counters)})
    if (p != nullptr) cudaFreeAsync(p, stream);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) return err;
  if (sync != cudaSuccess) return sync;

  GemmCheckResult r;
  r.checked = static_cast<std::int64_t>(host.checked);
  float max_error = 0;
  std::memcpy(&max_error, &host.max_error_bits, sizeof(float));
  r.max_error = max_error;
  r.passed = host.failed == 0 && host.checked == entries;
  if (host.checked != entries) {
    r.detail = "the compare kernel checked " + std::to_string(host.checked) + " of " + std::to_string(entries) + " entries";
  } else if (host.failed != 0 && host.first_recorded) {
    const std::int64_t mn = args.m * args.n;
    const std::int64_t b = host.first_index / mn, rest = host.first_index % mn;
    std::ostringstream os;
    os.precision(9);
    os << host.failed << " of " << entries << " entries beyond tolerance, e.g. D(" << rest % args.m << "," << rest / args.m
       << ")";
    if (args.batch > 1) os << " of batch " << b;
    os << " = " << host.first_got << ", expected " << host.first_ref << " (tolerance " << host.first_tol << ")";
    r.detail = os.str();
  }
  *result = r;
  return cudaSuccess;
}

}  // namespace gpubench::kernels
