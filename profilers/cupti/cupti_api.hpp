#pragma once
// libcupti, loaded at run time (dlopen), so gpubench starts and runs where CUPTI is missing
// (a GPU host with only the driver: the bundle carries no CUDA libraries by default) and only
// the CUPTI instruments switch off. Entry points are typed from the toolkit's own headers.
//
// Callers must have checked that a CUDA device works before calling anything here: without a
// device some CUPTI calls crash the process (cuptiDeviceGetChipName segfaults; see
// shared/reference/profiling-apis.md).
#include <string>

#include <cupti.h>

#if __has_include(<cupti_range_profiler.h>) && __has_include(<cupti_profiler_host.h>)
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#define GPUBENCH_HAVE_RANGE_PROFILER 1
#else
#define GPUBENCH_HAVE_RANGE_PROFILER 0  // CUDA < 12.6: metrics are off ("built without ...")
#endif

namespace gpubench::profilers::cupti {

#define GPUBENCH_CUPTI_FN(name) decltype(&::name) name = nullptr;
struct Api {
  std::string path;  // the library that was loaded
  GPUBENCH_CUPTI_FN(cuptiGetResultString)
  GPUBENCH_CUPTI_FN(cuptiGetTimestamp)
  GPUBENCH_CUPTI_FN(cuptiGetCallbackName)
  GPUBENCH_CUPTI_FN(cuptiActivityEnable)
  GPUBENCH_CUPTI_FN(cuptiActivityDisable)
  GPUBENCH_CUPTI_FN(cuptiActivityRegisterCallbacks)
  GPUBENCH_CUPTI_FN(cuptiActivityFlushAll)
  GPUBENCH_CUPTI_FN(cuptiActivityGetNextRecord)
  GPUBENCH_CUPTI_FN(cuptiActivityGetNumDroppedRecords)
  GPUBENCH_CUPTI_FN(cuptiFinalize)
#if GPUBENCH_HAVE_RANGE_PROFILER
  GPUBENCH_CUPTI_FN(cuptiProfilerInitialize)
  GPUBENCH_CUPTI_FN(cuptiProfilerDeInitialize)
  GPUBENCH_CUPTI_FN(cuptiProfilerDeviceSupported)
  GPUBENCH_CUPTI_FN(cuptiProfilerGetCounterAvailability)
  GPUBENCH_CUPTI_FN(cuptiDeviceGetChipName)
  GPUBENCH_CUPTI_FN(cuptiProfilerHostInitialize)
  GPUBENCH_CUPTI_FN(cuptiProfilerHostDeinitialize)
  GPUBENCH_CUPTI_FN(cuptiProfilerHostConfigAddMetrics)
  GPUBENCH_CUPTI_FN(cuptiProfilerHostGetConfigImageSize)
  GPUBENCH_CUPTI_FN(cuptiProfilerHostGetConfigImage)
  GPUBENCH_CUPTI_FN(cuptiProfilerHostGetNumOfPasses)
  GPUBENCH_CUPTI_FN(cuptiProfilerHostEvaluateToGpuValues)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerEnable)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerDisable)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerGetCounterDataSize)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerCounterDataImageInitialize)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerSetConfig)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerStart)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerStop)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerPushRange)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerPopRange)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerDecodeData)
  GPUBENCH_CUPTI_FN(cuptiRangeProfilerGetCounterDataInfo)
  bool range_profiler = false;  // every range-profiler entry point resolved
#endif
};
#undef GPUBENCH_CUPTI_FN

// The loaded library (once per process), or nullptr with `reason` set.
const Api* load(std::string& reason);

// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"
std::string error_name(CUptiResult r);

}  // namespace gpubench::profilers::cupti
