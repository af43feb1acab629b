// The CPU prefill and decode cases of the infer suite (infer.hpp): the model in fp32, matmuls
// by OpenBLAS, attention over the paged cache spread over a host pool.
#include <cblas.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>

#include "bench/core/errors.hpp"
#include "bench/suites/infer/infer.hpp"
#include "bench/suites/infer/model_case.hpp"
#include "kernels/memory/host_pool.hpp"
#include "kernels/memory/stream_reference.hpp"

namespace gpubench::suites::infer {
namespace {

namespace ki = kernels::infer;
using ki::idx;

// Host memory not yet used by anyone (sysconf's available physical pages), for the largest
// batch whose KV cache fits.
double available_host_bytes() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * static_cast<double>(size) : 0;
}

class PrefillCase final : public ModelCase {
 public:
  using ModelCase::ModelCase;

  void setup() override {
    build(s_.prompt_len, s_.batch, s_.batch * s_.prompt_len);
    for (idx b = 0; b < s_.batch; ++b) prompts_.push_back(ki::prompt_tokens(s_.model, kPromptSeed, b, s_.prompt_len));
    for (idx b = 0; b < s_.batch; ++b) {
      chunks_.push_back({seqs_[static_cast<std::size_t>(b)], 0, prompts_[static_cast<std::size_t>(b)].data(), s_.prompt_len});
    }
  }

  // The first and last prompts' next-token logits against the reference's recompute.
  Verification verify() override {
    const std::vector<float> got = engine_->forward(chunks_, threads_, parallel());
    Verification v;
    v.passed = true;
    v.method = fmt::format("next-token logits of the first and last prompt vs the reference model in double "
                           "(recomputed without a cache; tolerance {} x RMS)", kFp32Tolerance);
    const idx vocab = s_.model.vocab_shard();
    for (idx b : {idx{0}, s_.batch - 1}) {
      const std::vector<double> want = reference_last(prompts_[static_cast<std::size_t>(b)]);
      compare_logits("logits", got.data() + b * vocab, want.data(), vocab, kFp32Tolerance, v);
      if (s_.batch == 1) break;
    }
    return v;
  }

  void run() override { (void)engine_->forward(chunks_, threads_, parallel()); }

  Metrics metrics() const override {
    Metrics m;
    const double tokens = static_cast<double>(s_.batch * s_.prompt_len);
    m.flops = static_cast<double>(s_.batch) * ki::forward_flops(s_.model, 0, s_.prompt_len);
    m.peak_key = "fp32";
    m.items = tokens;
    m.items_unit = "tokens";
    // Minimal traffic: the weights read once, the KV cache written once.
    m.bytes = (ki::matmul_weight_elements(s_.model) + tokens * ki::kv_elements_per_token(s_.model)) * sizeof(float);
    add_common(m);
    return m;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    if (seconds_per_run <= 0) return;
    // The compute part of TTFT: the step that turns the prompts into their first tokens.
    g["metrics"]["ttft_compute_ms"] = seconds_per_run * 1e3;
  }

 private:
  std::vector<std::vector<std::int32_t>> prompts_;
  std::vector<ki::Chunk> chunks_;
};

class DecodeCase final : public ModelCase {
 public:
  using ModelCase::ModelCase;

  // One context of context_len prompt tokens, prefilled for real in the first sequence and its
  // K and V rows copied into every other sequence's (scattered) pages; each sequence then
  // decodes its own next token, so the step's answers differ per sequence.
  void setup() override {
    build(s_.context_len + 1, s_.batch, std::max(s_.batch, s_.context_len));
    context_ = ki::prompt_tokens(s_.model, kPromptSeed, 0, s_.context_len);
    const ki::Chunk first{seqs_[0], 0, context_.data(), s_.context_len};
    (void)engine_->forward({first}, threads_, parallel());
    const idx kvd = s_.model.kv_dim();
    for (std::size_t b = 1; b < seqs_.size(); ++b) {
      for (idx l = 0; l < s_.model.layers; ++l)
        for (idx t = 0; t < s_.context_len; ++t) {
          std::copy_n(cache_->k(l, seqs_[0], t), kvd, cache_->k(l, seqs_[b], t));
          std::copy_n(cache_->v(l, seqs_[0], t), kvd, cache_->v(l, seqs_[b], t));
        }
    }
    for (idx b = 0; b < s_.batch; ++b) {
      next_.push_back(static_cast<std::int32_t>((b * 7919 + 13) % s_.model.vocab));
    }
    for (idx b = 0; b < s_.batch; ++b) chunks_.push_back({seqs_[static_cast<std::size_t>(b)], s_.context_len, &next_[static_cast<std::size_t>(b)], 1});
  }

