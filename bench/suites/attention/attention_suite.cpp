// The attention suite's axes, presets, plan rules and names (attention.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/core/errors.hpp"
#include "bench/core/sizes.hpp"
#include "bench/suites/attention/attention.hpp"
#include "kernels/attention/sdpa_plan.hpp"

namespace gpubench::suites::attention {
namespace {

namespace ka = kernels::attention;

bool is_gpu_provider(const std::string& provider) { return provider == "cudnn"; }

// The axes every preset leaves at one value unless it says otherwise.
const std::vector<std::pair<std::string, std::string>> kDefaults = {
    {"dtype", "fp32"},  {"phase", "prefill"}, {"direction", "fwd"}, {"causal", "0"},      {"batch", "1"},
    {"tokens", "0"},    {"heads", "8"},       {"kv_heads", "@heads"}, {"seq_q", "1024"},  {"seq_kv", "@seq_q"},
    {"head_dim", "64"}, {"page_size", "0"},   {"threads", "0"},
};

Preset preset(std::string name, std::vector<std::pair<std::string, std::string>> cuda,
              std::vector<std::pair<std::string, std::string>> cpu) {
  auto complete = [](std::vector<std::pair<std::string, std::string>> given, const char* provider) {
    auto add = [&](const std::string& axis, const std::string& value) {
      if (std::none_of(given.begin(), given.end(), [&](const auto& g) { return g.first == axis; }))
        given.emplace_back(axis, value);
    };
    add("provider", provider);
    for (const auto& [axis, value] : kDefaults) add(axis, value);
    return given;
  };
  return {std::move(name), complete(std::move(cuda), "cudnn"), complete(std::move(cpu), "flash,naive")};
}

class AttentionSuite final : public Suite {
 public:
  std::string name() const override { return "attention"; }
  std::string description() const override {
    return "Scaled dot-product attention: prefill forward/backward and decode over a (paged) KV cache; tiled "
           "FlashAttention and materialised kernels on the CPU";
  }

  std::vector<AxisSpec> axes() const override {
    return {
        {"provider", AxisKind::Enum, "implementation: cudnn (fused SDPA on CUDA); flash (tiled, online softmax) or naive (materialised scores) on the CPU", {"cudnn", "flash", "naive"}, 1},
        {"dtype", AxisKind::Enum, "element type: fp32 on the CPU; fp16, bf16 (and fp8-e4m3 forward) on CUDA", {"fp32", "fp16", "bf16", "fp8-e4m3"}, 1},
        {"phase", AxisKind::Enum, "prefill (seq_q > 1 query tokens) or decode (seq_q = 1: one new token per sequence over seq_kv cached ones)", {"prefill", "decode"}, 1},
        {"direction", AxisKind::Enum, "fwd, bwd (given the forward's O and LSE) or fwd_bwd; decode is fwd", {"fwd", "bwd", "fwd_bwd"}, 1},
        {"causal", AxisKind::Int, "1: query i sees keys up to i + seq_kv - seq_q (bottom-right aligned)", {}, 0, {}, 1},
        {"batch", AxisKind::Int, "sequences per call (overridden by tokens)", {}, 1, {}, 1 << 20},
        {"tokens", AxisKind::Int, "> 0: batch = tokens / seq_q (FlashAttention's benchmark grid keeps batch x seq constant)", {}, 0, {}, std::int64_t{1} << 30},
        {"heads", AxisKind::Int, "query heads", {}, 1, {}, 4096},
        {"kv_heads", AxisKind::Int, "key/value heads (grouped-query attention: heads must be a multiple; default @heads)", {}, 1, {}, 4096},
        {"seq_q", AxisKind::Int, "query tokens per sequence (1 for decode)", {}, 1, {}, std::int64_t{1} << 24},
        {"seq_kv", AxisKind::Int, "key/value tokens per sequence (decode: the cached context; default @seq_q)", {}, 1, {}, std::int64_t{1} << 24},
        {"head_dim", AxisKind::Int, "dimension of each head (cuDNN: 64, 128 or 256)", {}, 1, {}, 1024},
        {"page_size", AxisKind::Int, "decode: tokens per page of a paged KV cache (0: contiguous); must divide seq_kv", {}, 0, {}, std::int64_t{1} << 20},
        {"threads", AxisKind::Int, "CPU providers: threads (0: every CPU this process may use)", {}, 0, {}, 1024},
    };
  }

