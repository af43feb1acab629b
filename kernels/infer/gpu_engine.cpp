// The infer model on a CUDA device (gpu_engine.hpp).
#include "kernels/infer/gpu_engine.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "kernels/blas/cublaslt.hpp"
#include "kernels/common/device_buffer.hpp"
#include "kernels/common/float_formats.hpp"
#include "kernels/train/gpu_model.hpp"

namespace gpubench::kernels::infer {
namespace {

std::size_t sz(idx n) { return static_cast<std::size_t>(n); }

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
  Impl(const ModelSpec& s, DType t, cudaStream_t stream) : s(s), t(t), stream(stream) {}

  const ModelSpec& s;
  DType t;
  cudaStream_t stream;
  Layout layout;
  blas::LtHandle lt;
  DeviceBuf ws, weights, k, v, x, h, qkv, att, gu, a, last, hl, logits, tokens, row_seq, row_pos, last_rows, table;
  std::map<std::tuple<idx, idx, idx, bool, bool>, Gemm> gemms;  // (rows, n, k, accumulate, f32 out)
  // The last prepare()'s step.
  idx rows = 0, outs = 0, max_rows = 0, max_sequences = 0, max_pages = 0;
  std::vector<std::int32_t> h_tokens, h_seq, h_pos, h_last, h_table;
  std::vector<float> h_logits;

  std::size_t elem() const { return 2; }  // fp16 and bf16
  const void* w(const std::string& name) const {
    return static_cast<const char*>(weights.get()) + sz(layout.at(name).offset) * elem();
  }

