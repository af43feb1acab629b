#pragma once
// Device-side clock probe of the peak kernels (peak.cu, peak_wgmma.cu): block 0 thread 0 records
// SM cycles and globaltimer nanoseconds around its work, from which the host derives the SM
// clock during the run (cycles / ns GHz).

namespace gpubench::kernels {

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct ClockProbe {
  long long c0 = 0;
  unsigned long long t0 = 0;
  bool on = false;
  __device__ explicit ClockProbe(unsigned long long* out) : on(out != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
    if (on) {
      t0 = global_ns();
      c0 = clock64();
    }
  }
  __device__ void finish(unsigned long long* out) const {
    if (!on) return;
    const long long c1 = clock64();
    const unsigned long long t1 = global_ns();
    out[0] = static_cast<unsigned long long>(c1 - c0);
    out[1] = t1 - t0;
  }
};

}  // namespace gpubench::kernels
