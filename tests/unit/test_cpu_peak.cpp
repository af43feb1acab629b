// The CPU's theoretical peak (bench/core/cpu_peak.hpp): cores x 2 FMA units x lanes x 2 x the
// clock bound, from synthetic /proc/cpuinfo and cpufreq reports.
#include <gtest/gtest.h>

#include <string>

#include "bench/core/cpu_peak.hpp"
#include "bench/core/device.hpp"

namespace gpubench {
namespace {

// One /proc/cpuinfo block per (physical id, core id) of `cores`, with `flags`.
std::string cpuinfo(const std::vector<std::pair<int, int>>& cores, const std::string& flags, const std::string& model,
                    const std::string& mhz) {
  std::string out;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    out += "processor\t: " + std::to_string(i) + "\n";
    out += "vendor_id\t: AuthenticAMD\n";
    out += "model name\t: " + model + "\n";
    if (!mhz.empty()) out += "cpu MHz\t\t: " + mhz + "\n";
    if (cores[i].first >= 0) {
      out += "physical id\t: " + std::to_string(cores[i].first) + "\n";
      out += "core id\t\t: " + std::to_string(cores[i].second) + "\n";
    }
    out += "flags\t\t: " + flags + "\n\n";
  }
  return out;
}

const std::string kAvx512 = "fpu sse sse2 ssse3 fma avx avx2 avx512f avx512dq avx512vl";
const std::string kAvx2 = "fpu sse sse2 fma avx avx2";

TEST(CpuPeak, ThisBuildVmKind) {
  // 2 vCPUs of an AMD EPYC with AVX-512, no cpufreq, cpu MHz 2596.138 (the host's nominal):
  // 2 x 2 x 16 x 2 x (2 x 2596.138 MHz) = 0.6646 TFLOP/s fp32, half that fp64.
  CpuReport r;
  r.cpuinfo = cpuinfo({{0, 0}, {0, 1}}, kAvx512, "AMD EPYC", "2596.138");
  const CpuPeak p = derive_cpu_peak(r);
  ASSERT_EQ(p.tflops.count("fp32"), 1u) << p.derivation;
  EXPECT_NEAR(p.tflops.at("fp32"), 2 * 2 * 16 * 2 * 2 * 2596.138e6 / 1e12, 1e-12);
  EXPECT_NEAR(p.tflops.at("fp64"), p.tflops.at("fp32") / 2, 1e-12);
  for (const char* part : {"2 cores", "2 FMA units per core (assumed", "16 fp32 lanes", "512-bit avx512f",
                           "cpu MHz 2596 MHz", "2.0 boost allowance", "5192 MHz"}) {
    EXPECT_NE(p.derivation.find(part), std::string::npos) << part << ": " << p.derivation;
  }
}

TEST(CpuPeak, ADriverThatReportsTheBoostMaximumIsTakenAsIs) {
  // 2 cores with 2 SMT threads each (core ids repeat): 2 cores, not 4. intel_pstate's 3.8 GHz.
  CpuReport r;
  r.cpuinfo = cpuinfo({{0, 0}, {0, 0}, {0, 1}, {0, 1}}, kAvx512, "Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz", "2000.000");
  r.max_freq_khz = 3800000;
  r.scaling_driver = "intel_pstate";
  const CpuPeak p = derive_cpu_peak(r);
  EXPECT_NEAR(p.tflops.at("fp32"), 2 * 2 * 16 * 2 * 3.8e9 / 1e12, 1e-12) << p.derivation;
  EXPECT_NE(p.derivation.find("intel_pstate"), std::string::npos) << p.derivation;
  EXPECT_NE(p.derivation.find("2 cores (2 distinct physical id/core id of 4 processors)"), std::string::npos)
      << p.derivation;
  r.scaling_driver = "amd-pstate-epp";
  EXPECT_NEAR(derive_cpu_peak(r).tflops.at("fp32"), 2 * 2 * 16 * 2 * 3.8e9 / 1e12, 1e-12);
}

TEST(CpuPeak, AClockThatMayBeTheBaseGetsTheAllowanceCappedAtTheFastestX86) {
  // acpi-cpufreq stops at the base clock on boosting parts: 3.6 GHz x 2 = 7.2, capped at 6.2 GHz.
  CpuReport r;
  r.cpuinfo = cpuinfo({{0, 0}, {0, 1}, {0, 2}, {0, 3}}, kAvx2, "AMD Ryzen 7 3700X 8-Core Processor", "2200.000");
  r.max_freq_khz = 3600000;
  r.scaling_driver = "acpi-cpufreq";
  CpuPeak p = derive_cpu_peak(r);
  EXPECT_NEAR(p.tflops.at("fp32"), 4 * 2 * 8 * 2 * 6.2e9 / 1e12, 1e-12) << p.derivation;
  EXPECT_NE(p.derivation.find("256-bit avx2/fma"), std::string::npos) << p.derivation;
  // Only the model name's clock (no cpu MHz, no cpufreq): 2.10 GHz x 2.
  r = CpuReport{};
  r.cpuinfo = cpuinfo({{0, 0}, {1, 0}}, kAvx512, "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz", "");
  p = derive_cpu_peak(r);
  EXPECT_NEAR(p.tflops.at("fp32"), 2 * 2 * 16 * 2 * 4.2e9 / 1e12, 1e-12) << p.derivation;
  EXPECT_NE(p.derivation.find("the model name's 2100 MHz"), std::string::npos) << p.derivation;
  // A reported clock above the cap is never lowered by it.
  r.cpuinfo = cpuinfo({{0, 0}}, kAvx2, "Overclocked", "7000.0");
  EXPECT_NEAR(derive_cpu_peak(r).tflops.at("fp32"), 1 * 2 * 8 * 2 * 7.0e9 / 1e12, 1e-12);
}

TEST(CpuPeak, WithoutCoreIdsTheProcessorsCountAndSseIsFourLanes) {
  CpuReport r;
  r.cpuinfo = cpuinfo({{-1, 0}, {-1, 0}, {-1, 0}}, "fpu sse sse2", "Old CPU", "3000.0");
  const CpuPeak p = derive_cpu_peak(r);
  EXPECT_NEAR(p.tflops.at("fp32"), 3 * 2 * 4 * 2 * 6.0e9 / 1e12, 1e-12) << p.derivation;
  EXPECT_NEAR(p.tflops.at("fp64"), 3 * 2 * 2 * 2 * 6.0e9 / 1e12, 1e-12);
  EXPECT_NE(p.derivation.find("3 cores (the processors: no core ids)"), std::string::npos) << p.derivation;
}

TEST(CpuPeak, WhatCannotBeDerivedSaysWhyAndGivesNoPeak) {
  CpuReport arm;
  arm.cpuinfo = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes sve\nCPU implementer\t: 0x41\n\n";
  CpuPeak p = derive_cpu_peak(arm);
  EXPECT_TRUE(p.tflops.empty());
  EXPECT_EQ(p.derivation.rfind("not derived: no x86 vector flags", 0), 0u) << p.derivation;
  EXPECT_TRUE(derive_cpu_peak(CpuReport{}).tflops.empty());
  CpuReport no_clock;
  no_clock.cpuinfo = cpuinfo({{0, 0}}, kAvx2, "Some CPU", "");
  p = derive_cpu_peak(no_clock);
  EXPECT_TRUE(p.tflops.empty());
  EXPECT_NE(p.derivation.find("no clock"), std::string::npos) << p.derivation;
}

// This machine's own: an x86 build host gets a peak, recorded on the CPU device.
TEST(CpuPeak, ThisMachineDescribesItsCpuWithThePeak) {
  const DeviceInfo cpu = describe_cpu();
  EXPECT_FALSE(cpu.peak_derivation.empty());
#if defined(__x86_64__)
  ASSERT_TRUE(cpu.peak_tflops.count("fp32")) << cpu.peak_derivation;
  EXPECT_GT(cpu.peak_tflops.at("fp32"), 0);
#endif
}

}  // namespace
}  // namespace gpubench