  // Decode over the cache vs a full recompute of context + next token in double, for the first
  // and the last sequence.
  Verification verify() override {
    const std::vector<float> got = engine_->forward(chunks_, threads_, parallel());
    Verification v;
    v.passed = true;
    v.method = fmt::format("decode logits of the first and last sequence vs the reference model in double "
                           "recomputing all {} tokens without a cache (tolerance {} x RMS)",
                           s_.context_len + 1, kFp32Tolerance);
    const idx vocab = s_.model.vocab_shard();
    for (idx b : {idx{0}, s_.batch - 1}) {
      std::vector<std::int32_t> tokens = context_;
      tokens.push_back(next_[static_cast<std::size_t>(b)]);
      const std::vector<double> want = reference_last(tokens);
      compare_logits("logits", got.data() + b * vocab, want.data(), vocab, kFp32Tolerance, v);
      if (s_.batch == 1) break;
    }
    return v;
  }

  // One step: every sequence back to context_len cached tokens, one new token each.
  void run() override { (void)engine_->forward(chunks_, threads_, parallel()); }

  // Bytes a step must move (model.hpp decode_step_elements).
  double step_bytes() const { return ki::decode_step_elements(s_.model, s_.batch, s_.context_len) * sizeof(float); }

  Metrics metrics() const override {
    Metrics m;
    m.bytes = step_bytes();
    m.peak_key = "memory_bandwidth";
    m.items = static_cast<double>(s_.batch);
    m.items_unit = "tokens";
    m.footprint_bytes = step_bytes();
    add_common(m);
    m.extra["decode_flops"] = static_cast<double>(s_.batch) * ki::forward_flops(s_.model, s_.context_len, 1);
    m.extra["bytes_per_step"] = step_bytes();
    // The largest batch whose cache at this context fits in the host memory still available.
    const double per_seq = static_cast<double>(s_.context_len + 1) * ki::kv_elements_per_token(s_.model) * sizeof(float);
    m.extra["largest_batch_fits"] = std::floor((available_host_bytes() + (cache_ ? cache_->bytes() : 0.0)) / per_seq);
    return m;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    if (seconds_per_run <= 0) return;
    auto& m = g["metrics"];
    m["tpot_ms"] = seconds_per_run * 1e3;
    m["tokens_per_s_per_user"] = 1 / seconds_per_run;
    const MemoryCeiling& c = host_memory_ceiling();
    m["memory_ceiling_gbps"] = c.gbps;
    m["memory_ceiling_method"] = c.method;
    if (c.gbps > 0) m["pct_of_memory_ceiling"] = step_bytes() / seconds_per_run / 1e9 / c.gbps * 100;
  }

 private:
  std::vector<std::int32_t> context_, next_;
  std::vector<ki::Chunk> chunks_;
};

}  // namespace

// ---- ModelCase (model_case.hpp) ----

ModelCase::~ModelCase() {
  if (blas_threads_ > 0) openblas_set_num_threads(blas_threads_);
}

void ModelCase::build(idx tokens, idx sequences, idx step_rows, idx extra_pages) {
  threads_ = s_.threads > 0 ? s_.threads : kernels::usable_cpus();
  const idx page = s_.kv_page > 0 ? s_.kv_page : tokens;
  const idx per_seq = (tokens + page - 1) / page;
  // The weights (and their double copy for the reference) and the cache must fit in the memory
  // still free: an overcommitted allocation would be killed, not refused, when first written.
  // Activations: each row of a step holds x, h, qkv, the attention output and the MLP's.
  const ki::ModelSpec& m = s_.model;
  const double row_floats = static_cast<double>(2 * m.hidden + m.qkv_dim() + m.q_dim() + 3 * m.ffn_shard());
  const double need = static_cast<double>(ki::layout(m).total) * (sizeof(float) + sizeof(double)) +
                      static_cast<double>((per_seq * sequences + extra_pages) * page) * ki::kv_elements_per_token(m) * sizeof(float) +
                      static_cast<double>(step_rows) * row_floats * sizeof(float);
  if (const double avail = available_host_bytes(); avail > 0 && need > avail) {
    throw CaseSkipped(fmt::format("{} with its KV cache needs {:.3g} GB of host memory, {:.3g} GB available",
                                  s_.model.name, need / 1e9, avail / 1e9));
  }
  try {
    weights_ = ki::random_weights<float>(s_.model, kWeightSeed);
    cache_ = std::make_unique<ki::KvCache<float>>(s_.model, page, per_seq * sequences + extra_pages);
  } catch (const std::bad_alloc&) {
    throw CaseSkipped(fmt::format("out of host memory for {} weights and a KV cache of {} tokens", s_.model.name,
                                  tokens * sequences));
  }
  for (idx b = 0; b < sequences; ++b) seqs_.push_back(cache_->open());
  for (idx p = 1; p <= per_seq; ++p)
    for (int seq : seqs_) (void)cache_->reserve(seq, std::min(tokens, p * page));
  engine_ = std::make_unique<ki::Engine<float>>(s_.model, weights_, *cache_);
  blas_threads_ = openblas_get_num_threads();
  openblas_set_num_threads(threads_);
  if (threads_ > 1) pool_ = std::make_unique<kernels::HostPool>(threads_);
}

