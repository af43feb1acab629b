#pragma once
// The CPU's theoretical peak, an upper bound on what any CPU case can do (docs/plausibility.md):
//
//   peak = cores x FMA units per core x SIMD lanes x 2 FLOP (a multiply-add) x the clock bound
//
// from what the machine reports, recorded in the results file's context (the CPU device's
// peak_tflops and peak_derivation) and judged by reports/plausibility. Every factor is chosen
// so that the product is never below what the CPU can do, so a correct figure is never suspect:
//  - cores: the physical cores of /proc/cpuinfo (distinct physical id, core id pairs; the
//    processors where those are missing), all of them, whatever the case's threads;
//  - FMA units per core: 2, which the kernel does not report. No x86 core issues more than two
//    vector FMAs per cycle: Intel Haswell and later (2 x 256-bit, 2 x 512-bit on Xeon Gold 6xxx /
//    Platinum and later), AMD Zen 1 to 5 (two FMA pipes; Zen 1 128-bit and Zen 4 256-bit pipes,
//    counted here at the ISA's width, so twice their real rate). Cores with one AVX-512 FMA
//    unit (Xeon Silver, Bronze) and SSE-only cores (a separate multiplier and adder) are
//    overcounted, never undercounted;
//  - SIMD lanes: the widest vector ISA in the flags (avx512f 512 bits, avx/avx2 256, sse2 128)
//    over the element width (fp32 4 bytes, fp64 8);
//  - clock bound: cpufreq's cpuinfo_max_freq where its driver reports the boost maximum
//    (intel_pstate, intel_cpufreq, amd-pstate*); otherwise (acpi-cpufreq, which reports the
//    base clock on boosting parts, a virtual machine without cpufreq, where "cpu MHz" is the
//    host's nominal clock, the model name's "@ x.xxGHz", the base clock) the largest reported
//    clock times kBoostAllowance (the largest boost over base of current server parts is about
//    1.9x: Xeon Platinum 8480+ 2.0 -> 3.8 GHz), capped at kFastestX86Mhz (no x86 part boosts
//    higher: Core i9-14900KS, 6.2 GHz) but never below the reported clock.
// Non-x86 CPUs (no avx512f/avx/sse2 flag) get no peak, with the reason.
#include <map>
#include <optional>
#include <string>

namespace gpubench {

inline constexpr double kBoostAllowance = 2.0;
inline constexpr double kFastestX86Mhz = 6200;
inline constexpr int kFmaUnitsPerCore = 2;

// What the machine reports, as text (so the derivation is testable with any machine's files).
struct CpuReport {
  std::string cpuinfo;                  // /proc/cpuinfo
  std::optional<double> max_freq_khz;   // the largest /sys/devices/system/cpu/cpu*/cpufreq/cpuinfo_max_freq
  std::string scaling_driver;           // cpufreq's scaling_driver ("intel_pstate", "acpi-cpufreq"), or empty
};

struct CpuPeak {
  std::map<std::string, double> tflops;  // by peak key: "fp32", "fp64"; empty when not derived
  std::string derivation;                // how, in one line (or why not)
};

// The peak from a report (pure; unit-tested with synthetic reports).
CpuPeak derive_cpu_peak(const CpuReport& report);
// This machine's report: /proc/cpuinfo and cpufreq (what is missing stays empty).
CpuReport read_cpu_report();

}  // namespace gpubench