  // Y[rows, n] (ld n) = X[rows, k] W[k, n] (+ Y when accumulate), row-major, as kernels/train's
  // RowMajorGemm maps to cuBLASLt (operands swapped: column-major D^T = W^T X^T). In place when
  // accumulating (C = D), as the train model's residual products.
  void mm(idx m_rows, idx n, idx k, const void* xp, const void* wp, void* yp, bool accumulate, bool f32_out) {
    const auto key = std::make_tuple(m_rows, n, k, accumulate, f32_out);
    auto it = gemms.find(key);
    if (it == gemms.end()) {
      train::RowMajorGemm g;
      g.m = m_rows, g.n = n, g.k = k, g.lda = k, g.ldb = n, g.ldc = n, g.beta = accumulate ? 1 : 0;
      const blas::LtProblem p =
          train::to_lt_problem(g, t == DType::BF16 ? train::GpuPrecision::BF16 : train::GpuPrecision::FP16, f32_out);
      Gemm gm;
      gm.op = std::make_unique<blas::LtMatmul>(lt, p, ws.bytes());
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
                     idx pages, idx max_rows, idx max_sequences, cudaStream_t stream)
    : s_(s), table_(page_size, pages) {
  if (auto why = gpu_unsupported(s)) throw std::invalid_argument(*why);
  if (t != DType::BF16 && t != DType::F16) throw std::invalid_argument("GpuEngine: fp16 or bf16");
  impl_ = std::make_unique<Impl>(s_, t, stream);
  Impl& m = *impl_;
  m.layout = layout(s_);
  if (weights != nullptr && static_cast<idx>(weights->size()) != m.layout.total) {
    throw std::invalid_argument("GpuEngine: weights do not match the model");
  }
  int dev = 0, major = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "cudaDeviceGetAttribute");
  m.ws = DeviceBuf(blas::recommended_workspace_bytes(major), allocated_);
  m.weights = DeviceBuf(sz(m.layout.total) * 2, allocated_);
  if (weights != nullptr) {
    // Rounded to the device type on the host (float_formats.hpp, nearest even), then copied.
    std::vector<std::uint16_t> bits(weights->size());
    for (std::size_t i = 0; i < weights->size(); ++i) {
      bits[i] = t == DType::BF16 ? float_to_bfloat16_bits((*weights)[i]) : float_to_half_bits((*weights)[i]);
    }
    cuda_check(cudaMemcpy(m.weights.get(), bits.data(), bits.size() * 2, cudaMemcpyHostToDevice), "upload weights");
  } else {
    for (const Tensor& tensor : m.layout.tensors) {
      const WeightInit init = weight_init(tensor);
      cuda_check(launch_fill_weights(t, static_cast<char*>(m.weights.get()) + sz(tensor.offset) * 2, tensor.size(), seed,
                                     tensor.offset, init.scale, init.shift, stream),
                 "fill weights");
    }
    cuda_check(cudaStreamSynchronize(stream), "fill weights");
  }
  const std::size_t pool = sz(s_.layers * pages * page_size * s_.kv_dim()) * 2;
  m.k = DeviceBuf(pool, allocated_);
  m.v = DeviceBuf(pool, allocated_);
  m.max_rows = max_rows;
  m.max_sequences = max_sequences;
  m.max_pages = pages;  // a sequence holds at most every page
  const std::size_t r = sz(max_rows);
  m.x = DeviceBuf(r * sz(s_.hidden) * 2, allocated_);
  m.h = DeviceBuf(r * sz(s_.hidden) * 2, allocated_);
  m.qkv = DeviceBuf(r * sz(s_.qkv_dim()) * 2, allocated_);
  m.att = DeviceBuf(r * sz(s_.q_dim()) * 2, allocated_);
  m.gu = DeviceBuf(r * sz(2 * s_.ffn_shard()) * 2, allocated_);
  m.a = DeviceBuf(r * sz(s_.ffn_shard()) * 2, allocated_);
  m.last = DeviceBuf(sz(max_sequences) * sz(s_.hidden) * 2, allocated_);
  m.hl = DeviceBuf(sz(max_sequences) * sz(s_.hidden) * 2, allocated_);
  m.logits = DeviceBuf(sz(max_sequences) * sz(s_.vocab_shard()) * 4, allocated_);
  m.tokens = DeviceBuf(r * 4, allocated_);
  m.row_seq = DeviceBuf(r * 4, allocated_);
  m.row_pos = DeviceBuf(r * 4, allocated_);
  m.last_rows = DeviceBuf(sz(max_sequences) * 4, allocated_);
  m.table = DeviceBuf(sz(max_sequences) * sz(pages) * 4, allocated_);
}

GpuEngine::~GpuEngine() = default;

void GpuEngine::prepare(const std::vector<Chunk>& chunks) {
  Impl& m = *impl_;
  m.h_tokens.clear();
  m.h_seq.clear();
  m.h_pos.clear();
  m.h_last.clear();
  for (const Chunk& c : chunks) {
    if (c.seq >= m.max_sequences) throw std::invalid_argument("GpuEngine: sequence id beyond max_sequences");
    for (idx i = 0; i < c.n; ++i) {
      m.h_tokens.push_back(c.tokens[i]);
      m.h_seq.push_back(c.seq);
      m.h_pos.push_back(static_cast<std::int32_t>(c.start + i));
    }
    m.h_last.push_back(static_cast<std::int32_t>(m.h_tokens.size() - 1));
  }
  m.rows = static_cast<idx>(m.h_tokens.size());
  m.outs = static_cast<idx>(chunks.size());
  if (m.rows > m.max_rows || m.outs > m.max_sequences) throw std::invalid_argument("GpuEngine: step larger than its buffers");
  if (table_.sequences() > m.max_sequences) throw std::invalid_argument("GpuEngine: more sequences than max_sequences");
  m.h_table.assign(sz(m.max_sequences * m.max_pages), 0);
  for (int q = 0; q < table_.sequences(); ++q) {
    const auto& p = table_.pages(q);
    std::copy(p.begin(), p.end(), m.h_table.begin() + q * m.max_pages);
  }
  // Pageable host memory: cudaMemcpyAsync stages it before returning, so the vectors may change after.
  auto up = [&](DeviceBuf& d, const std::vector<std::int32_t>& h) {
    if (!h.empty()) cuda_check(cudaMemcpyAsync(d.get(), h.data(), h.size() * 4, cudaMemcpyHostToDevice, m.stream), "upload");
  };
  up(m.tokens, m.h_tokens);
  up(m.row_seq, m.h_seq);
  up(m.row_pos, m.h_pos);
  up(m.last_rows, m.h_last);
  up(m.table, m.h_table);
  for (const Chunk& c : chunks) table_.set_length(c.seq, c.start + c.n);
}

void GpuEngine::enqueue() {
  Impl& m = *impl_;
  const idx rows = m.rows, c = s_.hidden, f = s_.ffn_shard(), qd = s_.q_dim(), qkv = s_.qkv_dim();
  const auto* seq = static_cast<const std::int32_t*>(m.row_seq.get());
  const auto* pos = static_cast<const std::int32_t*>(m.row_pos.get());
  cuda_check(launch_embed(m.t, static_cast<const std::int32_t*>(m.tokens.get()), m.w("wte"), m.x.get(), rows, c, m.stream),
             "embed");
  const std::size_t layer_pool = sz(table_.pages() * table_.page_size() * s_.kv_dim()) * 2;
  for (idx l = 0; l < s_.layers; ++l) {
    auto lw = [&](const char* what) { return m.w(layer_tensor(l, what)); };
    CacheView cache;
    cache.k = static_cast<char*>(m.k.get()) + sz(l) * layer_pool;
    cache.v = static_cast<char*>(m.v.get()) + sz(l) * layer_pool;
    cache.table = static_cast<const std::int32_t*>(m.table.get());
    cache.page_size = table_.page_size();
    cache.max_pages = m.max_pages;
    cache.kv_dim = s_.kv_dim();
    cuda_check(launch_rmsnorm(m.t, m.x.get(), lw("norm1.g"), m.h.get(), rows, c, s_.norm_eps, m.stream), "rmsnorm");
    m.mm(rows, qkv, c, m.h.get(), lw("wqkv"), m.qkv.get(), false, false);
    cuda_check(launch_rope_and_cache(m.t, m.qkv.get(), seq, pos, rows, s_.q_heads(), s_.kv_heads_shard(), s_.head_dim(),
                                     s_.rope_theta, true, cache, m.stream),
               "rope");
    cuda_check(launch_paged_attention(m.t, m.qkv.get(), m.att.get(), seq, pos, rows, s_.q_heads(), s_.kv_heads_shard(),
                                      s_.head_dim(), cache, m.stream),
               "attention");
    m.mm(rows, c, qd, m.att.get(), lw("wo"), m.x.get(), true, false);
    cuda_check(launch_rmsnorm(m.t, m.x.get(), lw("norm2.g"), m.h.get(), rows, c, s_.norm_eps, m.stream), "rmsnorm");
    m.mm(rows, 2 * f, c, m.h.get(), lw("wgu"), m.gu.get(), false, false);
    cuda_check(launch_swiglu(m.t, m.gu.get(), m.a.get(), rows, f, m.stream), "swiglu");
    m.mm(rows, c, f, m.a.get(), lw("wd"), m.x.get(), true, false);
  }
  cuda_check(launch_gather_rows(m.t, m.x.get(), static_cast<const std::int32_t*>(m.last_rows.get()), m.last.get(), m.outs,
                                c, m.stream),
             "gather");
  cuda_check(launch_rmsnorm(m.t, m.last.get(), m.w("normf.g"), m.hl.get(), m.outs, c, s_.norm_eps, m.stream), "rmsnorm");
  m.mm(m.outs, s_.vocab_shard(), c, m.hl.get(), m.w("wlm"), m.logits.get(), false, true);
}

const std::vector<float>& GpuEngine::fetch_logits() {
  Impl& m = *impl_;
  m.h_logits.resize(sz(m.outs * s_.vocab_shard()));
  cuda_check(cudaMemcpyAsync(m.h_logits.data(), m.logits.get(), m.h_logits.size() * 4, cudaMemcpyDeviceToHost, m.stream),
             "logits");
  cuda_check(cudaStreamSynchronize(m.stream), "step");
  return m.h_logits;
}

const std::vector<float>& GpuEngine::forward(const std::vector<Chunk>& chunks) {
  prepare(chunks);
  enqueue();
  return fetch_logits();
}

}  // namespace gpubench::kernels::infer
