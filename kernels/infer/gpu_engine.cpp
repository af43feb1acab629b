// The infer model on a CUDA device (gpu_engine.hpp).
#include "kernels/infer/gpu_engine.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/device_buffer.hpp"
#include "kernels/common/fp8_scaling.cuh"
#include "kernels/common/float_formats.hpp"
#include "kernels/train/gpu_model.hpp"

namespace gpubench::kernels::infer {
namespace {

std::size_t sz(idx n) { return static_cast<std::size_t>(n); }
// Offsets of separately used device arrays inside one allocation: 256 bytes apart, as
// cudaMalloc aligns (cuBLASLt wants 16-byte aligned operands and refused fp8 scales 4 bytes
// apart: blas::lt_scale_pointer_aligned).
std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace

std::optional<std::string> gpu_unsupported(const ModelSpec& s) {
  if (s.arch != Arch::Llama) return "the CUDA path runs the llama models (" + s.name + " is GPT-style)";
  if (s.head_dim() % 32 != 0 || s.head_dim() > 256) {
    return "the CUDA attention kernel takes head dimensions that are multiples of 32 up to 256";
  }
  return std::nullopt;
}

struct GpuEngine::Impl {
  struct Gemm {
    std::unique_ptr<blas::LtMatmul> op;
    blas::LtCandidate algo;
  };
  // fp8: one linear weight's codes ([out, in], K-major) and its descale (1 / scale), on the device.
  struct Fp8Weight {
    const std::uint8_t* codes = nullptr;
    const float* scale_inv = nullptr;
  };
  Impl(const ModelSpec& s, DType t, cudaStream_t stream) : s(s), t(t), stream(stream) {}
  ~Impl() {
    if (uploaded != nullptr) cudaEventDestroy(uploaded);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const ModelSpec& s;
  DType t;
  cudaStream_t stream;
  Layout layout;
  blas::LtHandle lt;
  DeviceBuf ws, weights, k, v, x, h, qkv, att, gu, a, last, hl, logits;
  // The step's inputs (StepLayout: tokens, row_seq, row_pos, last_rows, table), packed on the host
  // into pinned `staging` and copied in one transfer; the greedy tokens, sampled on the device,
  // come back into pinned `next_host`. `uploaded` marks the staging's copy done (before the next
  // step rewrites it).
  StepLayout io;
  DeviceBuf inputs, next;
  // Flash-decoding's partials (launch_paged_attention), sized for the largest split of a step
  // of max_rows rows on this device's `sms` SMs (attention_split_slots).
  DeviceBuf partials;
  int sms = 1;
  PinnedBuf staging, next_host;
  cudaEvent_t uploaded = nullptr;
  const std::int32_t* in(idx offset) const { return static_cast<const std::int32_t*>(inputs.get()) + offset; }
  // (rows, n, k, accumulate, f32 out, the operands' alignments): a weight sits at its layout
  // offset, so layers of one shape can differ in alignment, and the algorithm chosen for one must
  // run on the other's pointers (LtMatmul::prefer_alignment).
  std::map<std::tuple<idx, idx, idx, bool, bool, std::uint32_t, std::uint32_t, std::uint32_t>, Gemm> gemms;
  std::map<std::string, std::size_t> dense;  // tensor -> byte offset in `weights` (fp8: the 16-bit ones only)
  // fp8 (LinearWeights::Fp8): the linear weights' codes and descales, the step's activation
  // codes with their amax and descale (each float its own allocation), and the fp8 GEMMs, one per
  // shape and weight (its descale pointer is set once per LtMatmul), their algorithm found once
  // per shape.
  bool fp8 = false;
  DeviceBuf w_codes, w_scales, x_codes, x_amax, x_scale_inv;
  std::map<std::string, Fp8Weight> fp8_weights;
  std::map<std::tuple<idx, idx, idx, bool, const float*>, Gemm> fp8_gemms;  // (rows, n, k, accumulate, weight)
  std::map<std::tuple<idx, idx, idx, bool>, blas::AlgoConfig> fp8_algos;
  // The last prepare()'s step.
  idx rows = 0, outs = 0, max_keys = 0;  // max_keys: the longest row's keys (its position + 1)
  std::vector<float> h_logits;
  std::vector<std::int32_t> h_next;

  const void* w(const std::string& name) const {
    const auto it = dense.find(name);
    if (it == dense.end()) throw std::logic_error("GpuEngine: no 16-bit tensor " + name);
    return static_cast<const char*>(weights.get()) + it->second;
  }

  // A linear layer Y[rows, n] (= or +=) X[rows, k] W[k, n]: the bf16 product (mm), or under fp8
  // X's amax and codes (row-major [rows, k] is already K-major) then the fp8 GEMM against W's codes.
  void linear(idx m_rows, idx n, idx k, const void* xp, const std::string& name, void* yp, bool accumulate) {
    if (!fp8) {
      mm(m_rows, n, k, xp, w(name), yp, accumulate, false);
      return;
    }
    const Fp8Weight& wt = fp8_weights.at(name);
    cuda_check(launch_amax(Storage::BF16, xp, m_rows * k, x_amax.f(), stream), "fp8 amax");
    cuda_check(launch_fp8_quantize(Storage::BF16, xp, m_rows, k, false, Storage::E4M3, x_amax.f(),
                                   static_cast<std::uint8_t*>(x_codes.get()), x_scale_inv.f(), stream),
               "fp8 quantize");
    const auto key = std::make_tuple(m_rows, n, k, accumulate, wt.scale_inv);
    auto it = fp8_gemms.find(key);
    if (it == fp8_gemms.end()) {
      blas::LtProblem p = train::fp8_forward_problem(m_rows, k, n);  // Xq [rows, k], (W^T)q [n, k]
      p.beta = accumulate ? 1 : 0;                                   // the residual: C = D = Y (bf16)
      Gemm gm;
      gm.op = std::make_unique<blas::LtMatmul>(lt, p, ws.bytes());
      blas::LtExtraPointers ptrs;
      ptrs.a_scale = wt.scale_inv;  // cuBLASLt's A is the row-major B (the weight), as in train's mm_fp8
      ptrs.b_scale = x_scale_inv.f();
      gm.op->set_pointers(ptrs);
      // Every layer's weight of a shape shares the algorithm the heuristic chose for the first
      // (checked against this problem by cublasLtMatmulAlgoCheck): a new step shape costs one
      // heuristic query per shape, not one per layer, as the bf16 path's.
      const auto shape = std::make_tuple(m_rows, n, k, accumulate);
      std::optional<blas::LtCandidate> cand;
      if (auto a = fp8_algos.find(shape); a != fp8_algos.end()) cand = gm.op->rebuild(a->second);
      if (!cand) cand = gm.op->first_heuristic();
      if (!cand) throw std::runtime_error("cuBLASLt has no fp8 algorithm for a " + std::to_string(m_rows) + "x" +
                                          std::to_string(n) + "x" + std::to_string(k) + " product");
      gm.algo = *cand;
      fp8_algos.emplace(shape, cand->config);
      it = fp8_gemms.emplace(key, std::move(gm)).first;
    }
    it->second.op->run(wt.codes, x_codes.get(), yp, yp, it->second.algo.algo, ws.get(), stream);
  }

  // Y[rows, n] (ld n) = X[rows, k] W[k, n] (+ Y when accumulate), row-major, as kernels/train's
  // RowMajorGemm maps to cuBLASLt (operands swapped: column-major D^T = W^T X^T). In place when
  // accumulating (C = D), as the train model's residual products.
  void mm(idx m_rows, idx n, idx k, const void* xp, const void* wp, void* yp, bool accumulate, bool f32_out) {
    const auto key = std::make_tuple(m_rows, n, k, accumulate, f32_out, blas::lt_pointer_alignment(wp),
                                     blas::lt_pointer_alignment(xp), blas::lt_pointer_alignment(yp));
    auto it = gemms.find(key);
    if (it == gemms.end()) {
      train::RowMajorGemm g;
      g.m = m_rows, g.n = n, g.k = k, g.lda = k, g.ldb = n, g.ldc = n, g.beta = accumulate ? 1 : 0;
      const blas::LtProblem p =
          train::to_lt_problem(g, t == DType::BF16 ? train::GpuPrecision::BF16 : train::GpuPrecision::FP16, f32_out);
      Gemm gm;
      gm.op = std::make_unique<blas::LtMatmul>(lt, p, ws.bytes());
      gm.op->prefer_alignment(wp, xp, yp, yp);  // run()'s order: the swapped operands
      auto cand = gm.op->first_heuristic();
      if (!cand) throw std::runtime_error("cuBLASLt has no algorithm for a " + std::to_string(m_rows) + "x" +
                                          std::to_string(n) + "x" + std::to_string(k) + " product");
      gm.algo = *cand;
      it = gemms.emplace(key, std::move(gm)).first;
    }
    it->second.op->run(wp, xp, yp, yp, it->second.algo.algo, ws.get(), stream);
  }
};

GpuEngine::GpuEngine(const ModelSpec& s, DType t, const std::vector<float>* weights, std::uint64_t seed, idx page_size,
                     idx pages, idx max_rows, idx max_sequences, cudaStream_t stream, LinearWeights linear)
    : s_(s), table_(page_size, pages) {
  if (auto why = gpu_unsupported(s)) throw std::invalid_argument(*why);
  if (t != DType::BF16 && t != DType::F16) throw std::invalid_argument("GpuEngine: fp16 or bf16");
  const bool fp8 = linear == LinearWeights::Fp8;
  if (fp8 && t != DType::BF16) throw std::invalid_argument("GpuEngine: fp8 weights take bf16 activations");
  if (fp8) {
    if (auto why = fp8_dims_error(s)) throw std::invalid_argument(*why);
  }
  impl_ = std::make_unique<Impl>(s_, t, stream);
  Impl& m = *impl_;
  m.fp8 = fp8;
  m.layout = layout(s_);
  if (weights != nullptr && static_cast<idx>(weights->size()) != m.layout.total) {
    throw std::invalid_argument("GpuEngine: weights do not match the model");
  }
  int dev = 0, major = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "cudaDeviceGetAttribute");
  m.ws = DeviceBuf(blas::recommended_workspace_bytes(major), allocated_);
  // Where each tensor lives: 16-bit tensors at their layout offsets in `weights` (under fp8 the
  // linear weights apart, packed, each 256-byte aligned), fp8 codes and descales in their own.
  std::size_t dense_bytes = 0, code_bytes = 0, largest_linear = 0, linear_count = 0;
  for (const Tensor& tensor : m.layout.tensors) {
    if (fp8 && is_linear_weight(tensor.name)) {
      code_bytes += aligned(sz(tensor.size()));
      largest_linear = std::max(largest_linear, sz(tensor.size()));
      ++linear_count;
    } else {
      m.dense.emplace(tensor.name, fp8 ? dense_bytes : sz(tensor.offset) * 2);
      dense_bytes = fp8 ? dense_bytes + aligned(sz(tensor.size()) * 2) : sz(m.layout.total) * 2;
    }
  }
  m.weights = DeviceBuf(dense_bytes, allocated_);
  std::int64_t scratch_counted = 0;  // the bf16 staging of one linear weight, freed after setup
  DeviceBuf scratch, w_amax;
  if (fp8) {
    m.w_codes = DeviceBuf(code_bytes, allocated_);
    m.w_scales = DeviceBuf(linear_count * 256, allocated_);
    scratch = DeviceBuf(largest_linear * 2, scratch_counted);
    w_amax = DeviceBuf(4, scratch_counted);
  }
  // Rounded to the device type on the host (float_formats.hpp, nearest even).
  std::vector<std::uint16_t> bits;
  if (weights != nullptr) {
    bits.resize(weights->size());
    for (std::size_t i = 0; i < weights->size(); ++i) {
      bits[i] = t == DType::BF16 ? float_to_bfloat16_bits((*weights)[i]) : float_to_half_bits((*weights)[i]);
    }
  }
  std::size_t code_at = 0, scale_slot = 0;
  for (const Tensor& tensor : m.layout.tensors) {
    const bool quantised = fp8 && is_linear_weight(tensor.name);
    // The tensor's 16-bit values: in place, or (fp8) in the scratch its codes are made from.
    void* dst = quantised ? scratch.get() : static_cast<char*>(m.weights.get()) + m.dense.at(tensor.name);
    if (weights != nullptr) {
      cuda_check(cudaMemcpyAsync(dst, bits.data() + tensor.offset, sz(tensor.size()) * 2, cudaMemcpyHostToDevice, stream),
                 "upload weights");
    } else {
      const WeightInit init = weight_init(tensor);
      cuda_check(launch_fill_weights(t, dst, tensor.size(), seed, tensor.offset, init.scale, init.shift, stream),
                 "fill weights");
    }
    if (!quantised) continue;
    // W [in, out] -> (W^T) codes [out, in] with the tensor's own scale 448 / amax (per tensor,
    // once): the same quantiser as the activations', from the bf16 values the bf16 path uses.
    Impl::Fp8Weight fw;
    auto* codes = static_cast<std::uint8_t*>(m.w_codes.get()) + code_at;
    auto* scale_inv = reinterpret_cast<float*>(static_cast<char*>(m.w_scales.get()) + scale_slot * 256);
    cuda_check(launch_amax(Storage::BF16, dst, tensor.size(), w_amax.f(), stream), "fp8 weight amax");
    cuda_check(launch_fp8_quantize(Storage::BF16, dst, tensor.rows, tensor.cols, true, Storage::E4M3, w_amax.f(), codes,
                                   scale_inv, stream),
               "fp8 weight quantize");
    // The scratch is rewritten by the next tensor's upload or fill: on the same stream, after.
    fw.codes = codes;
    fw.scale_inv = scale_inv;
    m.fp8_weights.emplace(tensor.name, fw);
    code_at += aligned(sz(tensor.size()));
    ++scale_slot;
  }
  // Before `bits` and the scratch go (a pageable upload may still be staging).
  cuda_check(cudaStreamSynchronize(stream), "weights");
  const std::size_t pool = sz(s_.layers * pages * page_size * s_.kv_dim()) * 2;
  m.k = DeviceBuf(pool, allocated_);
  m.v = DeviceBuf(pool, allocated_);
  m.io.max_rows = max_rows;
  m.io.max_sequences = max_sequences;
  m.io.max_pages = pages;  // a sequence holds at most every page
  const std::size_t r = sz(max_rows);
  m.x = DeviceBuf(r * sz(s_.hidden) * 2, allocated_);
  m.h = DeviceBuf(r * sz(s_.hidden) * 2, allocated_);
  m.qkv = DeviceBuf(r * sz(s_.qkv_dim()) * 2, allocated_);
  m.att = DeviceBuf(r * sz(s_.q_dim()) * 2, allocated_);
  m.gu = DeviceBuf(r * sz(2 * s_.ffn_shard()) * 2, allocated_);
  m.a = DeviceBuf(r * sz(s_.ffn_shard()) * 2, allocated_);
  if (fp8) {  // a linear layer's input codes: [rows, hidden], [rows, q_dim] or [rows, ffn]
    m.x_codes = DeviceBuf(r * sz(std::max({s_.hidden, s_.q_dim(), s_.ffn_shard()})), allocated_);
    m.x_amax = DeviceBuf(4, allocated_);
    m.x_scale_inv = DeviceBuf(4, allocated_);
  }
  m.last = DeviceBuf(sz(max_sequences) * sz(s_.hidden) * 2, allocated_);
  m.hl = DeviceBuf(sz(max_sequences) * sz(s_.hidden) * 2, allocated_);
  m.logits = DeviceBuf(sz(max_sequences) * sz(s_.vocab_shard()) * 4, allocated_);
  m.inputs = DeviceBuf(sz(m.io.total()) * 4, allocated_);
  m.next = DeviceBuf(sz(max_sequences) * 4, allocated_);
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&m.sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  m.partials = DeviceBuf(sz(attention_split_slots(max_rows * s_.q_heads(), m.sms)) * sz(s_.head_dim() + 2) * 4, allocated_);
  std::int64_t pinned = 0;  // host memory: not counted into the device's bytes
  m.staging = PinnedBuf(sz(m.io.total()) * 4, pinned);
  m.next_host = PinnedBuf(sz(max_sequences) * 4, pinned);
  cuda_check(cudaEventCreateWithFlags(&m.uploaded, cudaEventDisableTiming), "cudaEventCreate");
}

GpuEngine::~GpuEngine() = default;

void GpuEngine::prepare(const std::vector<Chunk>& chunks) {
  Impl& m = *impl_;
  // The previous step's copy out of the staging must be done before it is rewritten (a step
  // ends synchronised, so this waits only when prepare() is called twice in a row).
  cuda_check(cudaEventSynchronize(m.uploaded), "step inputs");
  auto* staged = static_cast<std::int32_t*>(m.staging.get());
  const StepShape shape = pack_step(chunks, table_, m.io, staged);
  m.rows = shape.rows;
  m.max_keys = 0;
  for (const Chunk& c : chunks) m.max_keys = std::max(m.max_keys, c.start + c.n);
  m.outs = shape.outs;
  cuda_check(cudaMemcpyAsync(m.inputs.get(), staged, sz(m.io.total()) * 4, cudaMemcpyHostToDevice, m.stream),
             "upload step inputs");
  cuda_check(cudaEventRecord(m.uploaded, m.stream), "cudaEventRecord");
  for (const Chunk& c : chunks) table_.set_length(c.seq, c.start + c.n);
}

void GpuEngine::enqueue() {
  Impl& m = *impl_;
  const idx rows = m.rows, c = s_.hidden, f = s_.ffn_shard(), qd = s_.q_dim(), qkv = s_.qkv_dim();
  const std::int32_t* seq = m.in(m.io.seq());
  const std::int32_t* pos = m.in(m.io.pos());
  cuda_check(launch_embed(m.t, m.in(m.io.tokens()), m.w("wte"), m.x.get(), rows, c, m.stream), "embed");
  const std::size_t layer_pool = sz(table_.pages() * table_.page_size() * s_.kv_dim()) * 2;
  const AttentionSplit plan = attention_split(rows * s_.q_heads(), m.max_keys, m.sms);
  AttentionSplitArgs split;
  split.splits = plan.splits;
  split.keys_per_split = plan.keys_per_split;
  split.partials = m.partials.f();
  for (idx l = 0; l < s_.layers; ++l) {
    auto lw = [&](const char* what) { return m.w(layer_tensor(l, what)); };
    CacheView cache;
    cache.k = static_cast<char*>(m.k.get()) + sz(l) * layer_pool;
    cache.v = static_cast<char*>(m.v.get()) + sz(l) * layer_pool;
    cache.table = m.in(m.io.table());
    cache.page_size = table_.page_size();
    cache.max_pages = m.io.max_pages;
    cache.kv_dim = s_.kv_dim();
    cuda_check(launch_rmsnorm(m.t, m.x.get(), lw("norm1.g"), m.h.get(), rows, c, s_.norm_eps, m.stream), "rmsnorm");
    m.linear(rows, qkv, c, m.h.get(), layer_tensor(l, "wqkv"), m.qkv.get(), false);
    cuda_check(launch_rope_and_cache(m.t, m.qkv.get(), seq, pos, rows, s_.q_heads(), s_.kv_heads_shard(), s_.head_dim(),
                                     s_.rope_theta, true, cache, m.stream),
               "rope");
    cuda_check(launch_paged_attention(m.t, m.qkv.get(), m.att.get(), seq, pos, rows, s_.q_heads(), s_.kv_heads_shard(),
                                      s_.head_dim(), cache, split, m.stream),
               "attention");
    m.linear(rows, c, qd, m.att.get(), layer_tensor(l, "wo"), m.x.get(), true);
    cuda_check(launch_rmsnorm(m.t, m.x.get(), lw("norm2.g"), m.h.get(), rows, c, s_.norm_eps, m.stream), "rmsnorm");
    m.linear(rows, 2 * f, c, m.h.get(), layer_tensor(l, "wgu"), m.gu.get(), false);
    cuda_check(launch_swiglu(m.t, m.gu.get(), m.a.get(), rows, f, m.stream), "swiglu");
    m.linear(rows, c, f, m.a.get(), layer_tensor(l, "wd"), m.x.get(), true);
  }
  cuda_check(launch_gather_rows(m.t, m.x.get(), m.in(m.io.last()), m.last.get(), m.outs, c, m.stream), "gather");
  cuda_check(launch_rmsnorm(m.t, m.last.get(), m.w("normf.g"), m.hl.get(), m.outs, c, s_.norm_eps, m.stream), "rmsnorm");
  m.mm(m.outs, s_.vocab_shard(), c, m.hl.get(), m.w("wlm"), m.logits.get(), false, true);
  cuda_check(launch_argmax_rows(m.logits.f(), static_cast<std::int32_t*>(m.next.get()), m.outs, s_.vocab_shard(), m.stream),
             "argmax");
}

const std::vector<float>& GpuEngine::fetch_logits() {
  Impl& m = *impl_;
  m.h_logits.resize(sz(m.outs * s_.vocab_shard()));
  cuda_check(cudaMemcpyAsync(m.h_logits.data(), m.logits.get(), m.h_logits.size() * 4, cudaMemcpyDeviceToHost, m.stream),
             "logits");
  cuda_check(cudaStreamSynchronize(m.stream), "step");
  return m.h_logits;
}

const std::vector<std::int32_t>& GpuEngine::fetch_tokens() {
  Impl& m = *impl_;
  cuda_check(cudaMemcpyAsync(m.next_host.get(), m.next.get(), sz(m.outs) * 4, cudaMemcpyDeviceToHost, m.stream),
             "next tokens");
  cuda_check(cudaStreamSynchronize(m.stream), "step");
  const auto* got = static_cast<const std::int32_t*>(m.next_host.get());
  m.h_next.assign(got, got + m.outs);
  return m.h_next;
}

const std::vector<float>& GpuEngine::forward(const std::vector<Chunk>& chunks) {
  prepare(chunks);
  enqueue();
  return fetch_logits();
}

}  // namespace gpubench::kernels::infer
