#include "profilers/cupti/cupti_api.hpp"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

#include <fmt/format.h>

namespace gpubench::profilers::cupti {
namespace {

// The soname of the toolkit gpubench was built with ("libcupti.so.13" for CUDA 13.x: cuda.h's
// CUDA_VERSION is 13000): CUPTI's records and structs match its own major version. Found
// through the binary's RPATH (a bundle's lib/), LD_LIBRARY_PATH and the loader's cache; then
// the build's toolkit folder, where the loader does not know it.
const std::string kSoname = "libcupti.so." + std::to_string(CUDA_VERSION / 1000);
const std::vector<std::string> kCandidates = {kSoname
#ifdef GPUBENCH_CUPTI_TOOLKIT_DIR
                                              , std::string(GPUBENCH_CUPTI_TOOLKIT_DIR) + "/" + kSoname
#endif
};

template <typename F>
bool resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

struct Loaded {
  Api api;
  bool ok = false;
  std::string reason;
};

Loaded load_once() {
  Loaded l;
  void* lib = nullptr;
  for (const std::string& name : kCandidates) {
    if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  }
  if (!lib) {
    l.reason = fmt::format("{} not found (CUPTI ships with the CUDA Toolkit; put its lib folder on LD_LIBRARY_PATH)",
                           kSoname);
    return l;
  }
  link_map* map = nullptr;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) l.api.path = map->l_name;
  Api& a = l.api;
#define R(name) resolve(lib, #name, a.name)
  if (!(R(cuptiGetResultString) && R(cuptiGetTimestamp) && R(cuptiGetCallbackName) && R(cuptiActivityEnable) &&
        R(cuptiActivityDisable) && R(cuptiActivityRegisterCallbacks) && R(cuptiActivityFlushAll) &&
        R(cuptiActivityGetNextRecord) && R(cuptiActivityGetNumDroppedRecords) && R(cuptiFinalize))) {
    l.reason = fmt::format("{} lacks an Activity API entry point", l.api.path);
    return l;
  }
#if GPUBENCH_HAVE_RANGE_PROFILER
  a.range_profiler = R(cuptiProfilerInitialize) && R(cuptiProfilerDeInitialize) && R(cuptiProfilerDeviceSupported) &&
                     R(cuptiProfilerGetCounterAvailability) && R(cuptiDeviceGetChipName) &&
                     R(cuptiProfilerHostInitialize) && R(cuptiProfilerHostDeinitialize) &&
                     R(cuptiProfilerHostConfigAddMetrics) && R(cuptiProfilerHostGetConfigImageSize) &&
                     R(cuptiProfilerHostGetConfigImage) && R(cuptiProfilerHostGetNumOfPasses) &&
                     R(cuptiProfilerHostEvaluateToGpuValues) && R(cuptiRangeProfilerEnable) &&
                     R(cuptiRangeProfilerDisable) && R(cuptiRangeProfilerGetCounterDataSize) &&
                     R(cuptiRangeProfilerCounterDataImageInitialize) && R(cuptiRangeProfilerSetConfig) &&
                     R(cuptiRangeProfilerStart) && R(cuptiRangeProfilerStop) && R(cuptiRangeProfilerPushRange) &&
                     R(cuptiRangeProfilerPopRange) && R(cuptiRangeProfilerDecodeData) &&
                     R(cuptiRangeProfilerGetCounterDataInfo);
#endif
#undef R
  l.ok = true;
  return l;
}

}  // namespace

const Api* load(std::string& reason) {
  static const Loaded loaded = load_once();
  reason = loaded.reason;
  return loaded.ok ? &loaded.api : nullptr;
}

std::string error_name(CUptiResult r) {
  std::string reason;
  const Api* a = load(reason);
  const char* text = nullptr;
  if (a && a->cuptiGetResultString(r, &text) == CUPTI_SUCCESS && text) return fmt::format("{} ({})", text, static_cast<int>(r));
  return fmt::format("CUPTI error {}", static_cast<int>(r));
}

}  // namespace gpubench::profilers::cupti
