#pragma once
// The CPU reference of the `train` models (see model_config.hpp) in float or double: forward,
// backward (with activation recompute) and AdamW over one flat parameter buffer. The suite's
// CPU device benchmarks it in float; verification and the GPU path compare against it in
// double. No harness dependency: usable as a training-step consumer by other code.
//
//   ReferenceModel<float> model(config, /*seed=*/1);
//   auto batch = make_batch(config, /*seed=*/7);
//   model.zero_grads();
//   double loss = model.forward(batch);
//   model.backward(batch, 1.0);
//   model.optimizer_step(AdamW{});
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/train/model_config.hpp"
#include "kernels/train/ops_reference.hpp"

namespace gpubench::kernels::train {

// One micro-batch of synthetic data. transformer: tokens[B*T] and targets[B*T] (the next token,
// so the model has something to learn); mlp: inputs[B*C] in [-1, 1) and targets[B] classes.
struct Batch {
  std::vector<std::int32_t> tokens, targets;
  std::vector<double> inputs;
};
Batch make_batch(const ModelConfig& c, std::uint64_t seed);

// Initial parameters (deterministic in the seed): linear weights uniform with standard
// deviation 0.02 (GPT-2's init; 1/sqrt(in) for the mlp so its signal neither dies nor grows),
// LayerNorm gains 1, biases and LayerNorm shifts 0.
std::vector<double> initial_params(const ModelConfig& c, std::uint64_t seed);

// Host seconds a transformer step spent in attention and in the dense matrix products (the
// linear layers and the LM head); the rest of the step is everything else (norms, GELU,
// residuals, the loss, AdamW).
struct OpSeconds {
  double attention = 0, dense = 0;
};

template <class T>
class ReferenceModel {
 public:
  ReferenceModel(const ModelConfig& c, std::uint64_t seed);
  const ModelConfig& config() const { return c_; }
  const ParamLayout& layout() const { return layout_; }
  std::vector<T>& params() { return p_; }
  const std::vector<T>& params() const { return p_; }
  const std::vector<T>& grads() const { return g_; }
  std::vector<T>& grads() { return g_; }
  std::int64_t optimizer_steps() const { return t_; }

  void zero_grads();
  // Loss of the micro-batch (mean cross-entropy); keeps what backward() needs.
  double forward(const Batch& b);
  // grads += grad_scale * d(loss)/d(params) for the micro-batch forward() last saw.
  void backward(const Batch& b, double grad_scale);
  void optimizer_step(const AdamW& hp);
  // zero_grads, then forward + backward of each micro-batch with grad_scale 1/accum (so the
  // gradient is that of the mean loss), then AdamW. Returns the mean loss.
  double train_step(const std::vector<Batch>& micro, const AdamW& hp);

  // Bytes this model holds: parameters, gradients, AdamW moments, activations and scratch.
  std::int64_t memory_bytes() const;

  // Called by backward() each time the gradients at flat offsets >= `watermark` are complete
  // (after the head, after each layer or block in reverse order, and with 0 at the end). The
  // watermark only decreases within one backward(), since the layout is in forward order.
  // Inside a transformer block it is also called again with the unchanged watermark between the
  // block's matmuls, so a caller can let communication progress more often.
  // Data-parallel steps start a bucket's collective from it while backward goes on.
  using GradReadyHook = std::function<void(std::int64_t watermark)>;
  void set_grad_ready_hook(GradReadyHook hook) { ready_ = std::move(hook); }
  // While set (not null), forward and backward add their attention and dense-product time to
  // `seconds` (a clock read around each call: for steps timed apart, not the measured ones).
  void set_op_seconds(OpSeconds* seconds) { op_seconds_ = seconds; }

  // Extends the flat parameter, gradient and moment buffers with zeros to `elements` (>= the
  // layout's total): zero1's reduce-scatter needs a count divisible by the ranks. A padding
  // entry has a zero gradient, so AdamW keeps it at zero.
  void pad_to(std::int64_t elements);
  // Frees the AdamW moments: a zero1 step keeps them for its shard only and updates the
  // parameters itself. optimizer_step() then throws std::logic_error.
  void drop_moments();

 private:
  // Activations of one transformer block (one of these per block, or one shared slot when the
  // block is recomputed).
  struct BlockActs {
    std::vector<T> ln1_out, ln1_mean, ln1_rstd, qkv, p, att, x_mid, ln2_out, ln2_mean, ln2_rstd;
    std::vector<T> lse;  // fused attention: each row's log-sum-exp [B, H, T] (instead of p)
  };
  struct MlpActs {
    std::vector<T> h, g;  // fc1 output and its GELU
  };
  const T* w(const char* name) const { return p_.data() + layout_.at(name).offset; }
  T* dw(const std::string& name) { return g_.data() + layout_.at(name).offset; }
  const T* lw(std::int64_t l, const char* what) const { return p_.data() + layout_.at(names::layer(l, what)).offset; }
  T* ldw(std::int64_t l, const char* what) { return g_.data() + layout_.at(names::layer(l, what)).offset; }
  BlockActs& block(std::int64_t l) { return blocks_[c_.recompute == Recompute::Block ? 0 : l]; }
  MlpActs& mlp(std::int64_t l) { return mlps_[c_.recompute == Recompute::None ? l : 0]; }
  T* x(std::int64_t l) { return xs_.data() + l * c_.rows() * c_.hidden; }

  void block_forward(std::int64_t l, bool stop_before_fc2);
  void block_backward(std::int64_t l);
  double forward_transformer(const Batch& b);
  void backward_transformer(const Batch& b, double grad_scale);
  double forward_mlp(const Batch& b);
  void backward_mlp(const Batch& b, double grad_scale);

  void ready(const char* tensor) {
    if (ready_) ready_(watermark_ = layout_.at(tensor).offset);
  }
  void ready(std::int64_t l, const char* what) {
    if (ready_) ready_(watermark_ = layout_.at(names::layer(l, what)).offset);
  }
  void tick() {
    if (ready_) ready_(watermark_);
  }
  template <class F>
  void timed(double OpSeconds::*slot, F&& f) {
    if (op_seconds_ == nullptr) {
      f();
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    f();
    op_seconds_->*slot += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  ModelConfig c_;
  ParamLayout layout_;
  GradReadyHook ready_;
  OpSeconds* op_seconds_ = nullptr;
  std::int64_t watermark_ = 0;  // the last one reported
  std::vector<T> p_, g_, m_, v_;
  std::int64_t t_ = 0;
  // Activations. transformer: xs_ = the residual stream x_0..x_L; mlp: xs_ = x_0..x_L (layer
  // inputs/outputs), pre_ = each layer's pre-activation.
  std::vector<T> xs_, pre_;
  std::vector<BlockActs> blocks_;
  std::vector<MlpActs> mlps_;
  std::vector<T> lnf_out_, lnf_mean_, lnf_rstd_, logits_;
  // Backward scratch.
  std::vector<T> dx_, dtmp_, dqkv_, dh_, datt_, dscores_;
};

extern template class ReferenceModel<float>;
extern template class ReferenceModel<double>;

}  // namespace gpubench::kernels::train
