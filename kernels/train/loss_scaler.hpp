#pragma once
// Dynamic loss scaling for fp16 training (Micikevicius et al., "Mixed Precision Training",
// ICLR 2018, section 3.2), with the defaults of PyTorch's torch.amp.GradScaler: initial scale
// 2^16, x2 after 2000 consecutive steps without overflow, x0.5 and the optimizer step skipped
// when any gradient overflowed (inf or NaN). Host-only; the GPU path feeds it the result of its
// overflow-check kernel over every gradient, the CPU reference that of has_overflow().
#include <cmath>
#include <cstdint>

namespace gpubench::kernels::train {

class LossScaler {
 public:
  struct Options {
    double initial = 65536.0;  // 2^16
    double growth = 2.0;
    double backoff = 0.5;
    std::int64_t growth_interval = 2000;
  };
  LossScaler() = default;
  explicit LossScaler(const Options& o) : o_(o), scale_(o.initial) {}

  // The factor the loss (and so every gradient) is multiplied by before backward.
  double scale() const { return scale_; }
  // After backward: whether any gradient overflowed. Returns true when the optimizer step
  // should be applied (gradients divided by scale() as read before this call), false when it
  // must be skipped. Updates the scale for the next step.
  bool update(bool overflow) {
    if (overflow) {
      scale_ *= o_.backoff;
      good_steps_ = 0;
      ++skipped_;
      return false;
    }
    if (++good_steps_ == o_.growth_interval) {
      scale_ *= o_.growth;
      good_steps_ = 0;
    }
    return true;
  }
  std::int64_t skipped_steps() const { return skipped_; }
  std::int64_t good_steps() const { return good_steps_; }  // since the last change of scale

 private:
  Options o_{};
  double scale_ = Options{}.initial;
  std::int64_t good_steps_ = 0;
  std::int64_t skipped_ = 0;
};

// Whether any of the n values is inf or NaN (the reference of the GPU overflow check).
template <class T>
bool has_overflow(const T* g, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(static_cast<double>(g[i]))) return true;
  }
  return false;
}

}  // namespace gpubench::kernels::train
