#include "kernels/train/gpu_model.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/fp8_scaling.cuh"
#include "kernels/train/train_kernels.cuh"

namespace gpubench::kernels::train {
namespace {

using kernels::cuda_check;
using Buf = kernels::DeviceBuf;

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

struct GpuModel::Impl {
  struct Gemm {
    std::unique_ptr<blas::LtMatmul> op;
    blas::LtCandidate algo;
  };
  struct BlockBufs {
    // p: the probabilities [B, H, T, T] (unfused); stats: one log-sum-exp per row [B, H, T] (fused)
    Buf ln1_out, ln1_mean, ln1_rstd, qkv, p, stats, att, x_mid, ln2_out, ln2_mean, ln2_rstd;
  };
  struct MlpBufs {
    Buf h, g;
  };

  // fp8: the quantised operands of the linear GEMM in flight (row-major A and B of
  // RowMajorGemm, each with its descale), and the amax of X, W and dY.
  struct Fp8Bufs {
    Buf a, b, a_scale_inv, b_scale_inv, amax_x, amax_w, amax_dy;
  };

  Impl(const ModelConfig& c, GpuPrecision prec, cudaStream_t s, std::int64_t& total)
      : c(c), prec(prec),
        dt(prec == GpuPrecision::FP16                                    ? DType::F16
           : prec == GpuPrecision::BF16 || prec == GpuPrecision::FP8 ? DType::BF16
                                                                         : DType::F32),
        es(dtype_bytes(dt)), s(s), total(total) {}

  ModelConfig c;
  GpuPrecision prec;
  DType dt;
  std::size_t es;
  cudaStream_t s;
  std::int64_t& total;
  blas::LtHandle lt;
  Buf ws;
  std::map<std::string, Gemm> gemms;

  Buf p32, g32, m32, v32, w16;  // w16: the 16-bit weight copy (fp16/bf16 only)
  std::vector<Buf> tokens, targets, inputs;
  std::vector<Buf> xs, pre;  // one allocation each: every matmul operand starts 256-byte aligned
  Buf lnf_out, lnf_mean, lnf_rstd, logits;
  std::vector<BlockBufs> blocks;
  std::vector<MlpBufs> mlps;
  Buf dx, dtmp, dqkv, dh, datt;
  Buf qh, kh, vh, oh, doh, dqh, dkh, dvh, ds;  // attention heads, packed [B, H, T, D]; ds [B, H, T, T]
  Buf loss_sum, flag;
  Fp8Bufs f8;
  std::unique_ptr<FusedAttention> fused;  // attention=fused: the caller's kernel

  // Op timing (set_op_timing): events reused from a pool, pairs marking attention or dense work.
  struct Mark {
    cudaEvent_t start, end;
    bool attention;
  };
  bool op_timing = false;
  std::vector<cudaEvent_t> events;
  std::size_t events_used = 0;
  std::vector<Mark> marks;
  cudaEvent_t next_event() {
    if (events_used == events.size()) {
      cudaEvent_t e = nullptr;
      cuda_check(cudaEventCreate(&e), "cudaEventCreate");
      events.push_back(e);
    }
    return events[events_used++];
  }
  template <class F>
  void timed(bool attention, F&& f) {
    if (!op_timing) {
      f();
      return;
    }
    const cudaEvent_t a = next_event();
    cuda_check(cudaEventRecord(a, s), "cudaEventRecord");
    f();
    const cudaEvent_t b = next_event();
    cuda_check(cudaEventRecord(b, s), "cudaEventRecord");
    marks.push_back({a, b, attention});
  }
  ~Impl() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
  }

  // The attention part of a block's backward, over B*H packed heads: dqkv from datt.
  void attention_backward(BlockBufs& a) {
    Impl& m = *this;
    const std::int64_t C = c.hidden, B = c.batch, T = c.seq, H = c.heads, D = c.head_dim();
    cuda_check(launch_split_heads(m.dt, a.qkv.get(), 3 * C, 0, m.qh.get(), B, T, H, D, m.s), "split");
    cuda_check(launch_split_heads(m.dt, a.qkv.get(), 3 * C, C, m.kh.get(), B, T, H, D, m.s), "split");
    cuda_check(launch_split_heads(m.dt, a.qkv.get(), 3 * C, 2 * C, m.vh.get(), B, T, H, D, m.s), "split");
    cuda_check(launch_split_heads(m.dt, m.datt.get(), C, 0, m.doh.get(), B, T, H, D, m.s), "split");
    if (fused) {
      // The layer's O is kept merged in att (the projection's input): split it back.
      cuda_check(launch_split_heads(m.dt, a.att.get(), C, 0, m.oh.get(), B, T, H, D, m.s), "split");
      fused->backward(m.qh.get(), m.kh.get(), m.vh.get(), m.oh.get(), m.doh.get(), a.stats.f(), m.dqh.get(),
                      m.dkh.get(), m.dvh.get());
      merge_dqkv();
      return;
    }
    const double scale = 1 / std::sqrt(static_cast<double>(D));
    const std::int64_t BH = B * H, TT = T * T, TD = T * D;
    m.mm(true, false, T, D, T, 1, a.p.get(), T, TT, m.doh.get(), D, TD, 0, m.dvh.get(), D, TD, BH, false);   // P^T dO
    m.mm(false, true, T, T, D, 1, m.doh.get(), D, TD, m.vh.get(), D, TD, 0, m.ds.get(), T, TT, BH, false);    // dO v^T
    cuda_check(launch_causal_softmax_backward(m.dt, a.p.get(), m.ds.get(), BH * T, T, m.s), "softmax");
    m.mm(false, false, T, D, T, scale, m.ds.get(), T, TT, m.kh.get(), D, TD, 0, m.dqh.get(), D, TD, BH, false);  // dS k
    m.mm(true, false, T, D, T, scale, m.ds.get(), T, TT, m.qh.get(), D, TD, 0, m.dkh.get(), D, TD, BH, false);   // dS^T q
    merge_dqkv();
  }
  void merge_dqkv() {  // dq, dk, dv heads into dqkv
    const std::int64_t C = c.hidden, B = c.batch, T = c.seq, H = c.heads, D = c.head_dim();
    cuda_check(launch_merge_heads(dt, dqh.get(), dqkv.get(), 3 * C, 0, B, T, H, D, s), "merge");
    cuda_check(launch_merge_heads(dt, dkh.get(), dqkv.get(), 3 * C, C, B, T, H, D, s), "merge");
    cuda_check(launch_merge_heads(dt, dvh.get(), dqkv.get(), 3 * C, 2 * C, B, T, H, D, s), "merge");
  }

