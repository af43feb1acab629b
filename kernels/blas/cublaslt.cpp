#include "kernels/blas/cublaslt.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "kernels/common/float_formats.hpp"

namespace gpubench::blas {

// ---- Precisions ----

namespace {
struct PrecisionRow {
  LtPrecision p;
  const char* name;
};
constexpr PrecisionRow kPrecisions[] = {
    {LtPrecision::FP64, "fp64"},         {LtPrecision::FP32, "fp32"},         {LtPrecision::TF32, "tf32"},
    {LtPrecision::FP16, "fp16"},         {LtPrecision::BF16, "bf16"},         {LtPrecision::FP16_ACC16, "fp16-acc16"},
    {LtPrecision::FP8_E4M3, "fp8-e4m3"}, {LtPrecision::FP8_E5M2, "fp8-e5m2"}, {LtPrecision::INT8, "int8"},
};

struct EpilogueRow {
  LtEpilogue e;
  const char* name;
  cublasLtEpilogue_t lt;
};
constexpr EpilogueRow kEpilogues[] = {
    {LtEpilogue::Default, "none", CUBLASLT_EPILOGUE_DEFAULT},
    {LtEpilogue::Bias, "bias", CUBLASLT_EPILOGUE_BIAS},
    {LtEpilogue::Gelu, "gelu", CUBLASLT_EPILOGUE_GELU},
    {LtEpilogue::BiasGelu, "bias-gelu", CUBLASLT_EPILOGUE_GELU_BIAS},
    {LtEpilogue::GeluAux, "gelu-aux", CUBLASLT_EPILOGUE_GELU_AUX},
    {LtEpilogue::GeluAuxBias, "gelu-aux-bias", CUBLASLT_EPILOGUE_GELU_AUX_BIAS},
    {LtEpilogue::DGelu, "dgelu", CUBLASLT_EPILOGUE_DGELU},
    {LtEpilogue::DGeluBGrad, "dgelu-bgrad", CUBLASLT_EPILOGUE_DGELU_BGRAD},
    {LtEpilogue::BGradA, "bgrada", CUBLASLT_EPILOGUE_BGRADA},
    {LtEpilogue::BGradB, "bgradb", CUBLASLT_EPILOGUE_BGRADB},
};
}  // namespace

std::string precision_name(LtPrecision p) {
  for (const auto& r : kPrecisions)
    if (r.p == p) return r.name;
  return "unknown";
}

std::optional<LtPrecision> parse_precision(const std::string& name) {
  for (const auto& r : kPrecisions)
    if (name == r.name) return r.p;
  return std::nullopt;
}

LtTypes lt_types(LtPrecision p) {
  // The rows of cublasLtMatmul's "supported data types" table that these precisions use.
  switch (p) {
    case LtPrecision::FP64: return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case LtPrecision::FP32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case LtPrecision::TF32:
      return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
    case LtPrecision::FP16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case LtPrecision::BF16: return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case LtPrecision::FP16_ACC16:
      return {CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F};
    case LtPrecision::FP8_E4M3:
      return {CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case LtPrecision::FP8_E5M2:
      return {CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case LtPrecision::INT8: return {CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I};
  }
  throw std::invalid_argument("lt_types: unknown precision");
}

std::size_t data_type_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F:
    case CUDA_R_32I: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
    case CUDA_R_8I: return 1;
    default: break;
  }
  throw std::invalid_argument("data_type_bytes: type " + std::to_string(static_cast<int>(t)) + " not used by gpubench");
}

bool lt_block_scaling_built() {
#if defined(GPUBENCH_LT_BLOCK_SCALING)
  return true;
#else
  return false;
#endif
}

bool is_fp8(LtPrecision p) { return p == LtPrecision::FP8_E4M3 || p == LtPrecision::FP8_E5M2; }
bool requires_tn(LtPrecision p) { return is_fp8(p) || p == LtPrecision::INT8; }
int min_compute_capability(LtPrecision p) { return is_fp8(p) ? 89 : 80; }

// ---- Epilogues ----

std::string epilogue_name(LtEpilogue e) {
  for (const auto& r : kEpilogues)
    if (r.e == e) return r.name;
  return "unknown";
}

std::optional<LtEpilogue> parse_epilogue(const std::string& name) {
  for (const auto& r : kEpilogues)
    if (name == r.name) return r.e;
  return std::nullopt;
}

cublasLtEpilogue_t to_cublaslt(LtEpilogue e) {
  for (const auto& r : kEpilogues)
    if (r.e == e) return r.lt;
  throw std::invalid_argument("to_cublaslt: unknown epilogue");
}

bool epilogue_uses_bias(LtEpilogue e) {
  switch (e) {
    case LtEpilogue::Bias:
    case LtEpilogue::BiasGelu:
    case LtEpilogue::GeluAuxBias:
    case LtEpilogue::DGeluBGrad:
    case LtEpilogue::BGradA:
    case LtEpilogue::BGradB: return true;
    default: return false;
  }
}

bool epilogue_uses_aux(LtEpilogue e) {
  return e == LtEpilogue::GeluAux || e == LtEpilogue::GeluAuxBias || e == LtEpilogue::DGelu ||
         e == LtEpilogue::DGeluBGrad;
}

// ---- Shapes ----

std::size_t LtMatrixShape::bytes() const {
  const std::uint64_t elems =
      static_cast<std::uint64_t>(batch - 1) * static_cast<std::uint64_t>(batch_stride) + static_cast<std::uint64_t>(ld) * cols;
#if defined(GPUBENCH_LT_BLOCK_SCALING)
  if (type == CUDA_R_4F_E2M1) return static_cast<std::size_t>((elems + 1) / 2);  // two values per byte
#endif
  return static_cast<std::size_t>(elems * data_type_bytes(type));
}

namespace {
LtMatrixShape make_shape(const char* name, cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         std::int32_t batch, std::int64_t stride) {
  if (ld == 0) ld = rows;
  if (ld < rows) {
    throw std::invalid_argument(std::string("ld") + name + " = " + std::to_string(ld) + " is smaller than the " +
                                std::to_string(rows) + " rows stored");
  }
  if (stride == 0) stride = ld * cols;
  if (batch > 1 && stride < ld * cols) {
    throw std::invalid_argument(std::string("stride_") + name + " = " + std::to_string(stride) +
                                " makes batches overlap (one matrix holds " + std::to_string(ld * cols) + " elements)");
  }
  return {type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld, stride, batch};
}
}  // namespace

namespace {
// A's and B's types under block scaling.
void block_scaled_types(LtBlockScale b, LtTypes& t) {
  if (b == LtBlockScale::None) return;
#if defined(GPUBENCH_LT_BLOCK_SCALING)
  t.a = t.b = b == LtBlockScale::Mxfp8 ? CUDA_R_8F_E4M3 : CUDA_R_4F_E2M1;
#else
  (void)t;
  throw std::invalid_argument("block scaling needs cuBLASLt 12.8 or newer (this build's is " + std::to_string(CUBLAS_VERSION) + ")");
#endif
}
}  // namespace

LtTypes problem_types(const LtProblem& p) {
  LtTypes t = lt_types(p.precision);
  if (p.cd_type) t.c = t.d = *p.cd_type;
  block_scaled_types(p.block_scale, t);
  if (p.a_type) t.a = *p.a_type;
  if (p.b_type) t.b = *p.b_type;
  return t;
}

LtShapes lt_shapes(const LtProblem& p) {
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) throw std::invalid_argument("m, n and k must be positive");
  if (p.batch < 1) throw std::invalid_argument("batch must be at least 1");
  const LtTypes t = problem_types(p);
  // A is stored m x k (k x m when transposed); B k x n (n x k when transposed).
  LtShapes s;
  s.a = make_shape("a", t.a, p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k, p.lda, p.batch, p.stride_a);
  s.b = make_shape("b", t.b, p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n, p.ldb, p.batch, p.stride_b);
  s.c = make_shape("c", t.c, p.m, p.n, p.ldc, p.batch, p.stride_c);
  s.d = make_shape("d", t.d, p.m, p.n, p.ldd, p.batch, p.stride_d);
  return s;
}

