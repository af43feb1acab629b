// The epilogue math shared by the GEMM reference and the separate elementwise kernel, and the
// harness's derived GEMM metrics (TOP/s, intensity, achieved bandwidth, % of peak at clock).
#include <gtest/gtest.h>

#include <cmath>

#include "bench/core/harness.hpp"
#include "kernels/gemm/epilogue_reference.hpp"

namespace gpubench {
namespace {

TEST(GemmEpilogue, GeluTanhForm) {
  EXPECT_EQ(kernels::gelu_tanh(0.0), 0.0);
  // 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.841192 (hand-computed).
  EXPECT_NEAR(kernels::gelu_tanh(1.0), 0.841192, 1e-6);
  EXPECT_NEAR(kernels::gelu_tanh(-1.0), -0.158808, 1e-6);
  EXPECT_NEAR(kernels::gelu_tanh(10.0), 10.0, 1e-12);  // identity for large x
  EXPECT_NEAR(kernels::gelu_tanh(-10.0), 0.0, 1e-12);  // zero for very negative x
  // Within 5e-4 of the erf form x * Phi(x) everywhere we sampled.
  for (double x = -6; x <= 6; x += 0.01) {
    const double erf_form = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    EXPECT_NEAR(kernels::gelu_tanh(x), erf_form, 5e-4) << x;
  }
}

TEST(GemmEpilogue, BiasThenActivation) {
  EXPECT_EQ(kernels::apply_epilogue(1.5, 0.25, true, false), 1.75);
  EXPECT_EQ(kernels::apply_epilogue(1.5, 0.25, false, false), 1.5);  // bias ignored when off
  EXPECT_DOUBLE_EQ(kernels::apply_epilogue(0.75, 0.25, true, true), kernels::gelu_tanh(1.0));
  EXPECT_DOUBLE_EQ(kernels::apply_epilogue(1.0, 7.0, false, true), kernels::gelu_tanh(1.0));
}

TEST(DeriveMetrics, GemmFieldsAndClockScaling) {
  Metrics m;
  m.flops = 2e12;
  m.bytes = 4e9;
  m.peak_key = "int8_tensor";
  m.integer_ops = true;
  m.footprint_bytes = 5e9;
  m.extra["algorithm"] = "id=1";
  // 2e12 ops in 10 ms = 200 TOP/s of a 1000 TOP/s peak; the SM clock ran at 3/4 of the boost.
  auto j = derive_metrics(m, 0.01, 1000.0, ClockScale{1500, 2000});
  EXPECT_EQ(j["rate_unit"], "TOP/s");
  EXPECT_DOUBLE_EQ(j["tflops"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(j["intensity"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(j["achieved_gbps"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(j["footprint_bytes"].get<double>(), 5e9);
  EXPECT_DOUBLE_EQ(j["pct_of_peak"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(j["peak_at_clock"].get<double>(), 750.0);
  EXPECT_NEAR(j["pct_of_peak_at_clock"].get<double>(), 200.0 / 750.0 * 100, 1e-9);
  EXPECT_EQ(j["algorithm"], "id=1");
  EXPECT_FALSE(j.contains("gbps"));  // a GEMM's traffic is not its headline rate

  m.integer_ops = false;
  j = derive_metrics(m, 0.01, std::nullopt, ClockScale{1500, 2000});
  EXPECT_EQ(j["rate_unit"], "TFLOP/s");
  EXPECT_FALSE(j.contains("pct_of_peak_at_clock"));  // no peak, nothing to scale
  EXPECT_DOUBLE_EQ(j["sm_clock_mhz"].get<double>(), 1500.0);
}

TEST(DeriveMetrics, MeasuredClockComesFromAnInstrument) {
  EXPECT_FALSE(measured_sm_clock(nlohmann::ordered_json::object()));
  nlohmann::ordered_json profile = {{"nvtx", {{"ranges", 4}}}, {"telemetry", {{"sm_clock_mhz", {{"min", 1700.0}, {"mean", 1755.5}}}}}};
  EXPECT_EQ(measured_sm_clock(profile), 1755.5);
  profile["telemetry"]["sm_clock_mhz"]["mean"] = 0;  // no sample: no clock
  EXPECT_FALSE(measured_sm_clock(profile));
}

}  // namespace
}  // namespace gpubench