  std::size_t micro = 0;      // micro-batch forward() last saw
  std::size_t micro_count = 0;  // forwards since zero_grads
  double last_scale = 1;       // loss scale of the last forward
  std::int64_t t = 0;          // optimizer steps applied

  Buf alloc(std::int64_t elements, std::size_t element_bytes) { return Buf(sz(elements) * element_bytes, total); }
  Buf act(std::int64_t elements) { return alloc(elements, es); }

  const void* weights() const { return dt == DType::F32 ? p32.get() : w16.get(); }
  const void* W(const ParamTensor& t) const { return static_cast<const char*>(weights()) + sz(t.offset) * es; }
  float* G(const ParamTensor& t) const { return g32.f() + t.offset; }

  // Row-major C = alpha op(A) op(B) + beta C (see RowMajorGemm), through cuBLASLt.
  void mm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const void* a,
          std::int64_t lda, std::int64_t sa, const void* b, std::int64_t ldb, std::int64_t sb, double beta, void* cc,
          std::int64_t ldc, std::int64_t sc, std::int64_t batch, bool c_f32) {
    const blas::LtProblem p = to_lt_problem({ta, tb, m, n, k, alpha, lda, sa, ldb, sb, beta, ldc, sc, batch}, prec, c_f32);
    std::ostringstream key;
    key << ta << tb << ' ' << m << ' ' << n << ' ' << k << ' ' << alpha << ' ' << lda << ' ' << sa << ' ' << ldb << ' '
        << sb << ' ' << beta << ' ' << ldc << ' ' << sc << ' ' << batch << ' ' << c_f32;
    auto it = gemms.find(key.str());
    if (it == gemms.end()) {
      Gemm g;
      g.op = std::make_unique<blas::LtMatmul>(lt, p, ws.bytes());
      auto cand = g.op->first_heuristic();
      if (!cand) throw std::runtime_error("cuBLASLt has no algorithm for the " + key.str() + " matmul");
      g.algo = *cand;
      it = gemms.emplace(key.str(), std::move(g)).first;
    }
    it->second.op->run(b, a, cc, cc, it->second.algo.algo, ws.get(), s);
  }

  // fp8 (see the header): one of the three GEMMs of a linear layer over the codes in f8.a and
  // f8.b, built once per shape with the descale pointers (cuBLASLt's A is the row-major B).
  void mm_fp8(const blas::LtProblem& p, void* d) {
    std::ostringstream key;
    key << "fp8 " << p.m << ' ' << p.n << ' ' << p.k << ' ' << static_cast<int>(p.a_type.value_or(CUDA_R_8F_E4M3))
        << ' ' << static_cast<int>(p.b_type.value_or(CUDA_R_8F_E4M3)) << ' ' << p.beta;
    auto it = gemms.find(key.str());
    if (it == gemms.end()) {
      Gemm g;
      g.op = std::make_unique<blas::LtMatmul>(lt, p, ws.bytes());
      blas::LtExtraPointers ptrs;
      ptrs.a_scale = f8.b_scale_inv.f();
      ptrs.b_scale = f8.a_scale_inv.f();
      g.op->set_pointers(ptrs);
      auto cand = g.op->first_heuristic();
      if (!cand) throw std::runtime_error("cuBLASLt has no algorithm for the " + key.str() + " matmul");
      g.algo = *cand;
      it = gemms.emplace(key.str(), std::move(g)).first;
    }
    it->second.op->run(f8.b.get(), f8.a.get(), d, d, it->second.algo.algo, ws.get(), s);
  }
  // amax of n values of the compute type into `amax`, then their codes (rows x cols, or its
  // transpose) into `q` with the descale into `scale_inv`.
  void amax_of(const void* x, std::int64_t n, Buf& amax) {
    cuda_check(launch_amax(Storage::BF16, x, n, amax.f(), s), "fp8 amax");
  }
  void quantize(const void* x, std::int64_t rows, std::int64_t cols, bool transpose, Storage format, const Buf& amax,
                Buf& q, Buf& scale_inv) {
    cuda_check(launch_fp8_quantize(Storage::BF16, x, rows, cols, transpose, format, amax.f(),
                                   static_cast<std::uint8_t*>(q.get()), scale_inv.f(), s),
               "fp8 quantize");
  }