namespace {
template <typename T>
void get_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T& out) {
  std::size_t written = 0;
  check(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &out, sizeof(out), &written),
        "cublasLtMatmulAlgoConfigGetAttribute");
}
template <typename T>
void set_config(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, const T& value) {
  check(cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &value, sizeof(value)), "cublasLtMatmulAlgoConfigSetAttribute");
}
}  // namespace

AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo) {
  AlgoConfig c;
  get_config(algo, CUBLASLT_ALGO_CONFIG_ID, c.id);
  get_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
  get_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
  get_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
  get_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
  get_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
  get_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
#if CUBLAS_VERSION >= 120000  // inner shape and cluster shape: present in every CUDA 12 header
  get_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner_shape);
  get_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster_shape);
#endif
  return c;
}

// ---- Errors and versions ----

LtError::LtError(cublasStatus_t status, const std::string& what) : std::runtime_error(what), status_(status) {}

bool LtError::unsupported() const {
  return status_ == CUBLAS_STATUS_NOT_SUPPORTED || status_ == CUBLAS_STATUS_ARCH_MISMATCH ||
         status_ == CUBLAS_STATUS_INVALID_VALUE;
}

void check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw LtError(s, std::string(what) + " failed: " + cublasLtGetStatusString(s));
}

std::string lt_version() {
  // cublasLtGetVersion returns major*10000 + minor*100 + patch (e.g. 130100 for 13.1.0).
  const std::size_t v = cublasLtGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

std::size_t recommended_workspace_bytes(int cc_major) {
  return cc_major >= 9 ? (std::size_t{32} << 20) : (std::size_t{4} << 20);
}

void encode_scalar(cudaDataType_t scale, double value, unsigned char out[8]) {
  std::memset(out, 0, 8);
  switch (scale) {
    case CUDA_R_64F: std::memcpy(out, &value, 8); return;
    case CUDA_R_32F: {
      const float f = static_cast<float>(value);
      std::memcpy(out, &f, 4);
      return;
    }
    case CUDA_R_16F: {
      const std::uint16_t h = kernels::float_to_half_bits(static_cast<float>(value));
      std::memcpy(out, &h, 2);
      return;
    }
    case CUDA_R_32I: {
      const std::int32_t i = static_cast<std::int32_t>(std::lround(value));
      std::memcpy(out, &i, 4);
      return;
    }
    default: break;
  }
  throw std::invalid_argument("encode_scalar: unsupported scale type");
}

// ---- Handle and matmul ----

LtHandle::LtHandle() { check(cublasLtCreate(&h_), "cublasLtCreate"); }
LtHandle::~LtHandle() {
  if (h_) cublasLtDestroy(h_);
}

namespace {
template <typename T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v) {
  check(cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof(v)), "cublasLtMatmulDescSetAttribute");
}

