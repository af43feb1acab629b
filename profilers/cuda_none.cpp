// The CUDA instruments of a build without CUDA (GPUBENCH_WITH_CUDA=OFF): NVTX, the CUPTI trace
// and CUPTI metrics are still made when asked (so `--profile nvtx,trace,metrics` is accepted as
// everywhere) and each says "off: not built with CUDA" in its status. Stands in for
// nvtx/nvtx.cpp, cupti/cupti_api.cpp, cupti_trace/cupti_source.cpp, cupti_trace/cupti_records.cpp
// and cupti_metrics/metrics.cpp.
#include <string>

#include "gpubench/version.hpp"
#include "profilers/cupti_metrics/metrics.hpp"
#include "profilers/cupti_trace/cupti_source.hpp"
#include "profilers/nvtx/nvtx.hpp"

namespace gpubench::profilers {
namespace {

const std::string kOff = std::string("off: ") + kNotBuiltWithCuda;

class OffInstrument final : public Instrument {
 public:
  explicit OffInstrument(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string status() const override { return kOff; }

 private:
  std::string name_;
};

class NoActivity final : public ActivitySource {
 public:
  std::optional<std::string> unavailable() const override { return std::string(kNotBuiltWithCuda); }
  std::uint64_t now_ns() override { return 0; }
  ActivityBatch take() override { return {}; }
};

}  // namespace

std::unique_ptr<Instrument> make_nvtx_instrument() { return std::make_unique<OffInstrument>("nvtx"); }

std::shared_ptr<ActivitySource> start_cupti_activity(bool, const std::string&) { return std::make_shared<NoActivity>(); }

std::unique_ptr<Instrument> make_metrics_instrument(const std::vector<std::string>&, bool, const std::string&) {
  return std::make_unique<OffInstrument>("metrics");
}

}  // namespace gpubench::profilers