  void linear_forward(const void* x, const ParamTensor& w, const ParamTensor& bias, void* y, std::int64_t n,
                      std::int64_t in, std::int64_t out) {
    timed(false, [&] { linear_forward_ops(x, w, bias, y, n, in, out); });
  }
  void linear_backward(const void* x, const ParamTensor& w, const ParamTensor& bias, const void* dy, void* dxp,
                       std::int64_t n, std::int64_t in, std::int64_t out) {
    timed(false, [&] { linear_backward_ops(x, w, bias, dy, dxp, n, in, out); });
  }
  void linear_forward_ops(const void* x, const ParamTensor& w, const ParamTensor& bias, void* y, std::int64_t n,
                          std::int64_t in, std::int64_t out) {
    if (prec == GpuPrecision::FP8) {
      amax_of(x, n * in, f8.amax_x);
      quantize(x, n, in, false, Storage::E4M3, f8.amax_x, f8.a, f8.a_scale_inv);
      amax_of(W(w), in * out, f8.amax_w);
      quantize(W(w), in, out, true, Storage::E4M3, f8.amax_w, f8.b, f8.b_scale_inv);  // W^T [out, in]
      mm_fp8(fp8_forward_problem(n, in, out), y);
    } else {
      mm(false, false, n, out, in, 1, x, in, 0, W(w), out, 0, 0, y, out, 0, 1, false);
    }
    cuda_check(launch_bias_add(dt, y, W(bias), n, out, s), "bias_add");
  }
  void linear_backward_ops(const void* x, const ParamTensor& w, const ParamTensor& bias, const void* dy, void* dxp,
                           std::int64_t n, std::int64_t in, std::int64_t out) {
    if (prec == GpuPrecision::FP8) {
      amax_of(dy, n * out, f8.amax_dy);
      if (dxp) {  // dX = dY W^T
        quantize(dy, n, out, false, Storage::E5M2, f8.amax_dy, f8.a, f8.a_scale_inv);
        amax_of(W(w), in * out, f8.amax_w);
        quantize(W(w), in, out, false, Storage::E4M3, f8.amax_w, f8.b, f8.b_scale_inv);
        mm_fp8(fp8_dgrad_problem(n, in, out), dxp);
      }
      // dW += X^T dY, both operands transposed to make n the contracted (K-major) dimension.
      amax_of(x, n * in, f8.amax_x);
      quantize(x, n, in, true, Storage::E4M3, f8.amax_x, f8.a, f8.a_scale_inv);
      quantize(dy, n, out, true, Storage::E5M2, f8.amax_dy, f8.b, f8.b_scale_inv);
      mm_fp8(fp8_wgrad_problem(n, in, out), G(w));
    } else {
      if (dxp) mm(false, true, n, in, out, 1, dy, out, 0, W(w), out, 0, 0, dxp, in, 0, 1, false);  // dX = dY W^T
      mm(true, false, in, out, n, 1, x, in, 0, dy, out, 0, 1, G(w), out, 0, 1, true);               // dW += X^T dY
    }
    cuda_check(launch_bias_grad(dt, dy, G(bias), n, out, s), "bias_grad");
  }
};

namespace {
// The fp8 GEMM C[m, n] = A[m, k] B[n, k]^T (both K-major), A and B in the given fp8 types.
blas::LtProblem fp8_problem(std::int64_t m, std::int64_t n, std::int64_t k, cudaDataType_t a, cudaDataType_t b,
                            double beta, bool c_f32) {
  blas::LtProblem p = to_lt_problem({false, true, m, n, k, 1, k, 0, k, 0, beta, n, 0, 1}, GpuPrecision::BF16, c_f32);
  p.precision = blas::LtPrecision::FP8_E4M3;
  p.a_type = b;  // cuBLASLt's A is the row-major B (to_lt_problem)
  p.b_type = a;
  return p;
}
}  // namespace

blas::LtProblem fp8_forward_problem(std::int64_t n, std::int64_t in, std::int64_t out) {
  return fp8_problem(n, out, in, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, 0, false);  // Xq [n, in], (W^T)q [out, in]
}
blas::LtProblem fp8_dgrad_problem(std::int64_t n, std::int64_t in, std::int64_t out) {
  return fp8_problem(n, in, out, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, 0, false);  // dYq [n, out], Wq [in, out]
}
blas::LtProblem fp8_wgrad_problem(std::int64_t n, std::int64_t in, std::int64_t out) {
  return fp8_problem(in, out, n, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, 1, true);  // (X^T)q [in, n], (dY^T)q [out, n]
}

blas::LtProblem to_lt_problem(const RowMajorGemm& g, GpuPrecision prec, bool c_f32) {
  blas::LtProblem p;
  switch (prec) {
    case GpuPrecision::FP32: p.precision = blas::LtPrecision::FP32; break;
    case GpuPrecision::TF32: p.precision = blas::LtPrecision::TF32; break;
    case GpuPrecision::FP16: p.precision = blas::LtPrecision::FP16; break;
    case GpuPrecision::BF16:
    case GpuPrecision::FP8: p.precision = blas::LtPrecision::BF16; break;  // fp8: the GEMMs not in a linear layer
  }
  p.trans_a = g.tb;
  p.trans_b = g.ta;
  p.m = g.n;
  p.n = g.m;
  p.k = g.k;
  p.lda = g.ldb;
  p.ldb = g.lda;
  p.ldc = p.ldd = g.ldc;
  p.batch = static_cast<std::int32_t>(g.batch);
  p.stride_a = g.sb;
  p.stride_b = g.sa;
  p.stride_c = p.stride_d = g.sc;
  p.alpha = g.alpha;
  p.beta = g.beta;
  if (c_f32 && prec != GpuPrecision::FP32 && prec != GpuPrecision::TF32) p.cd_type = CUDA_R_32F;
  return p;
}

