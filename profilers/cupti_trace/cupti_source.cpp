#include "profilers/cupti_trace/cupti_source.hpp"

#include <cstdlib>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "profilers/cupti/cupti_api.hpp"
#include "profilers/cupti/reasons.hpp"

namespace gpubench::profilers {
namespace {

// The newest record structs of the headers built against; CUPTI delivers the struct version of
// its own major release, which is the one gpubench loads (cupti_api.cpp).
#if CUPTI_API_VERSION >= 130000
using KernelActivity = CUpti_ActivityKernel10;
using MemcpyActivity = CUpti_ActivityMemcpy6;
using OverheadActivity = CUpti_ActivityOverhead3;
#else
using KernelActivity = CUpti_ActivityKernel9;
using MemcpyActivity = CUpti_ActivityMemcpy5;
using OverheadActivity = CUpti_ActivityOverhead;
#endif
using MemsetActivity = CUpti_ActivityMemset4;

constexpr std::size_t kBufferBytes = 8 << 20;

std::string_view memcpy_kind(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

std::string_view overhead_kind(int kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "resource";
    default: return "overhead";
  }
}

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

  // Names live as long as the process: records keep string_views into this set.
  std::string_view intern(const char* s) {
    if (!s) return {};
    return *names_.emplace(s).first;
  }

  void parse(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid) {
    if (!api_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    CUpti_Activity* record = nullptr;
    while (api_->cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) add(record);
    size_t dropped = 0;
    if (api_->cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) pending_.dropped += dropped;
  }

  void add(const CUpti_Activity* record) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const KernelActivity*>(record);
        KernelRecord r;
        r.name = intern(k->name);
        r.start = k->start, r.end = k->end;
        r.device = k->deviceId, r.stream = k->streamId, r.correlation = k->correlationId;
        r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
        r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
        r.registers_per_thread = k->registersPerThread;
        r.static_shared_bytes = k->staticSharedMemory;
        r.dynamic_shared_bytes = k->dynamicSharedMemory;
        pending_.kernels.push_back(r);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const MemcpyActivity*>(record);
        pending_.copies.push_back({memcpy_kind(m->copyKind), m->start, m->end, m->bytes, m->deviceId, m->streamId,
                                   m->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const MemsetActivity*>(record);
        pending_.copies.push_back({"memset", m->start, m->end, m->bytes, m->deviceId, m->streamId, m->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME: {
        const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        pending_.api.push_back({api_name(a->cbid), a->start, a->end, a->threadId, a->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MARKER: {
        // Start and end of one range come as two records with the same id.
        const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
        if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
          open_markers_[m->id] = {intern(m->name), intern(m->domain), m->timestamp, 0, m->objectId.pt.threadId};
        } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
          const auto it = open_markers_.find(m->id);
          if (it == open_markers_.end()) break;
          RangeRecord r = it->second;
          r.end = m->timestamp;
          open_markers_.erase(it);
          pending_.ranges.push_back(r);
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const auto* o = reinterpret_cast<const OverheadActivity*>(record);
        const std::uint32_t thread = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : 0;
        pending_.overheads.push_back({overhead_kind(o->overheadKind), o->start, o->end, thread});
        break;
      }
      default:
        break;
    }
  }

  std::string_view api_name(CUpti_CallbackId cbid) {
    const auto it = api_names_.find(cbid);
    if (it != api_names_.end()) return it->second;
    const char* name = nullptr;
    std::string_view v = api_->cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name
                             ? intern(name)
                             : intern(fmt::format("runtime api {}", cbid).c_str());
    api_names_[cbid] = v;
    return v;
  }

  std::once_flag started_;
  const cupti::Api* api_ = nullptr;
  std::string reason_ = "off: not started";
  std::mutex mutex_;
  ActivityBatch pending_;
  std::unordered_set<std::string> names_;
  std::unordered_map<std::uint64_t, RangeRecord> open_markers_;
  std::unordered_map<CUpti_CallbackId, std::string_view> api_names_;
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
