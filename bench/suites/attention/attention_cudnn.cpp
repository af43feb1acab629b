// The `cudnn` provider: cuDNN's fused SDPA (flash attention) through the cuDNN frontend's graph
// API, forward, backward and decode over a paged KV cache, in fp16 or bf16. Compiled only with
// the frontend's headers (GPUBENCH_WITH_CUDNN); the frontend loads libcudnn itself at run time
// (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING), so gpubench links no cuDNN and a host without it
// skips these cases with the reason. The graph's tensors come from kernels/attention/sdpa_plan.hpp.
#include <cudnn_frontend.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bench/core/cuda_case.hpp"
#include "bench/core/errors.hpp"
#include "bench/suites/attention/attention.hpp"
#include "kernels/attention/sdpa_plan.hpp"
#include "kernels/common/float_formats.hpp"

// The frontend's dynamic loading reads the library handle from here (cudnn_frontend_shim.h).
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}

namespace gpubench::suites::attention {
namespace {

namespace fe = cudnn_frontend;
namespace ka = kernels::attention;

// libcudnn.so.9 opened once for the process; the reason when it cannot be. The frontend also
// opens the shared CUDA runtime (libcudart.so.12 or .13; gpubench itself links it statically),
// so a host without one cannot run these cases either.
const std::optional<std::string>& cudnn_load_error() {
  static const std::optional<std::string> error = []() -> std::optional<std::string> {
    void* rt = dlopen("libcudart.so.13", RTLD_NOW);
    if (rt == nullptr) rt = dlopen("libcudart.so.12", RTLD_NOW);
    if (rt == nullptr) {
      return std::string("libcudart.so.13 (or .12) not found: the cuDNN frontend loads the shared CUDA runtime (the "
                         "toolkit's, or pip's nvidia-cuda-runtime)");
    }
    void* h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
    if (h == nullptr) {
      const char* e = dlerror();
      return fmt::format("libcudnn.so.9 not found ({}): install cuDNN 9 (the toolkit's, or pip's nvidia-cudnn-cu13 "
                         "with its nvidia/cudnn/lib on LD_LIBRARY_PATH)",
                         e != nullptr ? e : "dlopen failed");
    }
    // cuDNN 9's libcudnn.so.9 forwards every call, cudnnGetVersion included, to sub-libraries it
    // loads on first use, and aborts the process when one is missing (an incomplete install):
    // they must load before anything is called.
    for (const char* part : {"libcudnn_graph.so.9", "libcudnn_heuristic.so.9", "libcudnn_engines_precompiled.so.9"}) {
      if (dlopen(part, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
        const char* e = dlerror();
        return fmt::format("libcudnn.so.9 is there but not its {} ({}): an incomplete cuDNN install", part,
                           e != nullptr ? e : "dlopen failed");
      }
    }
    fe::cudnn_dlhandle = h;
    return std::nullopt;
  }();
  return error;
}

void check(fe::error_t e, const std::string& what) {
  if (e.is_bad()) throw std::runtime_error(fmt::format("cuDNN {}: {}", what, e.get_message()));
}

fe::DataType_t fe_type(ka::SdpaTensorKind kind, bool bf16) {
  switch (kind) {
    case ka::SdpaTensorKind::Float: return fe::DataType_t::FLOAT;
    case ka::SdpaTensorKind::Int32: return fe::DataType_t::INT32;
    case ka::SdpaTensorKind::Io: break;
  }
  return bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
}

std::size_t element_bytes(ka::SdpaTensorKind kind) { return kind == ka::SdpaTensorKind::Io ? 2 : 4; }

// The frontend graph of a plan (sdpa_plan.hpp), built for the handle's device.
std::shared_ptr<fe::graph::Graph> build_graph(const ka::SdpaPlan& plan, bool bf16, cudnnHandle_t handle) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  std::unordered_map<std::int64_t, std::shared_ptr<fe::graph::Tensor_attributes>> in;
  for (const ka::SdpaTensor& t : plan.inputs) {
    in[t.uid] = g->tensor(fe::graph::Tensor_attributes()
                              .set_name(t.name)
                              .set_uid(t.uid)
                              .set_dim(t.dim)
                              .set_stride(t.stride)
                              .set_data_type(fe_type(t.kind, bf16)));
  }
  auto finish = [&](const std::shared_ptr<fe::graph::Tensor_attributes>& out, std::int64_t uid) {
    const ka::SdpaTensor& t = plan.tensor(uid);
    out->set_output(true).set_uid(uid).set_dim(t.dim).set_stride(t.stride).set_data_type(fe_type(t.kind, bf16));
  };
  if (!plan.backward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("sdpa_forward")
                       .set_generate_stats(true)
                       .set_attn_scale(plan.attn_scale)
                       .set_causal_mask_bottom_right(plan.causal_bottom_right);
    if (plan.paged) {
      options.set_padding_mask(true)
          .set_seq_len_q(in.at(ka::kUidSeqQ))
          .set_seq_len_kv(in.at(ka::kUidSeqKv))
          .set_paged_attention_k_table(in.at(ka::kUidPageTableK))
          .set_paged_attention_v_table(in.at(ka::kUidPageTableV))
          .set_paged_attention_max_seq_len_kv(static_cast<int>(plan.max_seq_len_kv));
    }
    auto [o, stats] = g->sdpa(in.at(ka::kUidQ), in.at(ka::kUidK), in.at(ka::kUidV), options);
    finish(o, ka::kUidO);
    finish(stats, ka::kUidStats);
  } else {
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("sdpa_backward")
                       .set_attn_scale(plan.attn_scale)
                       .set_causal_mask_bottom_right(plan.causal_bottom_right);
    auto [dq, dk, dv] = g->sdpa_backward(in.at(ka::kUidQ), in.at(ka::kUidK), in.at(ka::kUidV), in.at(ka::kUidO),
                                         in.at(ka::kUidDO), in.at(ka::kUidStats), options);
    finish(dq, ka::kUidDQ);
    finish(dk, ka::kUidDK);
    finish(dv, ka::kUidDV);
  }
  check(g->validate(), "graph validation");
  check(g->build_operation_graph(handle), "operation graph");
  check(g->create_execution_plans({fe::HeurMode_t::A}), "execution plans");
  check(g->check_support(handle), "support check");
  check(g->build_plans(handle), "plan build");
  return g;
}

// Tolerances relative to |reference| + the tensor's RMS (verify.cpp): the outputs are rounded to
// the element type (2^-9 relative for bf16, 2^-12 for fp16) after fp32 accumulation; the
// backward's gradients sum over a sequence first, so they get twice the room.
double tolerance(bool bf16, bool backward) { return (bf16 ? 2e-2 : 1e-2) * (backward ? 2.5 : 1.0); }

class CudnnAttentionCase final : public CudaCase {
 public:
  CudnnAttentionCase(const DeviceInfo& device, const AttentionSpec& spec)
      : CudaCase(device), s_(spec), bf16_(spec.dtype == "bf16") {}

