#include "bench/suites/attention/cudnn_graph.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <unordered_map>
#include <vector>

// The frontend's dynamic loading reads the library handle from here (cudnn_frontend_shim.h).
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}

namespace gpubench::suites::attention {

namespace fe = cudnn_frontend;
namespace ka = kernels::attention;

namespace {

fe::DataType_t fe_type(ka::SdpaTensorKind kind, Io io) {
  switch (kind) {
    case ka::SdpaTensorKind::Float: return fe::DataType_t::FLOAT;
    case ka::SdpaTensorKind::Int32: return fe::DataType_t::INT32;
    case ka::SdpaTensorKind::Io: break;
  }
  switch (io) {
    case Io::BF16: return fe::DataType_t::BFLOAT16;
    case Io::E4M3: return fe::DataType_t::FP8_E4M3;
    case Io::F16: break;
  }
  return fe::DataType_t::HALF;
}

}  // namespace

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

Io io_of(const std::string& dtype) {
  if (dtype == "bf16") return Io::BF16;
  if (dtype == "fp8-e4m3") return Io::E4M3;
  return Io::F16;
}

std::size_t io_bytes(Io io) { return io == Io::E4M3 ? 1 : 2; }

std::size_t element_bytes(ka::SdpaTensorKind kind, Io io) {
  return kind == ka::SdpaTensorKind::Io ? io_bytes(io) : 4;
}

// The frontend graph of a plan (sdpa_plan.hpp), built for the handle's device.
std::shared_ptr<fe::graph::Graph> build_graph(const ka::SdpaPlan& plan, Io io, cudnnHandle_t handle) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(fe_type(ka::SdpaTensorKind::Io, io))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  std::unordered_map<std::int64_t, std::shared_ptr<fe::graph::Tensor_attributes>> in;
  for (const ka::SdpaTensor& t : plan.inputs) {
    in[t.uid] = g->tensor(fe::graph::Tensor_attributes()
                              .set_name(t.name)
                              .set_uid(t.uid)
                              .set_dim(t.dim)
                              .set_stride(t.stride)
                              .set_data_type(fe_type(t.kind, io)));
  }
  auto finish = [&](const std::shared_ptr<fe::graph::Tensor_attributes>& out, std::int64_t uid) {
    const ka::SdpaTensor& t = plan.tensor(uid);
    out->set_output(true).set_uid(uid).set_dim(t.dim).set_stride(t.stride).set_data_type(fe_type(t.kind, io));
  };
  if (plan.fp8) {
    // SDPA_fp8_attributes is SDPA_attributes (frontend 1.32); the scales are inputs of their own.
    auto options = fe::graph::SDPA_fp8_attributes()
                       .set_name("sdpa_fp8_forward")
                       .set_generate_stats(true)
                       .set_attn_scale(plan.attn_scale)
                       .set_causal_mask(plan.causal_top_left)
                       .set_causal_mask_bottom_right(plan.causal_bottom_right);
    auto [o, stats, amax_s, amax_o] =
        g->sdpa_fp8(in.at(ka::kUidQ), in.at(ka::kUidK), in.at(ka::kUidV), in.at(ka::kUidDescaleQ),
                    in.at(ka::kUidDescaleK), in.at(ka::kUidDescaleV), in.at(ka::kUidDescaleS), in.at(ka::kUidScaleS),
                    in.at(ka::kUidScaleO), options);
    finish(o, ka::kUidO);
    finish(stats, ka::kUidStats);
    finish(amax_s, ka::kUidAmaxS);
    finish(amax_o, ka::kUidAmaxO);
  } else if (!plan.backward) {
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

}  // namespace gpubench::suites::attention
