#pragma once
// The decoder-only transformer the `infer` suite serves: its configurations, its weights, a
// paged KV cache and a batched forward over chunks of sequences (prefill: a whole prompt;
// decode: one new token over the cached context). Host-only, no harness dependency.
//
//   gpt   (GPT-2, as the train suite's transformer): x = wte[tok] + wpe[pos];
//         L x { x += Wo attn(LN1 x) + bo;  x += W2 gelu(W1 LN2 x + b1) + b2 } -> LN_f
//         -> logits = x wte^T (tied head); multi-head attention, q|k|v with biases.
//   llama (Llama 3): x = wte[tok];
//         L x { x += Wo attn(rope(q), rope(k), v of RMSNorm x);
//               x += Wd (silu(Wg h) * (Wu h)), h = RMSNorm x } -> RMSNorm -> logits = x Wlm;
//         grouped-query attention (heads / kv_heads query heads share a KV head), no biases.
// attn: per head softmax(q k^T / sqrt(D)) v over the positions up to the query's own (causal).
// Weights are row-major [in, out] (Y = X W), as in kernels/train.
//
// A tensor-parallel shard (tp > 1) is what one of tp GPUs holds in Megatron-LM's layout: heads,
// kv_heads, the FFN width and the vocabulary of the LM head divided by tp (column-parallel
// QKV, gate/up and LM head, row-parallel Wo and Wd); the all-reduces that would sum the
// partial outputs are not run, so a shard is a model of its own (hidden size unchanged).
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace gpubench::kernels::infer {

using idx = std::int64_t;

enum class Arch { Gpt, Llama };

struct ModelSpec {
  std::string name;
  Arch arch = Arch::Llama;
  idx layers = 2, hidden = 64, heads = 4, kv_heads = 4, ffn = 256, vocab = 256;
  idx max_positions = 0;       // gpt: rows of the learned position table (the longest sequence)
  double rope_theta = 10000;   // llama: RoPE base
  double norm_eps = 1e-5;      // LayerNorm / RMSNorm epsilon
  idx tp = 1;                  // tensor-parallel degree of the shard that runs

  idx head_dim() const { return hidden / heads; }
  // The shard's sizes.
  idx q_heads() const { return heads / tp; }
  idx kv_heads_shard() const { return kv_heads / tp; }
  idx ffn_shard() const { return ffn / tp; }
  idx vocab_shard() const { return vocab / tp; }
  idx q_dim() const { return q_heads() * head_dim(); }
  idx kv_dim() const { return kv_heads_shard() * head_dim(); }
  idx qkv_dim() const { return q_dim() + 2 * kv_dim(); }
};

// The named configurations: gpt-small, gpt2-124m, llama-small, llama3-8b, llama3-70b
// (Llama 3's from Meta's published params.json / Hugging Face config.json: hidden, layers,
// heads, kv_heads, intermediate size, vocabulary, rope_theta 500000, rms_norm_eps 1e-5).
std::vector<std::string> model_names();
std::optional<ModelSpec> named_model(const std::string& name);
// Why the spec cannot be built ("tp=3 does not divide kv_heads=8"), or nullopt.
std::optional<std::string> spec_error(const ModelSpec& s);

// ---- Counts (elements; multiply by the bytes of the element type) ----

// Weights of one layer, and of the whole shard (layers, final norm, LM head; the embedding
// tables apart: a step gathers only its tokens' rows of them).
double layer_weight_elements(const ModelSpec& s);
double matmul_weight_elements(const ModelSpec& s);  // every weight a decode step reads in full
double embedding_elements(const ModelSpec& s);
// KV-cache elements per token: 2 (K and V) x layers x kv_dim.
double kv_elements_per_token(const ModelSpec& s);
// Elements one decode step of `batch` sequences holding `context` tokens each must move: every
// matmul weight once, each sequence's cached K and V, the new K and V rows and the tokens'
// embedding rows (the decode roofline; times the element's bytes).
double decode_step_elements(const ModelSpec& s, idx batch, idx context);
// The linear layers' weights (every layer's QKV, output, gate/up and down projections; for gpt
// its QKV, output and MLP matrices, biases apart): what fp8 serving stores as E4M3 codes, the LM
// head, embeddings and norms staying in 16 bits (ModelOpt's fp8 checkpoints exclude lm_head).
double linear_weight_elements(const ModelSpec& s);
// Whether a layout tensor ("l3.wqkv") is one of those linear layers' weights.
bool is_linear_weight(const std::string& tensor_name);
// Why the linear layers cannot run as cuBLASLt fp8 GEMMs (a dimension that is not a multiple of
// 16: both operands are K-major, and the weight's rows and columns become leading dimensions of
// 1-byte codes, which cuBLASLt wants 16-byte aligned), or nullopt. The step's rows are free.
std::optional<std::string> fp8_dims_error(const ModelSpec& s);
// Bytes of every matmul weight, and of a decode step (decode_step_elements), with each element
// at `element_bytes` except the linear layers' weights at `linear_bytes` each (fp8 weights: 1).
double matmul_weight_bytes(const ModelSpec& s, double element_bytes, double linear_bytes);
double decode_step_bytes(const ModelSpec& s, idx batch, idx context, double element_bytes, double linear_bytes);
// FLOPs of a forward over `new_tokens` tokens of a sequence that already holds `cached` tokens
// (prefill: cached 0; decode: new_tokens 1), LM head for its last token only:
//   2 x (layer weights) x L per token + attention 4 x L x q_dim per (query, key) pair
//   + 2 x C x V' for the head; the causal pairs are counted exactly (kernels/attention's
//   admitted_pairs, bottom-right: new_tokens queries over cached + new_tokens keys):
//   sum over queries i of (cached + i + 1).
double forward_flops(const ModelSpec& s, idx cached, idx new_tokens);

// ---- The ops (exposed for the tests) ----

// RMSNorm (Zhang & Sennrich 2019, as Llama): y = x / sqrt(mean(x^2) + eps) * g.
template <class T>
void rmsnorm(const T* x, const T* g, T* y, idx rows, idx c, double eps);
// Rotary position embedding (Su et al. 2021) in Llama's rotate-half form, in place on one
// head's vector v[D] at position pos: for i < D/2, with f = theta^(-2i/D) and a = pos f,
//   (v[i], v[i + D/2]) <- (v[i] cos a - v[i + D/2] sin a, v[i + D/2] cos a + v[i] sin a).
template <class T>
void rope(T* v, idx d, idx pos, double theta);
// SwiGLU (Shazeer 2020): out[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x);
// gate_up holds each row's gate then up ([rows, 2F]).
template <class T>
void swiglu(const T* gate_up, T* out, idx rows, idx f);
// (gpt's LayerNorm and GELU are kernels/train's ops, eps 1e-5.)

// ---- Weights ----

struct Tensor {
  std::string name;  // "l3.wqkv"
  idx offset = 0, rows = 0, cols = 1;
  idx size() const { return rows * cols; }
};
struct Layout {
  std::vector<Tensor> tensors;
  idx total = 0;
  const Tensor& at(const std::string& name) const;  // throws std::out_of_range
};
Layout layout(const ModelSpec& s);
std::string layer_tensor(idx layer, const char* what);  // "l3.wqkv"

// Random weights, deterministic in the seed: linear weights uniform with standard deviation
// 1/sqrt(in) (so each layer's output keeps the scale of its input and attention scores spread
// over a few units: a mask or position error changes the answer), embeddings uniform in
// [-1, 1), norm gains 1 + U(-0.1, 0.1), biases U(-0.1, 0.1).
template <class T>
std::vector<T> random_weights(const ModelSpec& s, std::uint64_t seed);
// The rule per tensor: element i of tensor t is shift + scale * uniform_value(seed, t.offset + i)
// (computed in double, then rounded to the element type), so a device fills the same values.
struct WeightInit {
  double scale = 0, shift = 0;
};
WeightInit weight_init(const Tensor& t);

// ---- The paged KV cache ----

// The pages of a pool and which sequence holds which: a sequence holds a list of pages (its
// page table) and a length; pages come from a free list, the last page of the list first, so a
// sequence's pages are scattered once others have come and gone. The host's bookkeeping of the
// CPU cache below and of the GPU's (whose pools live in device memory).
class PageTable {
 public:
  PageTable(idx page_size, idx pages);
  idx page_size() const { return page_size_; }
  idx pages() const { return pages_; }
  idx free_pages() const { return static_cast<idx>(free_.size()); }
  idx pages_for(idx tokens) const { return (tokens + page_size_ - 1) / page_size_; }
  // A new empty sequence (its id; ids are reused once released).
  int open();
  // Grows a sequence's page table to hold `tokens` tokens; false (nothing taken) when the pool
  // is short.
  bool reserve(int seq, idx tokens);
  void release(int seq);  // its pages back to the pool
  idx length(int seq) const { return length_[static_cast<std::size_t>(seq)]; }
  void set_length(int seq, idx n) { length_[static_cast<std::size_t>(seq)] = n; }
  const std::vector<std::int32_t>& pages(int seq) const { return table_[static_cast<std::size_t>(seq)]; }
  int sequences() const { return static_cast<int>(table_.size()); }  // ids handed out so far
  // The pool row (page * page_size + offset) of token `pos` of `seq`.
  idx row(int seq, idx pos) const {
    return static_cast<idx>(table_[static_cast<std::size_t>(seq)][static_cast<std::size_t>(pos / page_size_)]) * page_size_ +
           pos % page_size_;
  }

 private:
  idx page_size_, pages_;
  std::vector<std::int32_t> free_;
  std::vector<std::vector<std::int32_t>> table_;
  std::vector<idx> length_;
  std::vector<bool> open_;
};

// Per layer, K and V pools of `pages` pages of `page_size` tokens x kv_dim, in host memory.
// Contiguous (page_size 0 in the suite) is one page of the longest sequence per sequence.
template <class T>
class KvCache {
 public:
  KvCache(const ModelSpec& s, idx page_size, idx pages);
  PageTable& table() { return table_; }
  const PageTable& table() const { return table_; }
  // The page table's operations, for brevity.
  idx page_size() const { return table_.page_size(); }
  idx free_pages() const { return table_.free_pages(); }
  int open() { return table_.open(); }
  bool reserve(int seq, idx tokens) { return table_.reserve(seq, tokens); }
  void release(int seq) { table_.release(seq); }
  idx length(int seq) const { return table_.length(seq); }
  void set_length(int seq, idx n) { table_.set_length(seq, n); }
  const std::vector<std::int32_t>& pages(int seq) const { return table_.pages(seq); }
  // Row of token `pos` of `seq` in layer l's K (or V) pool.
  T* k(idx layer, int seq, idx pos) { return k_.data() + (layer * rows_ + table_.row(seq, pos)) * kv_dim_; }
  T* v(idx layer, int seq, idx pos) { return v_.data() + (layer * rows_ + table_.row(seq, pos)) * kv_dim_; }
  double bytes() const { return 2.0 * static_cast<double>(k_.size()) * sizeof(T); }

 private:
  PageTable table_;
  idx kv_dim_, rows_;  // rows per layer: pages x page_size
  std::vector<T> k_, v_;
};

// ---- The forward ----

// Tokens tokens[0..n) at positions start..start+n-1 of cache sequence `seq` (whose cache holds
// the `start` tokens before them).
struct Chunk {
  int seq = 0;
  idx start = 0;
  const std::int32_t* tokens = nullptr;
  idx n = 0;
};

// One engine step's inputs as a device engine reads them, packed into one int32 array so that a
// step costs one host-to-device copy (from pinned memory, as a serving engine's): tokens
// [max_rows], row_seq [max_rows], row_pos [max_rows], last_rows [max_sequences] (each chunk's
// last row) and the page table [max_sequences][max_pages]. Offsets in elements, fixed for the
// buffers' sizes, so the device pointers are set once.
struct StepLayout {
  idx max_rows = 0, max_sequences = 0, max_pages = 0;
  idx tokens() const { return 0; }
  idx seq() const { return max_rows; }
  idx pos() const { return 2 * max_rows; }
  idx last() const { return 3 * max_rows; }
  idx table() const { return 3 * max_rows + max_sequences; }
  idx total() const { return table() + max_sequences * max_pages; }
};
struct StepShape {
  idx rows = 0, outs = 0;  // tokens in the step; chunks (logits rows)
};
// Writes the step of `chunks` over `pages` into out[0, layout.total()) (table entries past a
// sequence's pages are 0); std::invalid_argument when the step or the table exceeds the layout.
StepShape pack_step(const std::vector<Chunk>& chunks, const PageTable& pages, const StepLayout& layout,
                    std::int32_t* out);

// Flash-decoding (the paged attention kernel, infer_kernels.cuh): with few (row, head) units, as
// in decode, one block per unit leaves most SMs idle and runs each unit's keys as one serial
// chain; the keys are then split over `splits` blocks per unit, each an online softmax over
// `keys_per_split` consecutive keys, combined after. attention_split: splits = 1 while the
// units alone make kSplitWaveBlocks blocks per SM or the keys are fewer than 2 splits of
// kMinKeysPerSplit; otherwise the fewest splits (at most kMaxSplits, each of at least
// kMinKeysPerSplit keys) that make that many blocks. Pure, unit-tested.
inline constexpr idx kSplitWaveBlocks = 2, kMinKeysPerSplit = 64, kMaxSplits = 64;
struct AttentionSplit {
  idx splits = 1;
  idx keys_per_split = 0;  // 0 with one split: every key
};
AttentionSplit attention_split(idx units, idx max_keys, int sms);
// The blocks' partial slots the split needs at most (units x splits, 0 with one split), for a
// step of at most `max_units` units on `sms` SMs: the workspace the engine allocates once.
idx attention_split_slots(idx max_units, int sms);

// One split's online softmax over keys [j0, j1) of one query (the CPU reference of a block's
// partial): m the largest score, l = sum e^(s_j - m), acc = sum e^(s_j - m) v_j, s_j = q . k_j
// scale. An empty range leaves m = -inf, l = 0, acc = 0 (as the kernel's empty splits).
struct SoftmaxPartial {
  double m = -std::numeric_limits<double>::infinity();
  double l = 0;
  std::vector<double> acc;
};
SoftmaxPartial attention_partial(const std::vector<double>& q, const std::vector<std::vector<double>>& keys,
                                 const std::vector<std::vector<double>>& values, idx j0, idx j1, double scale);
// The combine step: M = max m_s, out = sum acc_s e^(m_s - M) / sum l_s e^(m_s - M), empty
// partials skipped (std::invalid_argument when every one is empty).
std::vector<double> combine_partials(const std::vector<SoftmaxPartial>& parts);

// Runs f(t) for t < threads (a thread pool; empty: a loop on the calling thread).
using Parallel = std::function<void(int threads, const std::function<void(int)>& f)>;

template <class T>
class Engine {
 public:
  // `weights` as random_weights lays them out; both must outlive the engine.
  Engine(const ModelSpec& s, const std::vector<T>& weights, KvCache<T>& cache);
  const ModelSpec& spec() const { return s_; }
  // One step over the chunks (prefill chunks, decode chunks of one token, or both): writes
  // their K and V into the cache, sets each sequence's cached length to start + n and returns
  // the logits of each chunk's last token, [chunks, vocab_shard] row-major. Sequences must
  // have room reserved. Attention runs over (chunk row, KV head) units spread by `parallel`.
  const std::vector<T>& forward(const std::vector<Chunk>& chunks, int threads = 1, const Parallel& parallel = {});
  // All positions' logits instead of the last ones (the reference comparisons).
  void set_all_logits(bool all) { all_logits_ = all; }

 private:
  void attention(idx layer, int threads, const Parallel& parallel);
  const T* w(const std::string& name) const { return weights_.data() + layout_.at(name).offset; }
  ModelSpec s_;
  Layout layout_;
  const std::vector<T>& weights_;
  KvCache<T>& cache_;
  bool all_logits_ = false;
  std::vector<T> x_, h_, qkv_, att_, ff_, ff2_, last_, logits_;
  std::vector<idx> row_pos_;
  std::vector<int> row_seq_;
};

// The reference: one sequence's tokens, every position recomputed from scratch in double, the
// layers written out again (no cache, no batching, no shared op; products by OpenBLAS dgemm),
// logits of every position [n, vocab_shard].
//
// `fp8_steps` (llama only): the fp8 serving recipe emulated on the linear layers' inputs, as
// kernels/train's LinearInputs::Fp8 emulates a training step's: each linear weight quantised
// once per tensor to E4M3 with the scale fp8_scale(amax, 448), and each linear layer's input
// activations quantised per step, the rows of step i being the next fp8_steps[i] tokens (the
// rows an engine step held, whose amax the device reduced), both divided back so the double
// product sees the values an fp8 GEMM with those descales sees. The LM head, attention and
// norms stay exact. The steps must sum to the tokens.
std::vector<double> reference_logits(const ModelSpec& s, const std::vector<double>& weights,
                                     const std::vector<std::int32_t>& tokens, const std::vector<idx>* fp8_steps = nullptr);

// Greedy next tokens (argmax of each row), the serving loop's sampler.
template <class T>
std::vector<std::int32_t> argmax_rows(const std::vector<T>& logits, idx rows, idx vocab);

// Prompt tokens of a request, deterministic in (seed, request): uniform over the vocabulary.
std::vector<std::int32_t> prompt_tokens(const ModelSpec& s, std::uint64_t seed, idx request, idx n);

extern template class KvCache<float>;
extern template class KvCache<double>;
extern template class Engine<float>;
extern template class Engine<double>;

}  // namespace gpubench::kernels::infer