ki::Parallel ModelCase::parallel() {
  if (!pool_) return {};
  // HostPool::run waits for every call and rethrows one exception (a kernel's scratch out of
  // memory), which the harness turns into a skip.
  return [this](int n, const std::function<void(int)>& f) {
    pool_->run([&](int t) {
      if (t < n) f(t);
    });
  };
}

std::vector<double> ModelCase::reference_last(const std::vector<std::int32_t>& tokens) {
  if (weights_d_.empty()) weights_d_.assign(weights_.begin(), weights_.end());
  const std::vector<double> all = ki::reference_logits(s_.model, weights_d_, tokens);
  const idx v = s_.model.vocab_shard();
  return std::vector<double>(all.end() - v, all.end());
}

void ModelCase::add_common(Metrics& m) const {
  m.extra["model"] = s_.model.name;
  m.extra["threads"] = threads_;
  m.extra["weight_bytes"] = ki::matmul_weight_elements(s_.model) * sizeof(float);
  m.extra["kv_bytes_per_token"] = ki::kv_elements_per_token(s_.model) * sizeof(float);
  m.extra["kv_page"] = s_.kv_page;
}

void compare_logits(const char* what, const float* got, const double* want, std::int64_t n, double tol, Verification& v) {
  double ss = 0;
  for (std::int64_t i = 0; i < n; ++i) ss += want[i] * want[i];
  const double rms = n > 0 ? std::sqrt(ss / static_cast<double>(n)) : 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]) / (tol * rms + 1e-300);
    ++v.checked;
    if (!(err <= 1)) {
      if (v.passed) v.detail = fmt::format("{}[{}] = {:.9g}, reference {:.9g} (tolerance {:.3g})", what, i, got[i], want[i], tol * rms);
      v.passed = false;
    }
    v.max_error = std::isfinite(err) ? std::max(v.max_error, err) : INFINITY;
  }
}

const MemoryCeiling& host_memory_ceiling() {
  static const MemoryCeiling ceiling = [] {
    // Three arrays of 64 MiB each: many times any last-level cache of a CPU this runs on
    // (STREAM's rule: each array at least 4x the caches).
    constexpr std::size_t n = (std::size_t{64} << 20) / sizeof(double);
    MemoryCeiling c;
    try {
      std::vector<double> a(n), b(n), d(n);
      kernels::host_stream_init(a.data(), b.data(), d.data(), n);
      double best = 0;
      for (int pass = 0; pass < 8; ++pass) {
        const auto t0 = std::chrono::steady_clock::now();
        (void)kernels::host_stream_run(kernels::StreamOp::Triad, a.data(), b.data(), d.data(), n);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > 0) best = std::max(best, 3.0 * n * sizeof(double) / s / 1e9);
      }
      c.gbps = best;
      c.method = fmt::format("STREAM triad over 3 x 64 MiB on {} thread(s), best of 8 passes, measured in this run",
                             kernels::host_threads());
    } catch (const std::bad_alloc&) {
      c.method = "not measured: out of host memory for the triad's arrays";
    }
    return c;
  }();
  return ceiling;
}

std::unique_ptr<Case> make_cpu_case(const InferSpec& spec) {
  if (spec.phase == Phase::Prefill) return std::make_unique<PrefillCase>(spec);
  return std::make_unique<DecodeCase>(spec);
}

}  // namespace gpubench::suites::infer
