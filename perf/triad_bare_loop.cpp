// The bare reference for the CPU triad: a plain OpenMP loop, compiled with -O3 -march=native
// (perf/CMakeLists.txt sets the flags on this file only), the way a STREAM build would be.
#include <cstddef>

namespace bare {

void init(double* a, double* b, double* c, std::size_t n) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.5;
  }
}

void triad(double* __restrict a, const double* __restrict b, const double* __restrict c, double s, std::size_t n) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace bare