namespace {

// Whether `given` holds the tensors of `canonical` in the same order, each at a multiple of
// kParamAlign after the previous one ends (padding may grow, never shrink to an overlap).
void check_layout(const ParamLayout& canonical, const ParamLayout& given) {
  bool ok = given.tensors.size() == canonical.tensors.size() && given.count == canonical.count;
  std::int64_t end = 0;
  for (std::size_t i = 0; ok && i < given.tensors.size(); ++i) {
    const ParamTensor& g = given.tensors[i];
    const ParamTensor& w = canonical.tensors[i];
    ok = g.name == w.name && g.size == w.size && g.offset % kParamAlign == 0 && g.offset >= end;
    end = g.offset + g.size;
  }
  if (!ok || end > given.total) throw std::invalid_argument("GpuModel: the parameter layout does not fit the model");
}

}  // namespace

GpuModel::GpuModel(const ModelConfig& c, GpuPrecision p, std::uint64_t seed, cudaStream_t stream,
                   const ParamLayout* layout, std::unique_ptr<FusedAttention> attention)
    : c_(c), layout_(param_layout(c)) {
  if (auto e = config_error(c)) throw std::invalid_argument(*e);
  if (p == GpuPrecision::FP8) {
    if (auto e = fp8_dims_error(c)) throw std::invalid_argument(*e);
  }
  const ParamLayout canonical = layout_;
  if (layout != nullptr) {
    check_layout(canonical, *layout);
    layout_ = *layout;
  }
  const bool fused = c.kind == ModelKind::Transformer && c.attention == Attention::Fused;
  if (fused && !attention) throw std::invalid_argument("GpuModel: attention=fused needs a fused attention kernel");
  if (fused && (p == GpuPrecision::FP32 || p == GpuPrecision::TF32)) {
    throw std::invalid_argument("GpuModel: fused attention takes fp16 or bf16 activations (not fp32 or tf32)");
  }
  impl_ = std::make_unique<Impl>(c, p, stream, allocated_);
  Impl& m = *impl_;
  if (fused) m.fused = std::move(attention);
  int dev = 0, major = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "cudaDeviceGetAttribute");
  m.ws = Buf(blas::recommended_workspace_bytes(major), allocated_);

  const std::int64_t P = layout_.total;
  m.p32 = m.alloc(P, 4);
  m.g32 = m.alloc(P, 4);
  m.m32 = m.alloc(P, 4);
  m.v32 = m.alloc(P, 4);
  if (m.dt != DType::F32) m.w16 = m.act(P);
  const std::vector<double> init = initial_params(c, seed);
  std::vector<float> init32(sz(P), 0.0f);  // in layout_ (padding zero)
  for (std::size_t i = 0; i < layout_.tensors.size(); ++i) {
    const ParamTensor &to = layout_.tensors[i], &from = canonical.tensors[i];
    std::copy(init.begin() + from.offset, init.begin() + from.offset + from.size, init32.begin() + to.offset);
  }
  cuda_check(cudaMemcpyAsync(m.p32.get(), init32.data(), sz(P) * 4, cudaMemcpyHostToDevice, stream), "upload params");
  cuda_check(cudaMemsetAsync(m.m32.get(), 0, sz(P) * 4, stream), "memset");
  cuda_check(cudaMemsetAsync(m.v32.get(), 0, sz(P) * 4, stream), "memset");
  if (m.dt != DType::F32) cuda_check(launch_cast_from_f32(m.dt, m.p32.f(), m.w16.get(), P, stream), "cast");

  const std::int64_t n = c.rows(), C = c.hidden, V = c.vocab;
  if (p == GpuPrecision::FP8) {
    std::int64_t codes = 0;  // the largest operand of any linear GEMM: X, W or dY
    for (const auto& [in, out] : linear_shapes(c)) codes = std::max({codes, n * in, in * out, n * out});
    m.f8.a = m.alloc(codes, 1);
    m.f8.b = m.alloc(codes, 1);
    // Each scale and amax in its own allocation: cuBLASLt refused fp8 scales 4 bytes apart
    // (lt_scale_pointer_aligned).
    for (Buf* b : {&m.f8.a_scale_inv, &m.f8.b_scale_inv, &m.f8.amax_x, &m.f8.amax_w, &m.f8.amax_dy}) *b = m.alloc(1, 4);
  }
  for (std::int64_t l = 0; l <= c.layers; ++l) m.xs.push_back(m.act(n * C));
  m.logits = m.act(n * V);
  m.dx = m.act(n * C);
  m.dtmp = m.act(n * C);
  m.loss_sum = m.alloc(1, sizeof(double));
  m.flag = m.alloc(1, sizeof(int));
  if (c.kind == ModelKind::Mlp) {
    for (std::int64_t l = 0; l < c.layers; ++l) m.pre.push_back(m.act(n * C));
  } else {
    const std::int64_t F = c.ffn(), T = c.seq, H = c.heads;
    m.blocks.resize(sz(c.recompute == Recompute::Block ? 1 : c.layers));
    for (Impl::BlockBufs& b : m.blocks) {
      b.ln1_out = m.act(n * C);
      b.ln1_mean = m.alloc(n, 4);
      b.ln1_rstd = m.alloc(n, 4);
      b.qkv = m.act(n * 3 * C);
      if (m.fused) {
        b.stats = m.alloc(c.batch * H * T, 4);
      } else {
        b.p = m.act(c.batch * H * T * T);
      }
      b.att = m.act(n * C);
      b.x_mid = m.act(n * C);
      b.ln2_out = m.act(n * C);
      b.ln2_mean = m.alloc(n, 4);
      b.ln2_rstd = m.alloc(n, 4);
    }
    m.mlps.resize(sz(c.recompute == Recompute::None ? c.layers : 1));
    for (Impl::MlpBufs& b : m.mlps) {
      b.h = m.act(n * F);
      b.g = m.act(n * F);
    }
    m.lnf_out = m.act(n * C);
    m.lnf_mean = m.alloc(n, 4);
    m.lnf_rstd = m.alloc(n, 4);
    m.dqkv = m.act(n * 3 * C);
    m.dh = m.act(n * F);
    m.datt = m.act(n * C);
    for (Buf* b : {&m.qh, &m.kh, &m.vh, &m.oh, &m.doh, &m.dqh, &m.dkh, &m.dvh}) *b = m.act(n * C);
    if (!m.fused) m.ds = m.act(c.batch * H * T * T);
  }
  cuda_check(cudaStreamSynchronize(stream), "model setup");
}