  std::vector<Preset> presets() const override {
    return {
        // Both phases at one size: a prefill forward and backward, causal or not, and a decode
        // step over a paged cache (grouped-query heads throughout).
        preset("quick",
               {{"dtype", "bf16"}, {"phase", "prefill,decode"}, {"direction", "fwd,bwd"}, {"causal", "0,1"},
                {"batch", "2"}, {"heads", "16"}, {"kv_heads", "16"}, {"seq_q", "1,4096"}, {"seq_kv", "4096"},
                {"head_dim", "128"}, {"page_size", "16"}},
               {{"phase", "prefill,decode"}, {"direction", "fwd,bwd"}, {"causal", "0,1"}, {"batch", "1"},
                {"heads", "4"}, {"kv_heads", "2"}, {"seq_q", "1,512"}, {"seq_kv", "512"}, {"page_size", "16"}}),
        // FlashAttention's benchmark grid (benchmarks/benchmark_attn.py): batch x seq = 16k tokens,
        // seq 512 to 16k, head_dim 64 and 128, causal or not, forward and backward; fp8 (E4M3) for
        // the forward, as FlashAttention-3's tables have it (its backward is planned as skipped).
        preset("standard",
               {{"dtype", "bf16,fp16,fp8-e4m3"}, {"direction", "fwd,bwd"}, {"causal", "0,1"}, {"tokens", "16384"},
                {"heads", "16"}, {"seq_q", "512:16384:x2"}, {"head_dim", "64,128"}},
               {{"direction", "fwd,bwd"}, {"causal", "0,1"}, {"tokens", "4096"}, {"heads", "8"},
                {"seq_q", "512:4096:x2"}, {"head_dim", "64,128"}}),
        // (Presets cross heads and kv_heads: every kv_heads value must divide every heads value.)
        preset("full",
               {{"dtype", "bf16,fp16,fp8-e4m3"}, {"direction", "fwd,bwd,fwd_bwd"}, {"causal", "0,1"}, {"tokens", "16384,32768"},
                {"heads", "32"}, {"kv_heads", "32,8"}, {"seq_q", "512:16384:x2"}, {"head_dim", "64,128,256"}},
               {{"direction", "fwd,bwd,fwd_bwd"}, {"causal", "0,1"}, {"tokens", "4096"}, {"heads", "8"},
                {"kv_heads", "8,2"}, {"seq_q", "256:4096:x2"}, {"head_dim", "64,128"}}),
        // Decode over a KV cache: context lengths, batches, contiguous and paged.
        preset("decode",
               {{"dtype", "bf16"}, {"phase", "decode"}, {"batch", "1,16,64"}, {"heads", "32"}, {"kv_heads", "8"},
                {"seq_q", "1"}, {"seq_kv", "1024:32768:x2"}, {"head_dim", "128"}, {"page_size", "0,16"}},
               {{"phase", "decode"}, {"batch", "1,16"}, {"heads", "32"}, {"kv_heads", "8"}, {"seq_q", "1"},
                {"seq_kv", "1024:16384:x2"}, {"head_dim", "128"}, {"page_size", "0,16"}}),
    };
  }

  // Axes a phase does not read are set to the value that says so, and points that become equal
  // are planned once: decode is causal-free (its one query, at the end of the context, sees
  // every key: causal=1 is causal=0) and takes no tokens; a prefill reads a contiguous K and V
  // (page_size 0) and tokens, when given, sets its batch.
  Point resolve(const DeviceInfo& device, Point point) const override {
    (void)device;
    if (point.text("phase") == "decode") {
      point.set("causal", std::int64_t{0});
      point.set("tokens", std::int64_t{0});
    } else {
      point.set("page_size", std::int64_t{0});
      if (const std::int64_t tokens = point.integer("tokens"); tokens > 0) {
        point.set("batch", std::max<std::int64_t>(1, tokens / point.integer("seq_q")));
      }
    }
    return point;
  }

  // Combinations that mean nothing: a provider of the other kind of device; decode with
  // seq_q != 1 or a backward; prefill of one token (that is decode); threads for cuDNN.
  bool applies(const DeviceInfo& device, const Point& point) const override {
    const std::string provider = point.text("provider");
    if (is_gpu_provider(provider) != device.is_cuda()) return false;
    if (is_gpu_provider(provider) && point.integer("threads") != 0) return false;
    if (point.text("phase") == "decode") return point.integer("seq_q") == 1 && point.text("direction") == "fwd";
    return point.integer("seq_q") > 1;
  }

  // Shapes that cannot exist are usage errors naming the axis; then every tensor within the
  // per-case limit.
  void check_sizes(const DeviceInfo& device, const Point& point) const override {
    (void)device;
    const std::string what = "attention " + point.label();
    const std::int64_t heads = point.integer("heads"), kv = point.integer("kv_heads");
    if (heads % kv != 0) {
      throw UsageError(fmt::format("{}: heads={} is not a multiple of kv_heads={} (grouped-query attention shares "
                                   "each KV head among heads / kv_heads query heads)",
                                   what, heads, kv));
    }
    const std::int64_t page = point.integer("page_size"), seq_kv = point.integer("seq_kv");
    if (page > 0 && seq_kv % page != 0) {
      throw UsageError(fmt::format("{}: page_size={} does not divide seq_kv={} (the cache holds whole pages)", what,
                                   page, seq_kv));
    }
    const std::int64_t batch = point.integer("batch"), d = point.integer("head_dim");
    checked_size(what + ", Q", {{"batch", batch}, {"heads", heads}, {"seq_q", point.integer("seq_q")},
                                {"head_dim", d}, {"bytes per element and tensors (Q, O, dO, dQ)", 16}});
    checked_size(what + ", K and V", {{"batch", batch}, {"kv_heads", kv}, {"seq_kv", seq_kv}, {"head_dim", d},
                                      {"bytes per element and tensors (K, V, dK, dV)", 16}});
    // The materialised scores of one head (naive) and one head's rows: index range of the kernels.
    checked_size(what + ", scores of one head", {{"seq_q", point.integer("seq_q")}, {"seq_kv", seq_kv}, {"bytes", 8}});
  }