cublasLtMatrixLayout_t make_layout(const LtMatrixShape& s) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, s.type, s.rows, s.cols, s.ld), "cublasLtMatrixLayoutCreate");
  if (s.batch > 1) {
    const std::int32_t count = s.batch;
    const std::int64_t stride = s.batch_stride;
    cublasStatus_t st = cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
    if (st == CUBLAS_STATUS_SUCCESS) {
      st = cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
      cublasLtMatrixLayoutDestroy(l);
      check(st, "cublasLtMatrixLayoutSetAttribute");
    }
  }
  return l;
}
}  // namespace

LtMatmul::LtMatmul(const LtHandle& handle, const LtProblem& problem, std::size_t workspace_limit)
    : handle_(handle.get()), p_(problem), shapes_(lt_shapes(problem)), types_(lt_types(problem.precision)),
      workspace_limit_(workspace_limit) {
  types_ = problem_types(p_);
  encode_scalar(types_.scale, p_.alpha, alpha_);
  encode_scalar(types_.scale, p_.beta, beta_);
  try {
    check(cublasLtMatmulDescCreate(&desc_, types_.compute, types_.scale), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = p_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = p_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, ta);
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, tb);
    if (p_.epilogue != LtEpilogue::Default) {
      set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, to_cublaslt(p_.epilogue));
      if (epilogue_uses_aux(p_.epilogue)) {
        const std::int64_t aux_ld = p_.aux_ld != 0 ? p_.aux_ld : p_.m;
        set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, aux_ld);
        if (p_.batch > 1) set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, aux_ld * p_.n);
      }
    }
    if (is_fp8(p_.precision) && p_.fp8_fast_accum) set_desc(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, std::int8_t{1});
#if defined(GPUBENCH_LT_BLOCK_SCALING)
    if (p_.block_scale != LtBlockScale::None) {
      const std::int32_t mode = p_.block_scale == LtBlockScale::Mxfp8 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
                                                                     : CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
      set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
      set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
    }
#endif
    a_ = make_layout(shapes_.a);
    b_ = make_layout(shapes_.b);
    c_ = make_layout(shapes_.c);
    d_ = make_layout(shapes_.d);
    check(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    const std::uint64_t ws = workspace_limit_;
    check(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
          "cublasLtMatmulPreferenceSetAttribute");
  } catch (...) {
    release();
    throw;
  }
}

LtMatmul::~LtMatmul() { release(); }

void LtMatmul::release() {
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  for (auto* l : {a_, b_, c_, d_})
    if (l) cublasLtMatrixLayoutDestroy(l);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  pref_ = nullptr;
  a_ = b_ = c_ = d_ = nullptr;
  desc_ = nullptr;
}

bool lt_scale_pointer_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

std::uint32_t lt_pointer_alignment(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t align = 256;
  while (align > 1 && a % align != 0) align /= 2;
  return align;
}

void LtMatmul::prefer_alignment(const void* a, const void* b, const void* c, const void* d) {
  const std::pair<cublasLtMatmulPreferenceAttributes_t, const void*> prefs[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, d}};
  for (const auto& [attr, p] : prefs) {
    const std::uint32_t align = lt_pointer_alignment(p);
    check(cublasLtMatmulPreferenceSetAttribute(pref_, attr, &align, sizeof(align)), "cublasLtMatmulPreferenceSetAttribute");
  }
}