GpuModel::~GpuModel() = default;

void GpuModel::upload(const std::vector<Batch>& micro) {
  Impl& m = *impl_;
  m.tokens.clear();
  m.targets.clear();
  m.inputs.clear();
  for (const Batch& b : micro) {
    Buf targets = m.alloc(static_cast<std::int64_t>(b.targets.size()), 4);
    cuda_check(cudaMemcpyAsync(targets.get(), b.targets.data(), targets.bytes(), cudaMemcpyHostToDevice, m.s), "upload");
    m.targets.push_back(std::move(targets));
    if (c_.kind == ModelKind::Transformer) {
      Buf tokens = m.alloc(static_cast<std::int64_t>(b.tokens.size()), 4);
      cuda_check(cudaMemcpyAsync(tokens.get(), b.tokens.data(), tokens.bytes(), cudaMemcpyHostToDevice, m.s), "upload");
      m.tokens.push_back(std::move(tokens));
    } else {
      const std::vector<float> in(b.inputs.begin(), b.inputs.end());
      const auto count = static_cast<std::int64_t>(in.size());
      Buf inputs = m.act(count);
      if (m.dt == DType::F32) {
        cuda_check(cudaMemcpyAsync(inputs.get(), in.data(), inputs.bytes(), cudaMemcpyHostToDevice, m.s), "upload");
      } else {
        Buf staging = m.alloc(count, 4);
        cuda_check(cudaMemcpyAsync(staging.get(), in.data(), staging.bytes(), cudaMemcpyHostToDevice, m.s), "upload");
        cuda_check(launch_cast_from_f32(m.dt, staging.f(), inputs.get(), count, m.s), "cast");
        cuda_check(cudaStreamSynchronize(m.s), "upload");  // staging is freed next
        allocated_ -= static_cast<std::int64_t>(staging.bytes());
      }
      m.inputs.push_back(std::move(inputs));
    }
  }
  cuda_check(cudaStreamSynchronize(m.s), "upload");
}

void GpuModel::set_inputs(std::size_t micro, const float* features) {
  Impl& m = *impl_;
  if (c_.kind != ModelKind::Mlp) throw std::logic_error("GpuModel::set_inputs: only the mlp takes input features");
  const std::int64_t count = c_.batch * c_.hidden;
  Buf& inputs = m.inputs.at(micro);
  if (m.dt == DType::F32) {
    cuda_check(cudaMemcpyAsync(inputs.get(), features, sz(count) * 4, cudaMemcpyDeviceToDevice, m.s), "set_inputs");
  } else {
    cuda_check(launch_cast_from_f32(m.dt, features, inputs.get(), count, m.s), "set_inputs");
  }
}

void GpuModel::zero_grads() {
  Impl& m = *impl_;
  cuda_check(cudaMemsetAsync(m.g32.get(), 0, m.g32.bytes(), m.s), "memset grads");
  cuda_check(cudaMemsetAsync(m.loss_sum.get(), 0, sizeof(double), m.s), "memset loss");
  m.micro_count = 0;
}