  ~CudnnAttentionCase() override {
    if (handle_ != nullptr) (void)fe::detail::destroy_handle(handle_);
  }

  void setup() override {
    if (const auto& why = cudnn_load_error()) throw CaseSkipped(*why);
    if (s_.shape.page_size > 0 && fe::detail::get_backend_version() < 90500) {
      throw CaseSkipped(fmt::format("a paged KV cache needs cuDNN 9.5 or newer (loaded: {})",
                                    fe::detail::get_backend_version()));
    }
    if (fe::detail::create_handle(&handle_) != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnCreate failed");
    if (fe::detail::set_stream(handle_, stream()) != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnSetStream failed");
    const bool bwd = s_.direction != Direction::Forward;
    forward_plan_ = ka::sdpa_forward_plan(s_.shape);
    // An engine cuDNN does not have for this shape or GPU is a skip with cuDNN's reason.
    try {
      forward_ = build_graph(forward_plan_, bf16_, handle_);
      if (bwd) {
        backward_plan_ = ka::sdpa_backward_plan(s_.shape);
        backward_ = build_graph(backward_plan_, bf16_, handle_);
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

    // Inputs: the CPU reference's values rounded to the element type (the reference then sees
    // exactly what the GPU reads).
    const ka::Shape& sh = s_.shape;
    host_q_.resize(static_cast<std::size_t>(sh.q_elements()));
    host_k_.resize(static_cast<std::size_t>(sh.kv_elements()));
    host_v_.resize(host_k_.size());
    if (bwd) host_dout_.resize(host_q_.size());
    fill_inputs(s_, host_q_.data(), host_k_.data(), host_v_.data(), bwd ? host_dout_.data() : nullptr);
    for (auto* v : {&host_q_, &host_k_, &host_v_, &host_dout_}) round_to_io(*v);
    for (const auto* plan : {&forward_plan_, &backward_plan_}) {
      for (const auto* list : {&plan->inputs, &plan->outputs}) {
        for (const ka::SdpaTensor& t : *list) {
          if (buffers_.count(t.uid)) continue;
          buffers_[t.uid] = cuda::DeviceBuffer(static_cast<std::size_t>(t.elements()) * element_bytes(t.kind));
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
    Verification v = verify_against_reference(
        s_, host_q_.data(), host_k_.data(), host_v_.data(), host_dout_.empty() ? nullptr : host_dout_.data(),
        table_.empty() ? nullptr : table_.data(),
        Outputs{o.data(), lse.data(), bwd ? dq.data() : nullptr, bwd ? dk.data() : nullptr, bwd ? dv.data() : nullptr},
        tolerance(bf16_, bwd));
    v.method = "cuDNN SDPA against " + v.method;
    return v;
  }

  void run() override {
    if (s_.direction != Direction::Backward) execute(*forward_, forward_pack_);
    if (s_.direction != Direction::Forward) execute(*backward_, backward_pack_);
  }

  Metrics metrics() const override {
    Metrics m;
    const double qo = static_cast<double>(s_.shape.q_elements()), kv = static_cast<double>(s_.shape.kv_elements());
    if (s_.decode) {
      m.bytes = ka::decode_bytes(s_.shape, 2);
      m.peak_key = "memory_bandwidth";
      m.footprint_bytes = 2.0 * kv * 2;
      m.extra["attention_flops"] = ka::forward_flops(s_.shape);
    } else {
      m.flops = run_flops(s_);
      m.peak_key = bf16_ ? "bf16_tensor" : "fp16_tensor";
      m.bytes = 2.0 * (s_.direction == Direction::Forward ? 2 * qo + 2 * kv : 4 * qo + 4 * kv);
    }
    m.extra["cudnn_version"] = static_cast<double>(fe::detail::get_backend_version());
    m.extra["workspace_bytes"] = static_cast<double>(workspace_.bytes());
    m.extra["algorithm"] = fmt::format("cuDNN SDPA plan {}", fmt::join(plan_names_, " + "));
    return m;
  }

  void annotate(nlohmann::ordered_json& g, double seconds_per_run) const override {
    if (s_.decode && seconds_per_run > 0) g["metrics"]["gb_per_s"] = ka::decode_bytes(s_.shape, 2) / seconds_per_run / 1e9;
  }

 private:
  void execute(const fe::graph::Graph& g, std::unordered_map<std::int64_t, void*>& pack) {
    check(g.execute(handle_, pack, workspace_.get()), "execute");
  }

  void round_to_io(std::vector<float>& v) const {
    for (float& x : v) {
      x = bf16_ ? kernels::bfloat16_bits_to_float(kernels::float_to_bfloat16_bits(x))
                : kernels::half_bits_to_float(kernels::float_to_half_bits(x));
    }
  }
  void upload(std::int64_t uid, const void* data, std::size_t bytes) {
    GPUBENCH_CUDA_CHECK(cudaMemcpyAsync(pack_.at(uid), data, bytes, cudaMemcpyHostToDevice, stream()));
    GPUBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }
  void upload_io(std::int64_t uid, const std::vector<float>& v) {
    std::vector<std::uint16_t> bits(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      bits[i] = bf16_ ? kernels::float_to_bfloat16_bits(v[i]) : kernels::float_to_half_bits(v[i]);
    }
    upload(uid, bits.data(), bits.size() * 2);
  }
  std::vector<float> download_io(std::int64_t uid) {
    std::vector<std::uint16_t> bits(buffers_.at(uid).bytes() / 2);
    GPUBENCH_CUDA_CHECK(cudaMemcpy(bits.data(), pack_.at(uid), bits.size() * 2, cudaMemcpyDeviceToHost));
    std::vector<float> out(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) {
      out[i] = bf16_ ? kernels::bfloat16_bits_to_float(bits[i]) : kernels::half_bits_to_float(bits[i]);
    }
    return out;
  }
  std::vector<float> download_float(std::int64_t uid) {
    std::vector<float> out(buffers_.at(uid).bytes() / 4);
    GPUBENCH_CUDA_CHECK(cudaMemcpy(out.data(), pack_.at(uid), out.size() * 4, cudaMemcpyDeviceToHost));
    return out;
  }

  AttentionSpec s_;
  bool bf16_;
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
