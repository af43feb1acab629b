// The CPU attention case: `flash` and `naive` (kernels/attention/attention_host.hpp) in fp32,
// the units of work spread over a host pool. OpenBLAS runs one thread per call inside it (the
// case parallelises over heads and tiles itself); its own thread count comes back afterwards.
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "bench/core/errors.hpp"
#include "bench/core/resources.hpp"
#include "bench/suites/attention/attention.hpp"
#include "kernels/common/random.hpp"
#include "kernels/memory/host_pool.hpp"

namespace gpubench::suites::attention {
namespace {

namespace ka = kernels::attention;

// Tolerance of fp32 results, relative to |reference| + the tensor's RMS (verify.cpp): float
// products of head_dim terms and softmax sums of seq_kv terms stay near 1e-6; 1e-4 leaves room
// and still catches any wrong mask, head mapping or page (errors of order 1).
constexpr double kFp32Tolerance = 1e-4;

class CpuAttentionCase final : public HostCase {
 public:
  explicit CpuAttentionCase(const AttentionSpec& spec)
      : s_(spec), algorithm_(spec.provider == "naive" ? ka::Algorithm::Naive : ka::Algorithm::Flash) {}

  ~CpuAttentionCase() override {
    if (blas_threads_ > 0) openblas_set_num_threads(blas_threads_);
  }

  void setup() override {
    const ka::Shape& sh = s_.shape;
    threads_ = s_.threads > 0 ? s_.threads : kernels::usable_cpus();
    const bool bwd = s_.direction != Direction::Forward;
    const auto nq = static_cast<std::size_t>(sh.q_elements()), nkv = static_cast<std::size_t>(sh.kv_elements());
    const std::size_t elements = (bwd ? 4 * nq + 4 * nkv : 2 * nq + 2 * nkv) + static_cast<std::size_t>(sh.lse_elements());
    require_address_space(elements * sizeof(float) + workspace_bytes() + (64u << 20),
                          fmt::format("attention {} on {} thread(s)", s_.provider, threads_));
    try {
      q_.resize(nq);
      o_.resize(nq);
      k_.resize(nkv);
      v_.resize(nkv);
      lse_.resize(static_cast<std::size_t>(sh.lse_elements()));
      if (bwd) {
        dout_.resize(nq);
        dq_.resize(nq);
        dk_.resize(nkv);
        dv_.resize(nkv);
      }
    } catch (const std::bad_alloc&) {
      throw CaseSkipped(fmt::format("out of host memory for attention tensors of {} MiB",
                                    elements * sizeof(float) >> 20));
    }
    fill_inputs(s_, q_.data(), k_.data(), v_.data(), bwd ? dout_.data() : nullptr);
    if (sh.page_size > 0) table_ = ka::scattered_page_table(sh, 0xA77E);
    blas_threads_ = openblas_get_num_threads();
    openblas_set_num_threads(1);
    if (threads_ > 1) pool_ = std::make_unique<kernels::HostPool>(threads_);
    // The backward alone reads the forward's O and LSE: computed once here, by the same kernel.
    if (s_.direction == Direction::Backward) ka::forward(algorithm_, sh, tensors(), threads_, parallel());
  }

  Verification verify() override {
    run();
    Verification v = verify_against_reference(s_, q_.data(), k_.data(), v_.data(), dout_.empty() ? nullptr : dout_.data(),
                                              table_.empty() ? nullptr : table_.data(),
                                              Outputs{o_.data(), lse_.data(), dq_.data(), dk_.data(), dv_.data()},
                                              kFp32Tolerance);
    return v;
  }

  void run() override {
    const ka::Tensors t = tensors();
    if (s_.decode) {
      ka::decode(algorithm_, s_.shape, t, threads_, parallel());
      return;
    }
    if (s_.direction != Direction::Backward) ka::forward(algorithm_, s_.shape, t, threads_, parallel());
    if (s_.direction != Direction::Forward) ka::backward(algorithm_, s_.shape, t, threads_, parallel());
  }

