#pragma once
// CUPTI's activity records -> gpubench's (activity.hpp). Only CUPTI's record types are used
// here, no CUPTI call, so tests feed it records they build themselves.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <cupti.h>

#include "profilers/cupti_trace/activity.hpp"

namespace gpubench::profilers {

// The newest record structs of the headers built against; CUPTI delivers the struct version of
// its own major release, which is the one gpubench loads (cupti_api.cpp). Tests build these.
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

// Memory a record points to that CUPTI hands over to the client, who frees it with free()
// (cupti_activity.h, CUDA 13.0): CUpti_ActivityOverhead3::overheadData and
// CUpti_ActivityDevice5::name. No other record of these headers owns memory for the client.
constexpr bool kRecordsOwnClientMemory = CUPTI_API_VERSION >= 130000;

class RecordConverter {
 public:
  // The name of a CUDA runtime API call from its callback id (cuptiGetCallbackName).
  using ApiName = std::function<std::string(CUpti_CallbackId)>;
  // Frees memory a record hands over to the client: std::free, or a test's recorder.
  using Release = std::function<void(void*)>;
  explicit RecordConverter(ApiName api_name, Release release = [](void* p) { std::free(p); })
      : api_name_fn_(std::move(api_name)), release_(std::move(release)) {}
  // Appends what `record` says to `into`; kinds gpubench does not use are ignored. A marker's
  // start is held until its end arrives (possibly in a later buffer). Every record goes through
  // here once: memory it hands to the client is released here, whatever its kind.
  void add(const CUpti_Activity* record, ActivityBatch& into);

 private:
  std::string_view intern(const char* s);
  std::string_view api_name(CUpti_CallbackId cbid);

  ApiName api_name_fn_;
  Release release_;
  std::unordered_set<std::string> names_;  // records keep string_views into it: never shrinks
  std::unordered_map<std::uint64_t, RangeRecord> open_markers_;
  std::unordered_map<CUpti_CallbackId, std::string_view> api_names_;
};

}  // namespace gpubench::profilers
