#pragma once
// CUPTI's activity records -> gpubench's (activity.hpp). Only CUPTI's record types are used
// here, no CUPTI call, so tests feed it records they build themselves.
#include <cstdint>
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

class RecordConverter {
 public:
  // The name of a CUDA runtime API call from its callback id (cuptiGetCallbackName).
  using ApiName = std::function<std::string(CUpti_CallbackId)>;
  explicit RecordConverter(ApiName api_name) : api_name_fn_(std::move(api_name)) {}
  // Appends what `record` says to `into`; kinds gpubench does not use are ignored. A marker's
  // start is held until its end arrives (possibly in a later buffer).
  void add(const CUpti_Activity* record, ActivityBatch& into);

 private:
  std::string_view intern(const char* s);
  std::string_view api_name(CUpti_CallbackId cbid);

  ApiName api_name_fn_;
  std::unordered_set<std::string> names_;  // records keep string_views into it: never shrinks
  std::unordered_map<std::uint64_t, RangeRecord> open_markers_;
  std::unordered_map<CUpti_CallbackId, std::string_view> api_names_;
};

}  // namespace gpubench::profilers
