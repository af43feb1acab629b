// The host-side parts of the cuBLASLt wrapper: type choices per precision, epilogue mapping,
// operand shapes, scalar encoding and the algorithm configuration's serialisation. No GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/float_formats.hpp"

namespace gpubench::blas {
namespace {

TEST(Cublaslt, PrecisionNamesRoundTrip) {
  for (const char* name : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp16-acc16", "fp8-e4m3", "fp8-e5m2", "int8"}) {
    const auto p = parse_precision(name);
    ASSERT_TRUE(p.has_value()) << name;
    EXPECT_EQ(precision_name(*p), name);
  }
  EXPECT_FALSE(parse_precision("fp4").has_value());
  EXPECT_FALSE(parse_precision("FP16").has_value());
}

// fp8 scale pointers: an H200 refused every algorithm with one 4 bytes into an allocation.
TEST(Cublaslt, ScalePointersMustBeSixteenByteAligned) {
  alignas(256) float scales[128] = {};
  EXPECT_TRUE(lt_scale_pointer_aligned(scales));
  EXPECT_FALSE(lt_scale_pointer_aligned(scales + 1));
  EXPECT_TRUE(lt_scale_pointer_aligned(scales + 4));
  EXPECT_TRUE(lt_scale_pointer_aligned(scales + 64));  // the gemm suite's B scale (256 bytes on)
}

// The heuristic's alignment preferences come from the real pointers: a bf16 expert whose A
// starts 64 elements (128 bytes) into a 256-byte aligned buffer is 128-byte aligned, not 256.
TEST(Cublaslt, PointerAlignmentFromTheAddress) {
  alignas(256) static unsigned char buf[1024];
  EXPECT_EQ(lt_pointer_alignment(buf), 256u);
  EXPECT_EQ(lt_pointer_alignment(buf + 512), 256u);  // capped at what cuBLASLt assumes by default
  EXPECT_EQ(lt_pointer_alignment(buf + 64 * 2), 128u);
  EXPECT_EQ(lt_pointer_alignment(buf + 48), 16u);
  EXPECT_EQ(lt_pointer_alignment(buf + 6), 2u);
  EXPECT_EQ(lt_pointer_alignment(buf + 7), 1u);
  EXPECT_EQ(lt_pointer_alignment(nullptr), 256u);
}

TEST(Cublaslt, TypesPerPrecision) {
  auto t = lt_types(LtPrecision::FP64);
  EXPECT_EQ(t.a, CUDA_R_64F);
  EXPECT_EQ(t.compute, CUBLAS_COMPUTE_64F);
  EXPECT_EQ(t.scale, CUDA_R_64F);

  t = lt_types(LtPrecision::FP32);
  EXPECT_EQ(t.compute, CUBLAS_COMPUTE_32F);  // plain fp32: no TF32 rounding
  t = lt_types(LtPrecision::TF32);
  EXPECT_EQ(t.a, CUDA_R_32F);
  EXPECT_EQ(t.d, CUDA_R_32F);
  EXPECT_EQ(t.compute, CUBLAS_COMPUTE_32F_FAST_TF32);

  t = lt_types(LtPrecision::FP16);
  EXPECT_EQ(t.a, CUDA_R_16F);
  EXPECT_EQ(t.d, CUDA_R_16F);
  EXPECT_EQ(t.compute, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(t.scale, CUDA_R_32F);

  t = lt_types(LtPrecision::BF16);
  EXPECT_EQ(t.b, CUDA_R_16BF);
  EXPECT_EQ(t.compute, CUBLAS_COMPUTE_32F);

  t = lt_types(LtPrecision::FP16_ACC16);  // half accumulate needs half alpha/beta
  EXPECT_EQ(t.compute, CUBLAS_COMPUTE_16F);
  EXPECT_EQ(t.scale, CUDA_R_16F);

  t = lt_types(LtPrecision::FP8_E4M3);
  EXPECT_EQ(t.a, CUDA_R_8F_E4M3);
  EXPECT_EQ(t.b, CUDA_R_8F_E4M3);
  EXPECT_EQ(t.c, CUDA_R_16BF);
  EXPECT_EQ(t.d, CUDA_R_16BF);
  EXPECT_EQ(t.scale, CUDA_R_32F);

  t = lt_types(LtPrecision::FP8_E5M2);  // e5m2 x e5m2 does not exist in cuBLASLt
  EXPECT_EQ(t.a, CUDA_R_8F_E5M2);
  EXPECT_EQ(t.b, CUDA_R_8F_E4M3);

  t = lt_types(LtPrecision::INT8);
  EXPECT_EQ(t.a, CUDA_R_8I);
  EXPECT_EQ(t.d, CUDA_R_32I);
  EXPECT_EQ(t.compute, CUBLAS_COMPUTE_32I);
  EXPECT_EQ(t.scale, CUDA_R_32I);
}

TEST(Cublaslt, LayoutRulesPerPrecision) {
  EXPECT_TRUE(requires_tn(LtPrecision::FP8_E4M3));
  EXPECT_TRUE(requires_tn(LtPrecision::FP8_E5M2));
  EXPECT_TRUE(requires_tn(LtPrecision::INT8));
  EXPECT_FALSE(requires_tn(LtPrecision::BF16));
  EXPECT_EQ(min_compute_capability(LtPrecision::FP8_E4M3), 89);
  EXPECT_EQ(min_compute_capability(LtPrecision::FP16), 80);
  EXPECT_EQ(data_type_bytes(CUDA_R_8F_E5M2), 1u);
  EXPECT_EQ(data_type_bytes(CUDA_R_16BF), 2u);
  EXPECT_EQ(data_type_bytes(CUDA_R_32I), 4u);
  EXPECT_EQ(data_type_bytes(CUDA_R_64F), 8u);
  EXPECT_THROW(data_type_bytes(CUDA_C_32F), std::invalid_argument);
}

TEST(Cublaslt, EpilogueMapping) {
  EXPECT_EQ(to_cublaslt(LtEpilogue::Default), CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(to_cublaslt(LtEpilogue::Bias), CUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(to_cublaslt(LtEpilogue::Gelu), CUBLASLT_EPILOGUE_GELU);
  EXPECT_EQ(to_cublaslt(LtEpilogue::BiasGelu), CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_EQ(to_cublaslt(LtEpilogue::GeluAux), CUBLASLT_EPILOGUE_GELU_AUX);
  EXPECT_EQ(to_cublaslt(LtEpilogue::DGelu), CUBLASLT_EPILOGUE_DGELU);
  EXPECT_EQ(to_cublaslt(LtEpilogue::DGeluBGrad), CUBLASLT_EPILOGUE_DGELU_BGRAD);
  EXPECT_EQ(to_cublaslt(LtEpilogue::BGradB), CUBLASLT_EPILOGUE_BGRADB);
  for (const char* name : {"none", "bias", "gelu", "bias-gelu", "gelu-aux", "gelu-aux-bias", "dgelu", "dgelu-bgrad",
                           "bgrada", "bgradb"}) {
    const auto e = parse_epilogue(name);
    ASSERT_TRUE(e.has_value()) << name;
    EXPECT_EQ(epilogue_name(*e), name);
  }
  EXPECT_FALSE(parse_epilogue("relu").has_value());
  EXPECT_TRUE(epilogue_uses_bias(LtEpilogue::BiasGelu));
  EXPECT_FALSE(epilogue_uses_bias(LtEpilogue::Gelu));
  EXPECT_TRUE(epilogue_uses_aux(LtEpilogue::DGelu));
  EXPECT_FALSE(epilogue_uses_aux(LtEpilogue::BiasGelu));
}

TEST(Cublaslt, ShapesFollowTransposesAndPadding) {
  LtProblem p;
  p.precision = LtPrecision::BF16;
  p.m = 64;
  p.n = 32;
  p.k = 128;
  auto s = lt_shapes(p);
  EXPECT_EQ(s.a.rows, 64u);
  EXPECT_EQ(s.a.cols, 128u);
  EXPECT_EQ(s.a.ld, 64);
  EXPECT_EQ(s.b.rows, 128u);
  EXPECT_EQ(s.b.cols, 32u);
  EXPECT_EQ(s.d.ld, 64);
  EXPECT_EQ(s.a.bytes(), 64u * 128u * 2u);

  p.trans_a = true;  // TN: A stored k x m, B stored k x n
  p.lda = 136;       // padded
  s = lt_shapes(p);
  EXPECT_EQ(s.a.rows, 128u);
  EXPECT_EQ(s.a.cols, 64u);
  EXPECT_EQ(s.a.ld, 136);
  EXPECT_EQ(s.a.bytes(), 136u * 64u * 2u);

  p.trans_b = true;
  p.lda = 0;
  s = lt_shapes(p);
  EXPECT_EQ(s.b.rows, 32u);
  EXPECT_EQ(s.b.cols, 128u);

  p.batch = 3;  // packed batches: stride = ld * cols
  s = lt_shapes(p);
  EXPECT_EQ(s.c.batch_stride, 64 * 32);
  EXPECT_EQ(s.c.bytes(), 3u * 64u * 32u * 2u);

  p.precision = LtPrecision::INT8;
  s = lt_shapes(p);
  EXPECT_EQ(s.a.type, CUDA_R_8I);
  EXPECT_EQ(s.d.type, CUDA_R_32I);
  p.cd_type = CUDA_R_32F;
  EXPECT_EQ(lt_shapes(p).d.type, CUDA_R_32F);
}

TEST(Cublaslt, ShapesRejectBadProblems) {
  LtProblem p;
  p.m = 64;
  p.n = 64;
  p.k = 0;
  EXPECT_THROW(lt_shapes(p), std::invalid_argument);
  p.k = 64;
  p.lda = 32;
  try {
    lt_shapes(p);
    FAIL() << "expected a throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("lda"), std::string::npos) << e.what();
  }
  p.lda = 0;
  p.batch = 2;
  p.stride_c = 10;
  EXPECT_THROW(lt_shapes(p), std::invalid_argument);
}

TEST(Cublaslt, ScalarsEncodedInTheScaleType) {
  unsigned char b[8];
  encode_scalar(CUDA_R_64F, 0.5, b);
  double d;
  std::memcpy(&d, b, 8);
  EXPECT_EQ(d, 0.5);
  encode_scalar(CUDA_R_32F, 1.25, b);
  float f;
  std::memcpy(&f, b, 4);
  EXPECT_EQ(f, 1.25f);
  encode_scalar(CUDA_R_16F, 1.0, b);
  std::uint16_t h;
  std::memcpy(&h, b, 2);
  EXPECT_EQ(h, 0x3C00);  // 1.0 in IEEE half
  encode_scalar(CUDA_R_32I, 2.0, b);
  std::int32_t i;
  std::memcpy(&i, b, 4);
  EXPECT_EQ(i, 2);
  EXPECT_THROW(encode_scalar(CUDA_R_8I, 1.0, b), std::invalid_argument);
}

AlgoConfig sample_config() {
  AlgoConfig c;
  c.id = 66;
  c.tile = 20;
  c.stages = 35;
  c.splitk = 4;
  c.reduction = 2;
  c.swizzle = 1;
  c.custom = 3;
  c.inner_shape = 7;
  c.cluster_shape = 65535;
  return c;
}

TEST(Cublaslt, AlgoConfigTextRoundTrip) {
  const AlgoConfig c = sample_config();
  const std::string text = to_string(c);
  EXPECT_EQ(text, "id=66 tile=20 stages=35 splitk=4 reduction=2 swizzle=1 custom=3 inner=7 cluster=65535");
  EXPECT_EQ(parse_algo_config(text), c);
  EXPECT_THROW(parse_algo_config(""), std::invalid_argument);
  EXPECT_THROW(parse_algo_config("id=1 tiles=3"), std::invalid_argument);
  EXPECT_THROW(parse_algo_config("id=x"), std::invalid_argument);
  EXPECT_THROW(parse_algo_config("inner=70000"), std::invalid_argument);  // uint16 field
  EXPECT_THROW(parse_algo_config("tile=-1"), std::invalid_argument);      // uint32 field
}

TEST(Cublaslt, AlgoConfigJsonRoundTrip) {
  const AlgoConfig c = sample_config();
  nlohmann::ordered_json j = c;
  EXPECT_EQ(j["splitk"], 4);
  EXPECT_EQ(j.get<AlgoConfig>(), c);
  const auto reparsed = nlohmann::ordered_json::parse(j.dump());
  EXPECT_EQ(reparsed.get<AlgoConfig>(), c);
  j.erase("stages");
  EXPECT_THROW(j.get<AlgoConfig>(), std::invalid_argument);
  j = c;
  j["tile"] = "20";
  EXPECT_THROW(j.get<AlgoConfig>(), std::invalid_argument);
  EXPECT_THROW(nlohmann::ordered_json::array().get<AlgoConfig>(), std::invalid_argument);
}

TEST(Cublaslt, WorkspaceRecommendation) {
  EXPECT_EQ(recommended_workspace_bytes(8), std::size_t{4} << 20);
  EXPECT_EQ(recommended_workspace_bytes(9), std::size_t{32} << 20);
  EXPECT_EQ(recommended_workspace_bytes(10), std::size_t{32} << 20);
}

TEST(Cublaslt, VersionIsDotted) {
  const std::string v = lt_version();  // the library answers without a device
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
}

// Block scaling (MXFP8, NVFP4): A and B take E4M3 / E2M1 (two values a byte), C and D keep the
// precision's bf16; a build whose cuBLAS predates 12.8 refuses it by name.
TEST(Cublaslt, BlockScaledOperandsTakeTheirCodesType) {
  LtProblem p;
  p.precision = LtPrecision::BF16;
  p.trans_a = true;
  p.m = 64;
  p.n = 32;
  p.k = 128;
  p.block_scale = LtBlockScale::Mxfp8;
  if (!lt_block_scaling_built()) {
    EXPECT_THROW((void)lt_shapes(p), std::invalid_argument);
    return;
  }
#if defined(GPUBENCH_LT_BLOCK_SCALING)
  LtShapes s = lt_shapes(p);
  EXPECT_EQ(s.a.type, CUDA_R_8F_E4M3);
  EXPECT_EQ(s.b.type, CUDA_R_8F_E4M3);
  EXPECT_EQ(s.d.type, CUDA_R_16BF);
  EXPECT_EQ(s.a.rows, 128u);  // K-major: k x m stored, A transposed
  EXPECT_EQ(s.a.bytes(), 128u * 64u);
  p.block_scale = LtBlockScale::Nvfp4;
  s = lt_shapes(p);
  EXPECT_EQ(s.a.type, CUDA_R_4F_E2M1);
  EXPECT_EQ(s.a.bytes(), 128u * 64u / 2);
  EXPECT_EQ(s.b.bytes(), 128u * 32u / 2);
  EXPECT_EQ(s.c.type, CUDA_R_16BF);
#endif
}

}  // namespace
}  // namespace gpubench::blas
