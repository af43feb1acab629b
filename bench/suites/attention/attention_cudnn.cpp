// The `cudnn` provider: cuDNN's fused SDPA (flash attention) through the cuDNN frontend's graph
// API, forward, backward and decode over a paged KV cache, in fp16 or bf16, and the prefill forward
// in fp8 (E4M3, per-tensor scales) on Hopper and newer. Compiled only with
// the frontend's headers (GPUBENCH_WITH_CUDNN); the frontend loads libcudnn itself at run time
// (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING), so gpubench links no cuDNN and a host without it
// skips these cases with the reason. The graph's tensors come from kernels/attention/sdpa_plan.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/attention/attention.hpp"
#include "bench/suites/attention/cudnn_graph.hpp"
#include "kernels/attention/sdpa_plan.hpp"
#include "kernels/common/float_formats.hpp"

namespace gpubench::suites::attention {
namespace {

namespace fe = cudnn_frontend;
namespace ka = kernels::attention;


class CudnnAttentionCase final : public CudaCase {
 public:
  CudnnAttentionCase(const DeviceInfo& device, const AttentionSpec& spec)
      : CudaCase(device), s_(spec), io_(io_of(spec.dtype)) {}

  ~CudnnAttentionCase() override {
    if (handle_ != nullptr) (void)fe::detail::destroy_handle(handle_);
  }