  std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const override {
    const std::string dtype = point.text("dtype");
    if (!device.is_cuda()) {
      if (dtype != "fp32") return fmt::format("the CPU providers compute in fp32 (dtype={} is for CUDA devices)", dtype);
      return std::nullopt;
    }
    if (dtype == "fp32") return "cuDNN's fused SDPA takes fp16 or bf16 (fp32 runs on the CPU providers)";
    if (device.cc_major < 8) {
      return fmt::format("compute capability {}.{}: cuDNN's fused SDPA needs sm_80 or newer", device.cc_major,
                         device.cc_minor);
    }
    const std::int64_t d = point.integer("head_dim");
    if (d % 8 != 0 || d > 256) return fmt::format("head_dim={}: cuDNN's fused SDPA takes multiples of 8 up to 256", d);
    if (dtype == "fp8-e4m3") {
      const AttentionSpec s = spec_from(point);
      // The loaded cuDNN's version is checked when the case runs (setup).
      if (auto why = ka::fp8_forward_unsupported(device.cc_major, device.cc_minor, s.shape, s.decode,
                                                 s.direction != Direction::Forward, std::nullopt)) {
        return why;
      }
    }
    return cudnn_unavailable();
  }

  // A build without the cuDNN frontend has no CUDA provider: said once per device.
  std::optional<std::string> not_applicable(const DeviceInfo& device) const override {
    if (device.is_cuda() && !cudnn_built()) {
      return "attention on CUDA devices runs through cuDNN's fused SDPA, and " + *cudnn_unavailable() +
             "; run the CPU providers with --device cpu";
    }
    return std::nullopt;
  }

  nlohmann::ordered_json libraries() const override {
    return {{"cudnn", cudnn_built() ? cudnn_version_text() : std::string("not built")}};
  }

  std::optional<std::string> plan_note(const DeviceInfo& device, const Point& point) const override {
    if (device.is_cuda()) {
      return std::string(point.text("dtype") == "fp8-e4m3" ? "cuDNN fused SDPA in fp8 (E4M3, per-tensor scales)"
                                                           : "cuDNN fused SDPA (flash attention)");
    }
    const AttentionSpec s = spec_from(point);
    return fmt::format("{:.3g} GFLOP per run{}", run_flops(s) / 1e9,
                       s.decode ? fmt::format(", {:.3g} MB read", ka::decode_bytes(s.shape, 4) / 1e6) : std::string());
  }

  std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const override {
    const AttentionSpec spec = spec_from(point);
    if (device.is_cuda()) return make_cudnn_case(device, spec);
    return make_cpu_case(spec);
  }
};

}  // namespace

std::string direction_name(Direction d) {
  switch (d) {
    case Direction::Forward: return "fwd";
    case Direction::Backward: return "bwd";
    case Direction::ForwardBackward: return "fwd_bwd";
  }
  return "fwd";
}

AttentionSpec spec_from(const Point& point) {
  AttentionSpec s;
  s.provider = point.text("provider");
  s.dtype = point.text("dtype");
  s.decode = point.text("phase") == "decode";
  const std::string direction = point.text("direction");
  s.direction = direction == "bwd"       ? Direction::Backward
                : direction == "fwd_bwd" ? Direction::ForwardBackward
                                         : Direction::Forward;
  ka::Shape& sh = s.shape;
  sh.batch = point.integer("batch");
  sh.heads = point.integer("heads");
  sh.kv_heads = point.integer("kv_heads");
  sh.seq_q = point.integer("seq_q");
  sh.seq_kv = point.integer("seq_kv");
  sh.head_dim = point.integer("head_dim");
  sh.causal = point.integer("causal") != 0;
  sh.page_size = point.integer("page_size");
  s.threads = static_cast<int>(point.integer("threads"));
  return s;
}

double run_flops(const AttentionSpec& s, ka::Mask mask) {
  switch (s.direction) {
    case Direction::Forward: return ka::forward_flops(s.shape, mask);
    case Direction::Backward: return ka::backward_flops(s.shape, mask);
    case Direction::ForwardBackward: return ka::forward_flops(s.shape, mask) + ka::backward_flops(s.shape, mask);
  }
  return 0;
}

double run_flops(const AttentionSpec& s) { return run_flops(s, s.shape.mask()); }

std::unique_ptr<Suite> make_suite() { return std::make_unique<AttentionSuite>(); }

}  // namespace gpubench::suites::attention
