#pragma once
// CPU arithmetic peak: independent chains of vector fused multiply-adds x = x * a + b, enough of
// them to cover the FMA latency on every FMA port, and no memory traffic. The widest path the
// CPU offers is chosen at run time (AVX-512F, AVX2+FMA, or SSE2 multiply-then-add), so the
// build stays portable (no -march=native).
//
// Accounting: one call performs chains x lanes x iterations multiply-adds per thread, each 2
// FLOP (the SSE2 path uses a multiply and an add for the same 2 FLOP).
#include <cstdint>
#include <vector>

namespace gpubench::kernels {

enum class HostFmaType { F32, F64 };

struct HostFmaPath {
  const char* isa;  // "avx512f", "avx2+fma", "sse2"
  int lanes;        // elements per vector
  int chains;       // independent vectors per thread
  bool fused;       // true: one rounding per step (fma); false: multiply then add
};

// The path host_fma_run takes on this CPU.
HostFmaPath host_fma_path(HostFmaType type);

// FLOP of one host_fma_run per thread.
double host_fma_flops(const HostFmaPath& path, std::int64_t iterations);

// The per-lane inputs: start value of lane j (over all chains, j < chains*lanes), and the
// constants a and b (the same for every lane).
double host_fma_start(std::int64_t j);
inline constexpr double kHostFmaA = 0.999999;
inline constexpr double kHostFmaB = 0.001;

// Runs the chains for `iterations` steps on the calling thread and writes the final value of
// every lane (chains*lanes values) to `out`.
void host_fma_run(HostFmaType type, std::int64_t iterations, double* out);

// Reference: lane j's final value, computed one scalar step at a time the way `path` rounds.
double host_fma_reference(HostFmaType type, const HostFmaPath& path, std::int64_t j, std::int64_t iterations);

}  // namespace gpubench::kernels
