#include "profilers/cupti_trace/cupti_records.hpp"

#include <fmt/format.h>

namespace gpubench::profilers {
namespace {

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

}  // namespace

std::string_view RecordConverter::intern(const char* s) {
  if (!s) return {};
  return *names_.emplace(s).first;
}

void RecordConverter::add(const CUpti_Activity* record, ActivityBatch& into) {
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
      into.kernels.push_back(r);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const MemcpyActivity*>(record);
      into.copies.push_back({memcpy_kind(m->copyKind), m->start, m->end, m->bytes, m->deviceId, m->streamId,
                                 m->correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const MemsetActivity*>(record);
      into.copies.push_back({"memset", m->start, m->end, m->bytes, m->deviceId, m->streamId, m->correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      into.api.push_back({api_name(a->cbid), a->start, a->end, a->threadId, a->correlationId});
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
        into.ranges.push_back(r);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const OverheadActivity*>(record);
      const std::uint32_t thread = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : 0;
      into.overheads.push_back({overhead_kind(o->overheadKind), o->start, o->end, thread});
#if CUPTI_API_VERSION >= 130000
      // Details of some kinds (CUpti_ActivityOverheadCommandBufferFullData); gpubench reads none.
      if (o->overheadData != nullptr) release_(o->overheadData);
#endif
      break;
    }
#if CUPTI_API_VERSION >= 130000
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      // Not enabled by gpubench; should one come (another subscriber's settings), its name is ours to free.
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      if (d->name != nullptr) release_(const_cast<char*>(d->name));
      break;
    }
#endif
    default:
      break;
  }
}

std::string_view RecordConverter::api_name(CUpti_CallbackId cbid) {
  const auto it = api_names_.find(cbid);
  if (it != api_names_.end()) return it->second;
  std::string name = api_name_fn_ ? api_name_fn_(cbid) : std::string();
  if (name.empty()) name = fmt::format("runtime api {}", cbid);
  const std::string_view v = intern(name.c_str());
  api_names_[cbid] = v;
  return v;
}

}  // namespace gpubench::profilers