void GpuModel::forward(std::size_t micro) {
  Impl& m = *impl_;
  m.micro = micro;
  ++m.micro_count;
  m.last_scale = m.prec == GpuPrecision::FP16 ? scaler_.scale() : 1.0;
  const std::int64_t n = c_.rows(), C = c_.hidden, V = c_.vocab, L = c_.layers;
  auto x = [&](std::int64_t l) -> void* {
    if (c_.kind == ModelKind::Mlp && l == 0) return m.inputs.at(micro).get();
    return m.xs[sz(l)].get();
  };
  const auto& lay = layout_;
  if (c_.kind == ModelKind::Mlp) {
    for (std::int64_t l = 0; l < L; ++l) {
      void* pre = m.pre[sz(l)].get();
      m.linear_forward(x(l), lay.at(names::layer(l, "fc.w")), lay.at(names::layer(l, "fc.b")), pre, n, C, C);
      cuda_check(launch_gelu_forward(m.dt, pre, x(l + 1), n * C, m.s), "gelu");
    }
    m.linear_forward(x(L), lay.at("head.w"), lay.at("head.b"), m.logits.get(), n, C, V);
  } else {
    cuda_check(launch_embedding_forward(m.dt, static_cast<const std::int32_t*>(m.tokens.at(micro).get()),
                                        m.W(lay.at("wte")), m.W(lay.at("wpe")), x(0), c_.batch, c_.seq, C, m.s),
               "embedding");
    for (std::int64_t l = 0; l < L; ++l) block_forward(l, false);
    cuda_check(launch_layernorm_forward(m.dt, x(L), m.W(lay.at("lnf.g")), m.W(lay.at("lnf.b")), m.lnf_out.get(),
                                        m.lnf_mean.f(), m.lnf_rstd.f(), n, C, m.s),
               "layernorm");
    m.timed(false, [&] {
      m.mm(false, true, n, V, C, 1, m.lnf_out.get(), C, 0, m.W(lay.at("wte")), C, 0, 0, m.logits.get(), V, 0, 1, false);
    });
  }
  const double grad_scale = m.last_scale / static_cast<double>(c_.accum);
  cuda_check(launch_cross_entropy(m.dt, m.logits.get(), static_cast<const std::int32_t*>(m.targets.at(micro).get()), n,
                                  V, static_cast<float>(grad_scale), static_cast<double*>(m.loss_sum.get()), m.s),
             "cross_entropy");
}

void GpuModel::block_forward(std::int64_t l, bool stop_before_fc2) {
  Impl& m = *impl_;
  const std::int64_t n = c_.rows(), C = c_.hidden, F = c_.ffn(), B = c_.batch, T = c_.seq, H = c_.heads,
                     D = c_.head_dim();
  Impl::BlockBufs& a = m.blocks[sz(c_.recompute == Recompute::Block ? 0 : l)];
  Impl::MlpBufs& mp = m.mlps[sz(c_.recompute == Recompute::None ? l : 0)];
  auto P = [&](const char* what) -> const ParamTensor& { return layout_.at(names::layer(l, what)); };
  void* xl = m.xs[sz(l)].get();
  cuda_check(launch_layernorm_forward(m.dt, xl, m.W(P("ln1.g")), m.W(P("ln1.b")), a.ln1_out.get(), a.ln1_mean.f(),
                                      a.ln1_rstd.f(), n, C, m.s),
             "layernorm");
  m.linear_forward(a.ln1_out.get(), P("qkv.w"), P("qkv.b"), a.qkv.get(), n, C, 3 * C);
  // Attention over B*H packed heads.
  m.timed(true, [&] {
    cuda_check(launch_split_heads(m.dt, a.qkv.get(), 3 * C, 0, m.qh.get(), B, T, H, D, m.s), "split");
    cuda_check(launch_split_heads(m.dt, a.qkv.get(), 3 * C, C, m.kh.get(), B, T, H, D, m.s), "split");
    cuda_check(launch_split_heads(m.dt, a.qkv.get(), 3 * C, 2 * C, m.vh.get(), B, T, H, D, m.s), "split");
    if (m.fused) {
      m.fused->forward(m.qh.get(), m.kh.get(), m.vh.get(), m.oh.get(), a.stats.f());
    } else {
      const double scale = 1 / std::sqrt(static_cast<double>(D));
      m.mm(false, true, T, T, D, scale, m.qh.get(), D, T * D, m.kh.get(), D, T * D, 0, a.p.get(), T, T * T, B * H, false);
      cuda_check(launch_causal_softmax_forward(m.dt, a.p.get(), B * H * T, T, m.s), "softmax");
      m.mm(false, false, T, D, T, 1, a.p.get(), T, T * T, m.vh.get(), D, T * D, 0, m.oh.get(), D, T * D, B * H, false);
    }
    cuda_check(launch_merge_heads(m.dt, m.oh.get(), a.att.get(), C, 0, B, T, H, D, m.s), "merge");
  });
  m.linear_forward(a.att.get(), P("proj.w"), P("proj.b"), a.x_mid.get(), n, C, C);
  cuda_check(launch_residual_add(m.dt, a.x_mid.get(), xl, a.x_mid.get(), n * C, m.s), "residual");
  cuda_check(launch_layernorm_forward(m.dt, a.x_mid.get(), m.W(P("ln2.g")), m.W(P("ln2.b")), a.ln2_out.get(),
                                      a.ln2_mean.f(), a.ln2_rstd.f(), n, C, m.s),
             "layernorm");
  m.linear_forward(a.ln2_out.get(), P("fc1.w"), P("fc1.b"), mp.h.get(), n, C, F);
  cuda_check(launch_gelu_forward(m.dt, mp.h.get(), mp.g.get(), n * F, m.s), "gelu");
  if (stop_before_fc2) return;
  void* xn = m.xs[sz(l + 1)].get();
  m.linear_forward(mp.g.get(), P("fc2.w"), P("fc2.b"), xn, n, F, C);
  cuda_check(launch_residual_add(m.dt, xn, a.x_mid.get(), xn, n * C, m.s), "residual");
}

