#include "profilers/cupti_trace/cupti_source.hpp"

#include <cstdlib>
#include <mutex>
#include <string>

#include "profilers/cupti/cupti_api.hpp"
#include "profilers/cupti/reasons.hpp"
#include "profilers/cupti_trace/cupti_records.hpp"

namespace gpubench::profilers {
namespace {

constexpr std::size_t kBufferBytes = 8 << 20;

class CuptiSource final : public ActivitySource {
 public:
  static CuptiSource& instance() {
    static CuptiSource s;
    return s;
  }

  void start(bool cuda_works, const std::string& no_cuda_reason) {
    std::call_once(started_, [&] {
      if (!cuda_works) {
        reason_ = "off: no CUDA device" + (no_cuda_reason.empty() ? "" : " (" + no_cuda_reason + ")");
        return;
      }
      std::string why;
      api_ = cupti::load(why);
      if (!api_) {
        reason_ = "off: " + why;
        return;
      }
      // NVTX calls reach CUPTI only through this injection, read at the first NVTX call.
      if (!api_->path.empty()) ::setenv("NVTX_INJECTION64_PATH", api_->path.c_str(), 0);
      if (CUptiResult r = api_->cuptiActivityRegisterCallbacks(&requested, &completed); r != CUPTI_SUCCESS) {
        reason_ = cupti::off_reason(r, cupti::error_name(r));
        api_ = nullptr;
        return;
      }
      // The kernel kind decides: without it there is nothing to report. The others add detail.
      if (CUptiResult r = api_->cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS) {
        reason_ = cupti::off_reason(r, cupti::error_name(r));
        api_ = nullptr;
        return;
      }
      for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_OVERHEAD}) {
        (void)api_->cuptiActivityEnable(kind);
      }
      std::atexit([] { instance().finish(); });
    });
  }

  std::optional<std::string> unavailable() const override {
    if (api_) return std::nullopt;
    return reason_;
  }

  std::uint64_t now_ns() override {
    std::uint64_t t = 0;
    if (api_) api_->cuptiGetTimestamp(&t);
    return t;
  }

  ActivityBatch take() override {
    if (!api_) return {};
    api_->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> lock(mutex_);
    ActivityBatch out = std::move(pending_);
    pending_ = {};
    return out;
  }

 private:
  void finish() {
    if (!api_) return;
    api_->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    // CUDA 13.0 was reported to crash at exit when CUPTI is not finalized.
    api_->cuptiFinalize();
    api_ = nullptr;
    reason_ = "off: finished";
  }

  static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
  }

  static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
    instance().parse(ctx, stream, buffer, valid);
    std::free(buffer);
  }

  void parse(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid) {
    if (!api_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    CUpti_Activity* record = nullptr;
    while (api_->cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) converter_.add(record, pending_);
    size_t dropped = 0;
    if (api_->cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) pending_.dropped += dropped;
  }

  std::once_flag started_;
  const cupti::Api* api_ = nullptr;
  std::string reason_ = "off: not started";
  std::mutex mutex_;
  ActivityBatch pending_;
  RecordConverter converter_{[this](CUpti_CallbackId cbid) {
    const char* name = nullptr;
    const bool ok = api_ && api_->cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS;
    return ok && name ? std::string(name) : std::string();
  }};
};

// A shared_ptr that does not own the process-wide source.
struct NoDelete {
  void operator()(ActivitySource*) const {}
};

}  // namespace

std::shared_ptr<ActivitySource> start_cupti_activity(bool cuda_works, const std::string& no_cuda_reason) {
  CuptiSource& s = CuptiSource::instance();
  s.start(cuda_works, no_cuda_reason);
  return std::shared_ptr<ActivitySource>(&s, NoDelete{});
}

}  // namespace gpubench::profilers