  Metrics metrics() const override {
    Metrics m;
    if (s_.decode) {
      m.bytes = ka::decode_bytes(s_.shape, sizeof(float));
      m.peak_key = "memory_bandwidth";
      // The cache it reads: a small one the CPU's caches hold is not bounded by the DRAM ceiling.
      m.footprint_bytes = 2.0 * static_cast<double>(s_.shape.kv_elements()) * sizeof(float);
      m.extra["attention_flops"] = ka::forward_flops(s_.shape);
    } else {
      m.flops = run_flops(s_);
      m.peak_key = "fp32";
      // Minimal traffic: Q, K, V read and O written once (plus dO, dQ, dK, dV for a backward).
      const double qo = static_cast<double>(s_.shape.q_elements()), kv = static_cast<double>(s_.shape.kv_elements());
      m.bytes = 4.0 * (s_.direction == Direction::Forward ? 2 * qo + 2 * kv : 4 * qo + 4 * kv);
    }
    m.extra["threads"] = threads_;
    m.extra["workspace_bytes"] = static_cast<double>(workspace_bytes());
    m.extra["algorithm"] = algorithm_ == ka::Algorithm::Flash
                               ? fmt::format("tiled online softmax (FlashAttention-2), {}x{} tiles, products by OpenBLAS",
                                             ka::kTileQ, ka::kTileKv)
                               : std::string("materialised scores [seq_q x seq_kv] per head, products by OpenBLAS");
    return m;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    if (s_.decode && seconds_per_run > 0) {
      g["metrics"]["gb_per_s"] = ka::decode_bytes(s_.shape, sizeof(float)) / seconds_per_run / 1e9;
    }
  }

 private:
  ka::Tensors tensors() {
    ka::Tensors t;
    t.q = q_.data();
    t.k = k_.data();
    t.v = v_.data();
    t.o = o_.data();
    t.lse = lse_.data();
    t.dout = dout_.empty() ? nullptr : dout_.data();
    t.dq = dq_.empty() ? nullptr : dq_.data();
    t.dk = dk_.empty() ? nullptr : dk_.data();
    t.dv = dv_.empty() ? nullptr : dv_.data();
    t.page_table = table_.empty() ? nullptr : table_.data();
    return t;
  }

  // The pool runs f on its threads; an exception there (the kernels' scratch out of memory) is
  // carried back to the caller, which the harness turns into a skip, instead of ending the process.
  ka::Parallel parallel() {
    return [this](int n, const std::function<void(int)>& f) {
      if (!pool_) {
        for (int t = 0; t < n; ++t) f(t);
        return;
      }
      std::exception_ptr error;
      std::mutex error_mutex;
      pool_->run([&](int t) {
        if (t >= n) return;
        try {
          f(t);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      });
      if (error) std::rethrow_exception(error);
    };
  }

  // Scratch the kernels allocate per thread at once: naive, the scores (and dP) of one head;
  // flash, one tile of scores (and dP) and the row accumulators.
  std::size_t workspace_bytes() const {
    const ka::Shape& sh = s_.shape;
    const auto threads = static_cast<std::size_t>(std::max(1, threads_));
    if (s_.decode) return threads * static_cast<std::size_t>(std::max(sh.seq_kv, sh.group() * (ka::kDecodeBlock + sh.head_dim))) * 4;
    const std::size_t per = algorithm_ == ka::Algorithm::Naive
                                ? static_cast<std::size_t>(sh.seq_q * sh.seq_kv) * 2
                                : static_cast<std::size_t>(ka::kTileQ * (2 * ka::kTileKv + sh.head_dim));
    return threads * per * sizeof(float);
  }

  AttentionSpec s_;
  ka::Algorithm algorithm_;
  int threads_ = 1, blas_threads_ = 0;
  std::unique_ptr<kernels::HostPool> pool_;
  std::vector<float> q_, k_, v_, o_, lse_, dout_, dq_, dk_, dv_;
  std::vector<std::int32_t> table_;
};

}  // namespace

void fill_inputs(const AttentionSpec& s, float* q, float* k, float* v, float* dout) {
  const auto nq = static_cast<std::uint64_t>(s.shape.q_elements()), nkv = static_cast<std::uint64_t>(s.shape.kv_elements());
  for (std::uint64_t i = 0; i < nq; ++i) q[i] = kQueryGain * kernels::uniform_value(101, i);
  for (std::uint64_t i = 0; i < nkv; ++i) k[i] = kernels::uniform_value(102, i);
  for (std::uint64_t i = 0; i < nkv; ++i) v[i] = kernels::uniform_value(103, i);
  if (dout != nullptr)
    for (std::uint64_t i = 0; i < nq; ++i) dout[i] = kernels::uniform_value(104, i);
}

std::unique_ptr<Case> make_cpu_case(const AttentionSpec& spec) { return std::make_unique<CpuAttentionCase>(spec); }

}  // namespace gpubench::suites::attention