  void setup() override {
    if (const auto& why = cudnn_load_error()) throw CaseSkipped(*why);
    const std::size_t version = fe::detail::get_backend_version();
    if (s_.shape.page_size > 0 && version < 90500) {
      throw CaseSkipped(fmt::format("a paged KV cache needs cuDNN 9.5 or newer (loaded: {})", version));
    }
    const bool bwd = s_.direction != Direction::Forward;
    if (io_ == Io::E4M3) {
      if (auto why = ka::fp8_forward_unsupported(device().cc_major, device().cc_minor, s_.shape, s_.decode, bwd, version)) {
        throw CaseSkipped(*why);
      }
    }
    if (fe::detail::create_handle(&handle_) != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnCreate failed");
    if (fe::detail::set_stream(handle_, stream()) != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnSetStream failed");

    // Inputs: the CPU reference's values rounded to the element type (fp8: quantised with the
    // tensor's scale and dequantised), so the reference sees exactly what the GPU reads.
    const ka::Shape& sh = s_.shape;
    host_q_.resize(static_cast<std::size_t>(sh.q_elements()));
    host_k_.resize(static_cast<std::size_t>(sh.kv_elements()));
    host_v_.resize(host_k_.size());
    if (bwd) host_dout_.resize(host_q_.size());
    fill_inputs(s_, host_q_.data(), host_k_.data(), host_v_.data(), bwd ? host_dout_.data() : nullptr);
    if (io_ == Io::E4M3) {
      const ka::Fp8Scales f = ka::fp8_scales(amax(host_q_), amax(host_k_), amax(host_v_));
      io_scale_ = {{ka::kUidQ, f.q}, {ka::kUidK, f.k}, {ka::kUidV, f.v}, {ka::kUidO, f.o}};
      forward_plan_ = ka::sdpa_fp8_forward_plan(sh, f);
    } else {
      forward_plan_ = ka::sdpa_forward_plan(sh);
    }
    round_to_io(ka::kUidQ, host_q_);
    round_to_io(ka::kUidK, host_k_);
    round_to_io(ka::kUidV, host_v_);
    round_to_io(ka::kUidDO, host_dout_);

    // An engine cuDNN does not have for this shape or GPU is a skip with cuDNN's reason.
    try {
      forward_ = build_graph(forward_plan_, io_, handle_);
      if (bwd) {
        backward_plan_ = ka::sdpa_backward_plan(sh);
        backward_ = build_graph(backward_plan_, io_, handle_);
      }
    } catch (const std::runtime_error& e) {
      throw CaseSkipped(e.what());
    }
    std::int64_t ws = 0;
    check(forward_->get_workspace_size(ws), "workspace size");
    std::int64_t ws_bwd = 0;
    if (backward_) check(backward_->get_workspace_size(ws_bwd), "workspace size");
    workspace_ = cuda::DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>({ws, ws_bwd, 1})));
    std::string name;
    if (forward_->get_plan_name(name).is_good()) plan_names_.push_back(name);
    if (backward_ && backward_->get_plan_name(name).is_good()) plan_names_.push_back(name);

    for (const auto* plan : {&forward_plan_, &backward_plan_}) {
      for (const auto* list : {&plan->inputs, &plan->outputs}) {
        for (const ka::SdpaTensor& t : *list) {
          if (buffers_.count(t.uid)) continue;
          buffers_[t.uid] = cuda::DeviceBuffer(static_cast<std::size_t>(t.elements()) * element_bytes(t.kind, io_));
          pack_[t.uid] = buffers_[t.uid].get();
        }
      }
    }
    // Each graph's variant pack holds exactly its own tensors.
    for (const auto& [plan, pack] : {std::pair{&forward_plan_, &forward_pack_}, std::pair{&backward_plan_, &backward_pack_}}) {
      for (const auto* list : {&plan->inputs, &plan->outputs}) {
        for (const ka::SdpaTensor& t : *list) (*pack)[t.uid] = pack_.at(t.uid);
      }
    }
    upload_io(ka::kUidQ, host_q_);
    upload_io(ka::kUidK, host_k_);
    upload_io(ka::kUidV, host_v_);
    if (bwd) upload_io(ka::kUidDO, host_dout_);
    for (const auto& [uid, value] : forward_plan_.scale_values) upload(uid, &value, sizeof value);
    if (sh.page_size > 0) {
      table_ = ka::scattered_page_table(sh, 0xA77E);
      for (std::int64_t uid : {ka::kUidPageTableK, ka::kUidPageTableV}) upload(uid, table_.data(), table_.size() * 4);
      const std::vector<std::int32_t> seq_q(static_cast<std::size_t>(sh.batch), static_cast<std::int32_t>(sh.seq_q));
      const std::vector<std::int32_t> seq_kv(static_cast<std::size_t>(sh.batch), static_cast<std::int32_t>(sh.seq_kv));
      upload(ka::kUidSeqQ, seq_q.data(), seq_q.size() * 4);
      upload(ka::kUidSeqKv, seq_kv.data(), seq_kv.size() * 4);
    }
    // The backward alone reads the forward's O and Stats: computed once here.
    if (s_.direction == Direction::Backward) execute(*forward_, forward_pack_);
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  Verification verify() override {
    run();
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
    const bool bwd = s_.direction != Direction::Forward;
    std::vector<float> o = download_io(ka::kUidO), lse = download_float(ka::kUidStats), dq, dk, dv;
    if (bwd) {
      dq = download_io(ka::kUidDQ);
      dk = download_io(ka::kUidDK);
      dv = download_io(ka::kUidDV);
    }
    const bool fp8 = io_ == Io::E4M3;
    Verification v = verify_against_reference(
        s_, host_q_.data(), host_k_.data(), host_v_.data(), host_dout_.empty() ? nullptr : host_dout_.data(),
        table_.empty() ? nullptr : table_.data(),
        Outputs{o.data(), lse.data(), bwd ? dq.data() : nullptr, bwd ? dk.data() : nullptr, bwd ? dv.data() : nullptr},
        cudnn_tolerance(s_.dtype, bwd), fp8);
    v.method = "cuDNN SDPA against " + v.method;
    if (fp8) {
      // cuDNN's amax outputs, recorded for users who derive the next step's scales from them.
      amax_s_ = download_float(ka::kUidAmaxS).at(0);
      amax_o_ = download_float(ka::kUidAmaxO).at(0);
      v.method += fmt::format(" (inputs quantised to E4M3 with per-tensor scales Q {}, K {}, V {}; P {}, O {})",
                              io_scale_.at(ka::kUidQ), io_scale_.at(ka::kUidK), io_scale_.at(ka::kUidV),
                              scale_value(ka::kUidScaleS),
                              io_scale_.at(ka::kUidO));
    }
    return v;
  }

  void run() override {
    if (s_.direction != Direction::Backward) execute(*forward_, forward_pack_);
    if (s_.direction != Direction::Forward) execute(*backward_, backward_pack_);
  }

  Metrics metrics() const override {
    Metrics m;
    const double qo = static_cast<double>(s_.shape.q_elements()), kv = static_cast<double>(s_.shape.kv_elements());
    const int e = static_cast<int>(io_bytes(io_));
    if (s_.decode) {
      m.bytes = ka::decode_bytes(s_.shape, e);
      m.peak_key = "memory_bandwidth";
      m.footprint_bytes = 2.0 * kv * e;  // K and V
      m.extra["attention_flops"] = ka::forward_flops(s_.shape, ka::plan_mask(forward_plan_));
    } else {
      m.flops = run_flops(s_, ka::plan_mask(forward_plan_));  // the mask of the graph built
      m.peak_key = io_ == Io::BF16 ? "bf16_tensor" : io_ == Io::E4M3 ? "fp8_tensor" : "fp16_tensor";
      m.bytes = e * (s_.direction == Direction::Forward ? 2 * qo + 2 * kv : 4 * qo + 4 * kv);
    }
    if (io_ == Io::E4M3) {
      m.extra["fp8_amax_s"] = amax_s_;
      m.extra["fp8_amax_o"] = amax_o_;
    }
    m.extra["cudnn_version"] = static_cast<double>(fe::detail::get_backend_version());
    m.extra["workspace_bytes"] = static_cast<double>(workspace_.bytes());
    m.extra["algorithm"] = fmt::format("cuDNN SDPA plan {}", fmt::join(plan_names_, " + "));
    return m;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    if (s_.decode && seconds_per_run > 0) {
      g["metrics"]["gb_per_s"] = ka::decode_bytes(s_.shape, static_cast<int>(io_bytes(io_))) / seconds_per_run / 1e9;
    }
  }

 private:
  void execute(const fe::graph::Graph& g, std::unordered_map<std::int64_t, void*>& pack) {
    check(g.execute(handle_, pack, workspace_.get()), "execute");
  }

  static double amax(const std::vector<float>& v) {
    double m = 0;
    for (float x : v) m = std::max(m, static_cast<double>(std::abs(x)));
    return m;
  }
  float scale_value(std::int64_t uid) const {
    for (const auto& [u, value] : forward_plan_.scale_values) {
      if (u == uid) return value;
    }
    return 0;
  }
  // The scale an Io tensor is stored with (fp8; 1 for fp16/bf16).
  float io_scale(std::int64_t uid) const {
    const auto it = io_scale_.find(uid);
    return it == io_scale_.end() ? 1.0f : it->second;
  }
  std::uint16_t encode16(float x) const {
    return io_ == Io::BF16 ? kernels::float_to_bfloat16_bits(x) : kernels::float_to_half_bits(x);
  }
  float decode16(std::uint16_t b) const {
    return io_ == Io::BF16 ? kernels::bfloat16_bits_to_float(b) : kernels::half_bits_to_float(b);
  }
  static std::uint8_t encode8(float x) { return kernels::float_to_fp8_bits(x, kernels::Storage::E4M3); }
  static float decode8(std::uint8_t b) { return kernels::fp8_bits_to_float(b, kernels::Storage::E4M3); }

  void round_to_io(std::int64_t uid, std::vector<float>& v) const {
    const float scale = io_scale(uid);
    for (float& x : v) x = io_ == Io::E4M3 ? decode8(encode8(x * scale)) / scale : decode16(encode16(x));
  }
  void upload(std::int64_t uid, const void* data, std::size_t bytes) {
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(pack_.at(uid), data, bytes, cudaMemcpyHostToDevice, stream()));
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }
  void upload_io(std::int64_t uid, const std::vector<float>& v) {
    if (io_ == Io::E4M3) {
      // The values are already code x descale with a power-of-two scale: x * scale is the code's value.
      const float scale = io_scale(uid);
      std::vector<std::uint8_t> codes(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) codes[i] = encode8(v[i] * scale);
      upload(uid, codes.data(), codes.size());
      return;
    }
    std::vector<std::uint16_t> bits(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) bits[i] = encode16(v[i]);
    upload(uid, bits.data(), bits.size() * 2);
  }
  std::vector<float> download_io(std::int64_t uid) {
    const std::size_t n = buffers_.at(uid).bytes() / io_bytes(io_);
    std::vector<float> out(n);
    if (io_ == Io::E4M3) {
      std::vector<std::uint8_t> codes(n);
      GPUBENCH_CUDA_CHECK(cudaMemcpy(codes.data(), pack_.at(uid), n, cudaMemcpyDeviceToHost));
      const float descale = 1 / io_scale(uid);
      for (std::size_t i = 0; i < n; ++i) out[i] = decode8(codes[i]) * descale;
      return out;
    }
    std::vector<std::uint16_t> bits(n);
    GPUBENCH_CUDA_CHECK(cudaMemcpy(bits.data(), pack_.at(uid), n * 2, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i) out[i] = decode16(bits[i]);
    return out;
  }
  std::vector<float> download_float(std::int64_t uid) {
    std::vector<float> out(buffers_.at(uid).bytes() / 4);
    GPUBENCH_CUDA_CHECK(cudaMemcpy(out.data(), pack_.at(uid), out.size() * 4, cudaMemcpyDeviceToHost));
    return out;
  }

  AttentionSpec s_;
  Io io_;
  std::unordered_map<std::int64_t, float> io_scale_;  // fp8: Q, K, V and O's scales
  double amax_s_ = 0, amax_o_ = 0;                     // fp8: cuDNN's Amax_S and Amax_O
  cudnnHandle_t handle_ = nullptr;
  ka::SdpaPlan forward_plan_, backward_plan_;
  std::shared_ptr<fe::graph::Graph> forward_, backward_;
  std::vector<std::string> plan_names_;
  std::unordered_map<std::int64_t, cuda::DeviceBuffer> buffers_;
  std::unordered_map<std::int64_t, void*> pack_;  // every buffer by UID
  std::unordered_map<std::int64_t, void*> forward_pack_, backward_pack_;
  cuda::DeviceBuffer workspace_;
  std::vector<float> host_q_, host_k_, host_v_, host_dout_;
  std::vector<std::int32_t> table_;
};

}  // namespace

std::optional<std::string> cudnn_unavailable() { return cudnn_load_error(); }

bool cudnn_built() { return true; }

// The loaded cuDNN, and what the provider was compiled with (the frontend's version and where its
// cudnn.h came from: the toolkit's or a PyPI wheel's, bench/CMakeLists.txt).
std::string cudnn_version_text() {
  const std::string built = fmt::format("frontend {}.{}.{}, {}", CUDNN_FRONTEND_MAJOR_VERSION, CUDNN_FRONTEND_MINOR_VERSION,
                                        CUDNN_FRONTEND_PATCH_VERSION, GPUBENCH_CUDNN_HEADERS);
  if (cudnn_load_error()) return fmt::format("not loaded ({})", built);
  const std::size_t v = fe::detail::get_backend_version();
  return fmt::format("{}.{}.{} ({})", v / 10000, v / 100 % 100, v % 100, built);
}

std::unique_ptr<Case> make_cudnn_case(const DeviceInfo& device, const AttentionSpec& spec) {
  return std::make_unique<CudnnAttentionCase>(device, spec);
}

}  // namespace gpubench::suites::attention
