#include "kernels/memory/host_fma.hpp"

#include <immintrin.h>

#include <cmath>

#include "kernels/common/random.hpp"

namespace gpubench::kernels {
namespace {

// Chains per thread: at least (FMA ports x latency) vectors in flight; 2 ports x 4 cycles on
// current x86 cores, with headroom, within the 32 (AVX-512) or 16 (AVX2, SSE2) registers.
constexpr int kChains512 = 16;
constexpr int kChains256 = 12;
constexpr int kChains128 = 12;

bool has_avx512() { return __builtin_cpu_supports("avx512f"); }
bool has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

// The chain loop for one vector type: load the start values, run `iterations` steps on every
// chain, store the final values. A macro, not a lambda, so it inherits the enclosing function's
// target attribute (lambdas do not, and the intrinsics would not inline).
#define GPUBENCH_FMA_CHAINS(Vec, T, Lanes, Chains, Set1, LoadU, StoreU, Step)              \
  do {                                                                                     \
    T buf[(Chains) * (Lanes)];                                                             \
    for (int j = 0; j < (Chains) * (Lanes); ++j) buf[j] = static_cast<T>(host_fma_start(j)); \
    const Vec va = Set1(static_cast<T>(kHostFmaA)), vb = Set1(static_cast<T>(kHostFmaB));  \
    Vec x[Chains];                                                                         \
    _Pragma("GCC unroll 16") for (int k = 0; k < (Chains); ++k) x[k] = LoadU(buf + k * (Lanes)); \
    for (std::int64_t it = 0; it < iterations; ++it) {                                     \
      _Pragma("GCC unroll 16") for (int k = 0; k < (Chains); ++k) x[k] = Step(x[k], va, vb); \
    }                                                                                      \
    _Pragma("GCC unroll 16") for (int k = 0; k < (Chains); ++k) StoreU(buf + k * (Lanes), x[k]); \
    for (int j = 0; j < (Chains) * (Lanes); ++j) out[j] = buf[j];                          \
  } while (0)

inline __m128 mul_add_ps(__m128 x, __m128 a, __m128 b) { return _mm_add_ps(_mm_mul_ps(x, a), b); }
inline __m128d mul_add_pd(__m128d x, __m128d a, __m128d b) { return _mm_add_pd(_mm_mul_pd(x, a), b); }

__attribute__((target("avx512f"))) void run_avx512(HostFmaType type, std::int64_t iterations, double* out) {
  if (type == HostFmaType::F32) {
    GPUBENCH_FMA_CHAINS(__m512, float, 16, kChains512, _mm512_set1_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps);
  } else {
    GPUBENCH_FMA_CHAINS(__m512d, double, 8, kChains512, _mm512_set1_pd, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_fmadd_pd);
  }
}

__attribute__((target("avx2,fma"))) void run_avx2(HostFmaType type, std::int64_t iterations, double* out) {
  if (type == HostFmaType::F32) {
    GPUBENCH_FMA_CHAINS(__m256, float, 8, kChains256, _mm256_set1_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps);
  } else {
    GPUBENCH_FMA_CHAINS(__m256d, double, 4, kChains256, _mm256_set1_pd, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_fmadd_pd);
  }
}

void run_sse2(HostFmaType type, std::int64_t iterations, double* out) {
  if (type == HostFmaType::F32) {
    GPUBENCH_FMA_CHAINS(__m128, float, 4, kChains128, _mm_set1_ps, _mm_loadu_ps, _mm_storeu_ps, mul_add_ps);
  } else {
    GPUBENCH_FMA_CHAINS(__m128d, double, 2, kChains128, _mm_set1_pd, _mm_loadu_pd, _mm_storeu_pd, mul_add_pd);
  }
}

}  // namespace

HostFmaPath host_fma_path(HostFmaType type) {
  const bool f32 = type == HostFmaType::F32;
  if (has_avx512()) return {"avx512f", f32 ? 16 : 8, kChains512, true};
  if (has_avx2_fma()) return {"avx2+fma", f32 ? 8 : 4, kChains256, true};
  return {"sse2", f32 ? 4 : 2, kChains128, false};
}

double host_fma_flops(const HostFmaPath& path, std::int64_t iterations) {
  return 2.0 * path.chains * path.lanes * static_cast<double>(iterations);
}

double host_fma_start(std::int64_t j) { return uniform_value(0xFA, static_cast<std::uint64_t>(j)); }

void host_fma_run(HostFmaType type, std::int64_t iterations, double* out) {
  if (has_avx512()) return run_avx512(type, iterations, out);
  if (has_avx2_fma()) return run_avx2(type, iterations, out);
  run_sse2(type, iterations, out);
}

double host_fma_reference(HostFmaType type, const HostFmaPath& path, std::int64_t j, std::int64_t iterations) {
  if (type == HostFmaType::F32) {
    const float a = static_cast<float>(kHostFmaA), b = static_cast<float>(kHostFmaB);
    volatile float x = static_cast<float>(host_fma_start(j));  // volatile: no contraction, no folding
    for (std::int64_t i = 0; i < iterations; ++i) {
      if (path.fused) {
        x = std::fma(x, a, b);
      } else {
        const float p = x * a;
        volatile float pv = p;
        x = pv + b;
      }
    }
    return x;
  }
  volatile double x = host_fma_start(j);
  for (std::int64_t i = 0; i < iterations; ++i) {
    if (path.fused) {
      x = std::fma(x, kHostFmaA, kHostFmaB);
    } else {
      volatile double pv = x * kHostFmaA;
      x = pv + kHostFmaB;
    }
  }
  return x;
}

}  // namespace gpubench::kernels
