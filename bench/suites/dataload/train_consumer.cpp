// The pipeline's train consumer on the host: the train suite's mlp (kernels/train, the CPU
// reference model) trained one step per batch on the batch's pooled images. The GPU one is in
// gpu.cpp (GpuModel); both check their last step the same way (check_training_step).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bench/suites/dataload/pipeline.hpp"
#include "kernels/train/model_reference.hpp"

namespace gpubench::suites::dataload {
namespace {

namespace kd = kernels::dataload;
namespace kt = kernels::train;


class HostTrainConsumer final : public Consumer {
 public:
  HostTrainConsumer(int grid, int batch, kd::OutType type)
      : grid_(grid), type_(type), model_(train_consumer_model(grid, batch), kTrainConsumerSeed),
        micro_{kt::make_batch(model_.config(), kTrainConsumerSeed)} {}

  void consume(const HostBatch& batch) override {
    checksum_ = kd::batch_checksum(batch.data, static_cast<std::int64_t>(batch.bytes / 4));
    features_.resize(static_cast<std::size_t>(batch.samples) * static_cast<std::size_t>(kd::pooled_features(grid_)));
    kd::pool_features_host(batch.data, type_, batch.samples, grid_, features_.data());
    std::copy(features_.begin(), features_.end(), micro_[0].inputs.begin());
    loss_ = model_.train_step(micro_, kt::AdamW{});
  }
  unsigned long long last_checksum() override { return checksum_; }
  std::string check_training(const void* tensors, int samples) override {
    return check_training_step(features_, loss_, tensors, type_, samples, grid_);
  }
  std::string describe() const override {
    return describe_train_consumer(grid_, static_cast<int>(model_.config().batch), "on the host (fp32, OpenBLAS)");
  }

 private:
  int grid_;
  kd::OutType type_;
  kt::ReferenceModel<float> model_;
  std::vector<kt::Batch> micro_;
  std::vector<float> features_;
  double loss_ = 0;
  unsigned long long checksum_ = 0;
};

}  // namespace

kt::ModelConfig train_consumer_model(int grid, int batch) {
  kt::ModelConfig c;
  c.kind = kt::ModelKind::Mlp;
  c.layers = 4;
  c.hidden = kd::pooled_features(grid);
  c.batch = batch;
  c.vocab = 1000;  // ImageNet's classes
  c.accum = 1;
  return c;
}

std::unique_ptr<Consumer> make_host_train_consumer(int grid, int batch, kd::OutType type) {
  return std::make_unique<HostTrainConsumer>(grid, batch, type);
}

std::string check_training_step(const std::vector<float>& features, double loss, const void* tensors, kd::OutType type,
                                int samples, int grid) {
  std::vector<float> want(static_cast<std::size_t>(samples) * static_cast<std::size_t>(kd::pooled_features(grid)));
  if (features.size() < want.size()) {
    return fmt::format("the consumer trained on {} features, the batch has {}", features.size(), want.size());
  }
  kd::pool_features_host(tensors, type, samples, grid, want.data());
  // Block means of values below 3 in magnitude: float accumulation on the device is off by
  // far less than 1e-4.
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(features[i] - want[i]) <= 1e-4)) {
      return fmt::format("input feature {} of the train step: {}, pooled on the host {}", i, features[i], want[i]);
    }
  }
  // Cross-entropy over 1000 classes starts near ln(1000) = 6.9; anything non-finite is broken.
  if (!std::isfinite(loss) || loss <= 0) return fmt::format("the train step's loss is {}", loss);
  return {};
}

std::string describe_train_consumer(int grid, int batch, const std::string& where) {
  const int width = kd::pooled_features(grid);
  return fmt::format(
      "one training step per batch of the train suite's mlp classifier (4 layers of {}, 1000 classes, batch {}) {}, "
      "its inputs the batch's images mean-pooled to 3x{}x{}",
      width, batch, where, grid, grid);
}

}  // namespace gpubench::suites::dataload
