// The GPU peak kernels' host logic: which fp8 Tensor Core kernel runs where (and the skip
// reasons elsewhere), the Hopper fp8 wgmma loop's inputs and accounting, and the skip of a case
// whose binary has no code for the GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "bench/core/cuda_case.hpp"
#include "kernels/common/float_formats.hpp"
#include "kernels/memory/peak_inputs.hpp"
#include "kernels/memory/peak_reference.hpp"

namespace gpubench {
namespace {

using kernels::choose_fp8_peak;
using kernels::Fp8PeakPath;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Fp8Peak, NativeMmaSyncOnlyFromSm89OrSm12xCodeOnSuchAGpu) {
  EXPECT_EQ(choose_fp8_peak(89, 89, 0, "89-real").path, Fp8PeakPath::MmaSync);
  EXPECT_EQ(choose_fp8_peak(120, 120, 0, "120").path, Fp8PeakPath::MmaSync);
  EXPECT_EQ(choose_fp8_peak(121, 120, 0, "120").path, Fp8PeakPath::MmaSync);
  // An L40S running a `80-real;90` build gets sm_80 code: no fp8 mma there, so a skip that says
  // why (it used to write NaN and be recorded as failed).
  auto c = choose_fp8_peak(89, 80, 0, "80-real;90");
  EXPECT_EQ(c.path, Fp8PeakPath::None);
  EXPECT_TRUE(has(c.skip_reason, "no sm_89 code")) << c.skip_reason;
  EXPECT_TRUE(has(c.skip_reason, "sm_80 code")) << c.skip_reason;
  EXPECT_TRUE(has(c.skip_reason, "80-real;90")) << c.skip_reason;
  // compute_90 PTX JIT-compiled for a Blackwell workstation GPU: still the non-native branch.
  EXPECT_EQ(choose_fp8_peak(120, 90, 0, "80-real;90").path, Fp8PeakPath::None);
  EXPECT_TRUE(has(choose_fp8_peak(89, 0, 0, "80-real;90").skip_reason, "no code for this GPU"));
}

TEST(Fp8Peak, HopperUsesWgmmaFromSm90aCodeAndNeverTheEmulatedMmaSync) {
  EXPECT_EQ(choose_fp8_peak(90, 90, 90, "80-real;90").path, Fp8PeakPath::Wgmma);
  auto c = choose_fp8_peak(90, 90, 0, "80-real;90");  // a build without sm_90a code
  EXPECT_EQ(c.path, Fp8PeakPath::None);
  EXPECT_TRUE(has(c.skip_reason, "sm_90a")) << c.skip_reason;
  EXPECT_TRUE(has(c.skip_reason, "emulated")) << c.skip_reason;
  // wgmma code exists only for sm_90 exactly.
  EXPECT_EQ(choose_fp8_peak(100, 100, 90, "100-real").path, Fp8PeakPath::None);
}

TEST(Fp8Peak, OtherGpusSkipWithTheReason) {
  auto c = choose_fp8_peak(80, 80, 0, "80-real;90");
  EXPECT_EQ(c.path, Fp8PeakPath::None);
  EXPECT_TRUE(has(c.skip_reason, "8.9 or newer")) << c.skip_reason;
  c = choose_fp8_peak(100, 100, 0, "100-real");  // B200: mma.sync fp8 is emulated, tcgen05 not implemented
  EXPECT_EQ(c.path, Fp8PeakPath::None);
  EXPECT_TRUE(has(c.skip_reason, "sm_100")) << c.skip_reason;
  EXPECT_TRUE(has(c.skip_reason, "tcgen05")) << c.skip_reason;
  EXPECT_FALSE(kernels::native_fp8_mma_arch(90));
  EXPECT_FALSE(kernels::native_fp8_mma_arch(100));
  EXPECT_TRUE(kernels::native_fp8_mma_arch(89));
}

// Every 32-bit A register of the wgmma fp8 loop holds 4 values whose k sum to the warpgroup's T
// (so every row of A sums to T whatever the fragment layout), every value exact in e4m3, and
// the values are random otherwise.
TEST(Fp8Peak, WgmmaInputsKeepEveryPartialSumExact) {
  std::set<int> ts;
  for (std::int64_t group : {0, 1, 7, 1000, 123456}) {
    const int t = kernels::wgmma_fp8_register_sum(group);
    ts.insert(t);
    EXPECT_TRUE(t == 1 || t == -1 || t == 2 || t == -2 || t == 4 || t == -4) << t;
    std::set<int> values;
    double a_sum = 0;
    for (int lane = 0; lane < kernels::kWgmmaALanes; ++lane) {
      for (int r = 0; r < 4; ++r) {
        int sum = 0;
        for (int i = 0; i < 4; ++i) {
          const int k = kernels::wgmma_fp8_a_integer(group, lane, 4 * r + i);
          EXPECT_LE(std::abs(k), 16);
          // k/8 survives a round trip through e4m3 (3 mantissa bits: every |k| <= 16 does).
          const float v = static_cast<float>(k) / 8.0f;
          EXPECT_EQ(kernels::round_to_storage(kernels::Storage::E4M3, v), static_cast<double>(v)) << k;
          values.insert(k);
          sum += k;
          a_sum += kernels::wgmma_fp8_a_value(group, lane, 4 * r + i);
        }
        EXPECT_EQ(sum, t);
      }
    }
    EXPECT_GT(values.size(), 8u);
    // sum(A) = 128 threads * 4 registers * T / 8; D per element = n * r * T after n wgmmas.
    EXPECT_DOUBLE_EQ(a_sum, 64.0 * t);
    // B is +r in even iterations and -r in odd ones: an odd count leaves one iteration's
    // kWgmmaPerIteration wgmmas in D, an even one nothing (the suite runs fp8 an odd count).
    for (const std::int64_t iterations : {std::int64_t{1}, std::int64_t{1025}}) {
      EXPECT_DOUBLE_EQ(kernels::wgmma_fp8_group_sum(group, iterations), kernels::kWgmmaPerIteration * 0.5 * t * 64 * 256);
      EXPECT_DOUBLE_EQ(kernels::wgmma_group_sum(kernels::MmaType::FP8, group, iterations),
                       kernels::wgmma_fp8_group_sum(group, iterations));
    }
    EXPECT_DOUBLE_EQ(kernels::wgmma_fp8_group_sum(group, 1024), 0.0);
  }
  EXPECT_GT(ts.size(), 2u);
  // Every D element stays within kWgmmaPerIteration * r * |T| <= 8 = 2^7 steps of 1/16 (a
  // product k/8 * r): exact in an accumulator of 8 bits or more. A D grown to 4096 wgmmas * T/2
  // was not exact on an H200 (peak_reference.hpp: Hopper keeps ~14 bits and aligns products to D).
  EXPECT_LE(kernels::kWgmmaPerIteration * 0.5 * 4 / (1.0 / 16), 128.0);
  EXPECT_EQ(kernels::net_iterations(kernels::MmaType::FP8, 1025), 1);
  EXPECT_EQ(kernels::net_iterations(kernels::MmaType::BF16, 1025), 1025);
}

// Issue 25 item 1: the wgmma loops of every Tensor Core type. Their checks are the same
// layout-free sum as fp8's: n * N * r * sum(A), with k/8 exact in fp16, bf16 and tf32 (s8: k).
TEST(WgmmaPeak, EveryTypeHasItsShapeFlopsAndExactSum) {
  using kernels::MmaType;
  EXPECT_EQ(kernels::wgmma_shape(MmaType::F16).k, 16);
  EXPECT_EQ(kernels::wgmma_shape(MmaType::BF16).a_per_lane, 8);
  EXPECT_EQ(kernels::wgmma_shape(MmaType::TF32).k, 8);
  EXPECT_EQ(kernels::wgmma_shape(MmaType::I8).a_per_lane, 16);
  for (MmaType t : {MmaType::F16, MmaType::BF16, MmaType::TF32, MmaType::I8, MmaType::FP8}) {
    const kernels::WgmmaShape s = kernels::wgmma_shape(t);
    // A is 64 x k, spread over the warpgroup's 128 threads.
    EXPECT_EQ(s.a_per_lane * kernels::kWgmmaALanes, kernels::kWgmmaM * s.k);
    EXPECT_DOUBLE_EQ(kernels::wgmma_flops(t, 10, 100), 10.0 * 100 * 4 * 2 * 64 * 256 * s.k);
    const std::int64_t group = 7, iterations = 1024;
    double a_sum = 0, biggest = 0;
    for (int lane = 0; lane < kernels::kWgmmaALanes; ++lane) {
      for (int e = 0; e < s.a_per_lane; ++e) {
        const double v = kernels::wgmma_a_value(t, group, lane, e);
        a_sum += v;
        biggest = std::max(biggest, std::fabs(v));
        if (t == MmaType::F16) {
          EXPECT_EQ(kernels::round_to_storage(kernels::Storage::F16, static_cast<float>(v)), v);
        }
        if (t == MmaType::BF16) {
          EXPECT_EQ(kernels::round_to_storage(kernels::Storage::BF16, static_cast<float>(v)), v);
        }
      }
    }
    EXPECT_DOUBLE_EQ(kernels::wgmma_group_sum(t, group, iterations),
                     static_cast<double>(kernels::net_iterations(t, iterations)) * 4 * 256 * kernels::mma_b_constant(t) * a_sum);
    // Every D element after n = 4096 wgmmas: at most n * r * k * max|A|, exact in fp32 (2^24) in
    // steps of r/8 (s32 for int8).
    const double bound = 4096.0 * kernels::mma_b_constant(t) * s.k * biggest;
    EXPECT_LT(t == MmaType::I8 ? bound : bound * 16, 16777216.0) << static_cast<int>(t);
  }
  EXPECT_EQ(kernels::tensor_peak_instruction(MmaType::TF32, true), "wgmma.mma_async m64n256k8");
  EXPECT_EQ(kernels::tensor_peak_instruction(MmaType::BF16, false), "mma.sync m16n8k16");
  EXPECT_TRUE(kernels::tensor_peak_uses_wgmma(90, true));
  EXPECT_FALSE(kernels::tensor_peak_uses_wgmma(90, false));
  EXPECT_FALSE(kernels::tensor_peak_uses_wgmma(80, true));
  EXPECT_FALSE(kernels::tensor_peak_uses_wgmma(100, true));
}

TEST(Fp8Peak, WgmmaFlops) {
  EXPECT_DOUBLE_EQ(kernels::wgmma_fp8_flops(10, 100), 10.0 * 100 * 4 * 2 * 64 * 256 * 32);
}

TEST(DeviceCode, MissingCodeIsASkipWithTheReason) {
  EXPECT_TRUE(is_missing_device_code(cudaErrorNoKernelImageForDevice));
  EXPECT_TRUE(is_missing_device_code(cudaErrorInvalidDeviceFunction));
  EXPECT_FALSE(is_missing_device_code(cudaErrorInvalidConfiguration));
  EXPECT_FALSE(is_missing_device_code(cudaErrorIllegalAddress));
  const std::string why = missing_device_code_reason(7, 0, "80-real;90");
  EXPECT_TRUE(has(why, "compute capability 7.0")) << why;
  EXPECT_TRUE(has(why, "80-real;90")) << why;
  EXPECT_TRUE(has(why, "70 in CMAKE_CUDA_ARCHITECTURES")) << why;
}

TEST(ColdFlush, BufferIsTwiceTheL2AndReadableBy16ByteLoads) {
  EXPECT_EQ(l2_flush_bytes(50 << 20), std::size_t{100} << 20);  // H100/H200: 50 MiB L2
  EXPECT_EQ(l2_flush_bytes(0), std::size_t{16} << 20);          // unknown L2: 16 MiB
  EXPECT_EQ(l2_flush_bytes((40 << 20) + 3) % 16, 0u);
  EXPECT_GE(l2_flush_bytes((40 << 20) + 3), std::size_t{80} << 20);
  EXPECT_EQ(l2_flush_grid(132), 528u);
  EXPECT_EQ(l2_flush_grid(0), 4u);
}

}  // namespace
}  // namespace gpubench