void LtMatmul::set_pointers(const LtExtraPointers& x) {
  const std::pair<const void*, const char*> scales[] = {
      {x.a_scale, "a_scale"}, {x.b_scale, "b_scale"}, {x.c_scale, "c_scale"}, {x.d_scale, "d_scale"}, {x.amax_d, "amax_d"},
      {x.a_block_scales, "a_block_scales"}, {x.b_block_scales, "b_block_scales"}};
  for (const auto& [p, name] : scales) {
    if (p != nullptr && !lt_scale_pointer_aligned(p)) {
      throw std::invalid_argument(std::string("cuBLASLt ") + name + " pointer is not 16-byte aligned (cuBLASLt refuses the GEMM)");
    }
  }
  if (x.bias) set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, x.bias);
  if (x.aux) set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, x.aux);
  if (x.a_scale) set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, x.a_scale);
  if (x.b_scale) set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, x.b_scale);
  if (x.c_scale) set_desc(desc_, CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, x.c_scale);
  if (x.d_scale) set_desc(desc_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, x.d_scale);
  if (x.amax_d) set_desc(desc_, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, x.amax_d);
  // Block scales go through the same A/B scale pointers, read as the scale mode says.
  if (x.a_block_scales) set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, x.a_block_scales);
  if (x.b_block_scales) set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, x.b_block_scales);
  if (x.device_alpha_beta) {
    if (types_.scale != CUDA_R_32F) throw std::invalid_argument("device alpha/beta: the scale type is not fp32");
    set_desc(desc_, CUBLASLT_MATMUL_DESC_POINTER_MODE, static_cast<std::int32_t>(CUBLASLT_POINTER_MODE_DEVICE));
    device_alpha_beta_ = x.device_alpha_beta;
  }
}

std::vector<LtCandidate> LtMatmul::heuristics(int max_count) const {
  if (max_count < 1) throw std::invalid_argument("heuristics: max_count must be at least 1");
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(max_count));
  int returned = 0;
  const cublasStatus_t s =
      cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, d_, pref_, max_count, results.data(), &returned);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) return {};
  check(s, "cublasLtMatmulAlgoGetHeuristic");
  std::vector<LtCandidate> out;
  for (int i = 0; i < returned; ++i) {
    const auto& r = results[static_cast<std::size_t>(i)];
    if (r.state != CUBLAS_STATUS_SUCCESS) continue;
    out.push_back({r.algo, r.workspaceSize, r.wavesCount, read_config(r.algo)});
  }
  return out;
}

std::optional<LtCandidate> LtMatmul::first_heuristic() const {
  auto all = heuristics(1);
  if (all.empty()) return std::nullopt;
  return all.front();
}

std::optional<LtCandidate> LtMatmul::rebuild(const AlgoConfig& c) const {
  cublasLtMatmulAlgo_t algo;
  if (cublasLtMatmulAlgoInit(handle_, types_.compute, types_.scale, types_.a, types_.b, types_.c, types_.d, c.id, &algo) !=
      CUBLAS_STATUS_SUCCESS) {
    return std::nullopt;
  }
  try {
    set_config(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
    set_config(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
    set_config(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
    set_config(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
    set_config(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
    set_config(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
#if CUBLAS_VERSION >= 120000
    set_config(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner_shape);
    set_config(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster_shape);
#endif
  } catch (const LtError&) {
    return std::nullopt;
  }
  cublasLtMatmulHeuristicResult_t r{};
  if (cublasLtMatmulAlgoCheck(handle_, desc_, a_, b_, c_, d_, &algo, &r) != CUBLAS_STATUS_SUCCESS) return std::nullopt;
  if (r.workspaceSize > workspace_limit_) return std::nullopt;
  return LtCandidate{algo, r.workspaceSize, r.wavesCount, c};
}

cublasStatus_t LtMatmul::enqueue(const void* a, const void* b, const void* c, void* d, const cublasLtMatmulAlgo_t& algo,
                                 void* workspace, cudaStream_t stream) const {
  const void* alpha = device_alpha_beta_ ? static_cast<const void*>(device_alpha_beta_) : alpha_;
  const void* beta = device_alpha_beta_ ? static_cast<const void*>(device_alpha_beta_ + 1) : beta_;
  return cublasLtMatmul(handle_, desc_, alpha, a, a_, b, b_, beta, c, c_, d, d_, &algo, workspace, workspace_limit_, stream);
}

void LtMatmul::run(const void* a, const void* b, const void* c, void* d, const cublasLtMatmulAlgo_t& algo, void* workspace,
                   cudaStream_t stream) const {
  check(enqueue(a, b, c, d, algo, workspace, stream), "cublasLtMatmul");
}

}  // namespace gpubench::blas
