// attention=fused on CUDA: the train step's attention through cuDNN's fused SDPA (the attention
// suite's graphs, cudnn_graph.hpp), forward and backward over the model's packed heads. The
// plans are the attention suite's for the step's shape: [B, H, T, D] Q, K, V, O, dO, dQ, dK, dV
// and fp32 stats [B, H, T, 1], causal, scale 1/sqrt(D); the graphs are built once per model.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "bench/core/errors.hpp"
#include "bench/suites/attention/cudnn_graph.hpp"
#include "bench/suites/train/cuda_step_common.hpp"
#include "kernels/attention/sdpa_plan.hpp"
#include "kernels/common/device_buffer.hpp"
#include "kernels/common/unique_handle.hpp"

namespace gpubench::suites::train {
namespace {

namespace fe = cudnn_frontend;
namespace ka = kernels::attention;
using attention::build_graph;
using attention::check;

cudnnStatus_t destroy_handle(cudnnHandle_t h) { return fe::detail::destroy_handle(h); }

class CudnnFusedAttention final : public kernels::train::FusedAttention {
 public:
  CudnnFusedAttention(const ModelConfig& c, bool bf16, cudaStream_t stream) {
    if (const auto& why = attention::cudnn_load_error()) throw CaseSkipped(*why);
    ka::Shape shape;
    shape.batch = c.batch;
    shape.heads = shape.kv_heads = c.heads;
    shape.seq_q = shape.seq_kv = c.seq;
    shape.head_dim = c.head_dim();
    shape.causal = true;
    // Owned from here: a throw below (a refused graph, a workspace out of memory) releases it.
    if (fe::detail::create_handle(handle_.reset_and_get()) != CUDNN_STATUS_SUCCESS) {
      throw std::runtime_error("cudnnCreate failed");
    }
    if (fe::detail::set_stream(handle_.get(), stream) != CUDNN_STATUS_SUCCESS) {
      throw std::runtime_error("cudnnSetStream failed");
    }
    forward_plan_ = ka::sdpa_forward_plan(shape);
    backward_plan_ = ka::sdpa_backward_plan(shape);
    try {  // a shape or GPU cuDNN has no engine for is a skip with cuDNN's reason
      forward_ = build_graph(forward_plan_, bf16 ? attention::Io::BF16 : attention::Io::F16, handle_.get());
      backward_ = build_graph(backward_plan_, bf16 ? attention::Io::BF16 : attention::Io::F16, handle_.get());
    } catch (const std::runtime_error& e) {
      throw CaseSkipped(std::string("attention=fused: ") + e.what());
    }
    std::int64_t ws = 0, ws_bwd = 0;
    check(forward_->get_workspace_size(ws), "workspace size");
    check(backward_->get_workspace_size(ws_bwd), "workspace size");
    workspace_ = kernels::DeviceBuf(static_cast<std::size_t>(std::max<std::int64_t>({ws, ws_bwd, 1})), allocated_);
    std::string f, b;
    if (forward_->get_plan_name(f).is_bad()) f = "?";
    if (backward_->get_plan_name(b).is_bad()) b = "?";
    const std::size_t v = fe::detail::get_backend_version();
    description_ = fmt::format("cuDNN {}.{}.{} SDPA, plans {} + {}", v / 10000, v / 100 % 100, v % 100, f, b);
  }
  CudnnFusedAttention(const CudnnFusedAttention&) = delete;
  CudnnFusedAttention& operator=(const CudnnFusedAttention&) = delete;

  void forward(const void* q, const void* k, const void* v, void* o, float* stats) override {
    std::unordered_map<std::int64_t, void*> pack = {{ka::kUidQ, const_cast<void*>(q)},
                                                    {ka::kUidK, const_cast<void*>(k)},
                                                    {ka::kUidV, const_cast<void*>(v)},
                                                    {ka::kUidO, o},
                                                    {ka::kUidStats, stats}};
    check(forward_->execute(handle_.get(), pack, workspace_.get()), "execute (forward)");
  }
  void backward(const void* q, const void* k, const void* v, const void* o, const void* d_o, const float* stats,
                void* dq, void* dk, void* dv) override {
    std::unordered_map<std::int64_t, void*> pack = {
        {ka::kUidQ, const_cast<void*>(q)},  {ka::kUidK, const_cast<void*>(k)},
        {ka::kUidV, const_cast<void*>(v)},  {ka::kUidO, const_cast<void*>(o)},
        {ka::kUidDO, const_cast<void*>(d_o)}, {ka::kUidStats, const_cast<float*>(stats)},
        {ka::kUidDQ, dq},                   {ka::kUidDK, dk},
        {ka::kUidDV, dv}};
    check(backward_->execute(handle_.get(), pack, workspace_.get()), "execute (backward)");
  }
  std::int64_t memory_bytes() const override { return allocated_; }
  std::string description() const override { return description_; }

 private:
  // First, so it is released last: the graphs and plans below go before the handle they use.
  kernels::UniqueHandle<cudnnHandle_t, destroy_handle> handle_;
  ka::SdpaPlan forward_plan_, backward_plan_;
  std::shared_ptr<fe::graph::Graph> forward_, backward_;
  std::int64_t allocated_ = 0;
  kernels::DeviceBuf workspace_;
  std::string description_;
};

}  // namespace

std::unique_ptr<kernels::train::FusedAttention> make_fused_attention(const ModelConfig& c, bool bf16,
                                                                     cudaStream_t stream) {
  return std::make_unique<CudnnFusedAttention>(c, bf16, stream);
}

}  // namespace gpubench::suites::train