void GpuModel::block_backward(std::int64_t l) {
  Impl& m = *impl_;
  const std::int64_t n = c_.rows(), C = c_.hidden, F = c_.ffn();
  Impl::BlockBufs& a = m.blocks[sz(c_.recompute == Recompute::Block ? 0 : l)];
  Impl::MlpBufs& mp = m.mlps[sz(c_.recompute == Recompute::None ? l : 0)];
  auto P = [&](const char* what) -> const ParamTensor& { return layout_.at(names::layer(l, what)); };
  if (c_.recompute == Recompute::Block) {
    block_forward(l, true);
  } else if (c_.recompute == Recompute::Mlp) {
    m.linear_forward(a.ln2_out.get(), P("fc1.w"), P("fc1.b"), mp.h.get(), n, C, F);
    cuda_check(launch_gelu_forward(m.dt, mp.h.get(), mp.g.get(), n * F, m.s), "gelu");
  }
  void* xl = m.xs[sz(l)].get();
  m.linear_backward(mp.g.get(), P("fc2.w"), P("fc2.b"), m.dx.get(), m.dh.get(), n, F, C);
  cuda_check(launch_gelu_backward(m.dt, mp.h.get(), m.dh.get(), m.dh.get(), n * F, m.s), "gelu");
  m.linear_backward(a.ln2_out.get(), P("fc1.w"), P("fc1.b"), m.dh.get(), m.dtmp.get(), n, C, F);
  cuda_check(launch_layernorm_backward(m.dt, m.dtmp.get(), a.x_mid.get(), a.ln2_mean.f(), a.ln2_rstd.f(),
                                       m.W(P("ln2.g")), m.dx.get(), m.G(P("ln2.g")), m.G(P("ln2.b")), n, C, m.s),
             "layernorm");
  m.linear_backward(a.att.get(), P("proj.w"), P("proj.b"), m.dx.get(), m.datt.get(), n, C, C);
  m.timed(true, [&] { m.attention_backward(a); });
  m.linear_backward(a.ln1_out.get(), P("qkv.w"), P("qkv.b"), m.dqkv.get(), m.dtmp.get(), n, C, 3 * C);
  cuda_check(launch_layernorm_backward(m.dt, m.dtmp.get(), xl, a.ln1_mean.f(), a.ln1_rstd.f(), m.W(P("ln1.g")),
                                       m.dx.get(), m.G(P("ln1.g")), m.G(P("ln1.b")), n, C, m.s),
             "layernorm");
}

void GpuModel::backward(std::size_t micro) {
  Impl& m = *impl_;
  if (micro != m.micro) throw std::logic_error("GpuModel::backward: not the micro-batch of the last forward");
  const std::int64_t n = c_.rows(), C = c_.hidden, V = c_.vocab, L = c_.layers;
  const auto& lay = layout_;
  if (c_.kind == ModelKind::Mlp) {
    auto x = [&](std::int64_t l) -> void* { return l == 0 ? m.inputs.at(micro).get() : m.xs[sz(l)].get(); };
    m.linear_backward(x(L), lay.at("head.w"), lay.at("head.b"), m.logits.get(), m.dx.get(), n, C, V);
    std::size_t stage = 0;
    if (hook_) hook_(stage++);
    for (std::int64_t l = L - 1; l >= 0; --l) {
      cuda_check(launch_gelu_backward(m.dt, m.pre[sz(l)].get(), m.dx.get(), m.dtmp.get(), n * C, m.s), "gelu");
      m.linear_backward(x(l), lay.at(names::layer(l, "fc.w")), lay.at(names::layer(l, "fc.b")), m.dtmp.get(),
                        l > 0 ? m.dx.get() : nullptr, n, C, C);
      if (hook_) hook_(stage++);
    }
    return;
  }
  const ParamTensor& wte = lay.at("wte");
  m.timed(false, [&] {
    m.mm(false, false, n, C, V, 1, m.logits.get(), V, 0, m.W(wte), C, 0, 0, m.dtmp.get(), C, 0, 1, false);  // dxf
    m.mm(true, false, V, C, n, 1, m.logits.get(), V, 0, m.lnf_out.get(), C, 0, 1, m.G(wte), C, 0, 1, true);  // dwte
  });
  cuda_check(cudaMemsetAsync(m.dx.get(), 0, m.dx.bytes(), m.s), "memset");
  cuda_check(launch_layernorm_backward(m.dt, m.dtmp.get(), m.xs[sz(L)].get(), m.lnf_mean.f(), m.lnf_rstd.f(),
                                       m.W(lay.at("lnf.g")), m.dx.get(), m.G(lay.at("lnf.g")), m.G(lay.at("lnf.b")), n,
                                       C, m.s),
             "layernorm");
  // The stages of backward_stages(): the final LayerNorm, each block, the embeddings.
  std::size_t stage = 0;
  if (hook_) hook_(stage++);
  for (std::int64_t l = L - 1; l >= 0; --l) {
    block_backward(l);
    if (hook_) hook_(stage++);
  }
  cuda_check(launch_embedding_backward(m.dt, static_cast<const std::int32_t*>(m.tokens.at(micro).get()), m.dx.get(),
                                       m.G(wte), m.G(lay.at("wpe")), c_.batch, c_.seq, C, m.s),
             "embedding");
  if (hook_) hook_(stage++);
}

bool GpuModel::optimizer_step(const AdamW& hp) {
  if (!optimizer_step(hp, {FlatRange{0, layout_.total}}, {})) return false;
  refresh_weight_copy();
  return true;
}

void GpuModel::refresh_weight_copy() {
  Impl& m = *impl_;
  if (m.dt != DType::F32) cuda_check(launch_cast_from_f32(m.dt, m.p32.f(), m.w16.get(), layout_.total, m.s), "cast");
}

bool GpuModel::optimizer_step(const AdamW& hp, const std::vector<FlatRange>& ranges,
                              const std::function<void(int*)>& combine_overflow) {
  Impl& m = *impl_;
  for (const FlatRange& r : ranges) {
    if (r.offset < 0 || r.count < 0 || r.offset + r.count > layout_.total) {
      throw std::out_of_range("GpuModel::optimizer_step: a range beyond the parameter buffer");
    }
  }
  const double scale = m.last_scale;
  if (m.prec == GpuPrecision::FP16) {
    int overflow = 0;
    cuda_check(cudaMemsetAsync(m.flag.get(), 0, sizeof(int), m.s), "memset");
    for (const FlatRange& r : ranges) {
      cuda_check(launch_overflow_check(m.g32.f() + r.offset, r.count, static_cast<int*>(m.flag.get()), m.s),
                 "overflow check");
    }
    if (combine_overflow) combine_overflow(static_cast<int*>(m.flag.get()));
    cuda_check(cudaMemcpyAsync(&overflow, m.flag.get(), sizeof(int), cudaMemcpyDeviceToHost, m.s), "read flag");
    cuda_check(cudaStreamSynchronize(m.s), "overflow check");
    if (!scaler_.update(overflow != 0)) return false;
  }
  ++m.t;
  AdamWArgs a{};
  a.lr = static_cast<float>(hp.lr);
  a.beta1 = static_cast<float>(hp.beta1);
  a.beta2 = static_cast<float>(hp.beta2);
  a.eps = static_cast<float>(hp.eps);
  a.weight_decay = static_cast<float>(hp.weight_decay);
  a.c1 = static_cast<float>(1 - std::pow(hp.beta1, static_cast<double>(m.t)));
  a.c2 = static_cast<float>(1 - std::pow(hp.beta2, static_cast<double>(m.t)));
  a.grad_scale = static_cast<float>(1 / scale);
  for (const FlatRange& r : ranges) {
    const std::int64_t o = r.offset;
    cuda_check(launch_adamw(m.p32.f() + o, m.g32.f() + o, m.m32.f() + o, m.v32.f() + o, r.count, a, m.s), "adamw");
  }
  return true;
}

bool GpuModel::step(const AdamW& hp) {
  zero_grads();
  for (std::size_t i = 0; i < sz(c_.accum); ++i) {
    forward(i);
    backward(i);
  }
  return optimizer_step(hp);
}

void GpuModel::set_op_timing(bool on) {
  Impl& m = *impl_;
  m.op_timing = on;
  m.marks.clear();
  m.events_used = 0;
}

OpSeconds GpuModel::op_seconds() {
  Impl& m = *impl_;
  cuda_check(cudaStreamSynchronize(m.s), "op timing");
  OpSeconds o;
  for (const Impl::Mark& k : m.marks) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, k.start, k.end), "cudaEventElapsedTime");
    (k.attention ? o.attention : o.dense) += ms * 1e-3;
  }
  return o;
}

double GpuModel::loss() {
  Impl& m = *impl_;
  double sum = 0;
  cuda_check(cudaMemcpyAsync(&sum, m.loss_sum.get(), sizeof(double), cudaMemcpyDeviceToHost, m.s), "read loss");
  cuda_check(cudaStreamSynchronize(m.s), "read loss");
  const double count = static_cast<double>(m.micro_count) * static_cast<double>(c_.rows());
  return count > 0 ? sum / count : 0;
}

std::vector<double> GpuModel::parameters() {
  Impl& m = *impl_;
  std::vector<float> p(sz(layout_.total));
  cuda_check(cudaMemcpyAsync(p.data(), m.p32.get(), p.size() * 4, cudaMemcpyDeviceToHost, m.s), "read parameters");
  cuda_check(cudaStreamSynchronize(m.s), "read parameters");
  return std::vector<double>(p.begin(), p.end());
}

std::int64_t GpuModel::memory_bytes() const {
  return allocated_ + (impl_->fused ? impl_->fused->memory_bytes() : 0);
}

std::string GpuModel::attention_description() const { return impl_->fused ? impl_->fused->description() : ""; }

float* GpuModel::gradient_buffer() { return impl_->g32.f(); }
float* GpuModel::parameter_buffer() { return impl_->p32.f(); }
cudaStream_t GpuModel::stream() const { return impl_->s; }

std::vector<double> GpuModel::gradients() {
  Impl& m = *impl_;
  std::vector<float> g(sz(layout_.total));
  cuda_check(cudaMemcpyAsync(g.data(), m.g32.get(), g.size() * 4, cudaMemcpyDeviceToHost, m.s), "read gradients");
  cuda_check(cudaStreamSynchronize(m.s), "read gradients");
  std::vector<double> out(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) out[i] = static_cast<double>(g[i]) / m.last_scale;
  return out;
}

}  // namespace gpubench::kernels::train
