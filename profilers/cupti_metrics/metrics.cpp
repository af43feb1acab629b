#include "profilers/cupti_metrics/metrics.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "profilers/cupti/cupti_api.hpp"
#include "profilers/cupti/reasons.hpp"

// CUPTI's documented idiom, `T p{T_STRUCT_SIZE};`, zero-fills every other member on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gpubench::profilers {
namespace {

// Without a device the reason is the same whatever the toolkit: a run's metrics status must not
// depend on how the binary was built when there is nothing to profile.
std::string no_device_status(const std::string& no_cuda_reason) {
  return "off: no CUDA device" + (no_cuda_reason.empty() ? "" : " (" + no_cuda_reason + ")");
}

#if GPUBENCH_HAVE_RANGE_PROFILER

// A failed CUPTI call, as the "off: ..." reason the case records.
struct Failure {
  std::string reason;
};

void check(CUptiResult r, const char* call) {
  if (r != CUPTI_SUCCESS) throw Failure{cupti::off_reason(r, fmt::format("{} in {}", cupti::error_name(r), call))};
}

// The current context, through the runtime's driver entry points (gpubench never links libcuda).
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 4000, cudaEnableDefault, &found) != cudaSuccess || !fn) {
#else
  if (cudaGetDriverEntryPoint("cuCtxGetCurrent", &fn, cudaEnableDefault, &found) != cudaSuccess || !fn) {
#endif
    throw Failure{"off: cuCtxGetCurrent not found in the driver"};
  }
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCurrent>(fn)(&ctx) != CUDA_SUCCESS || !ctx) throw Failure{"off: no current CUDA context"};
  return ctx;
}

const char* support_reason(const CUpti_Profiler_DeviceSupported_Params& p) {
  if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "off: this GPU architecture has no range profiler support";
  if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) return "off: vGPU with profiling disabled by the hypervisor";
  if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "off: not supported on this vGPU";
  if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "off: not supported with confidential computing on";
  if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "off: not supported on a crypto-mining processor";
  if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "off: not supported under WSL";
  if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "off: not supported with SLI";
  return "off: the device does not support range profiling";
}

// The host object evaluating metrics of one chip (RAII).
struct Host {
  Host(const cupti::Api& api, const std::string& chip, const std::vector<std::uint8_t>& availability) : api_(api) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.data();
    check(api.cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
    object = p.pHostObject;
  }
  ~Host() {
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = object;
    api_.cuptiProfilerHostDeinitialize(&p);
  }
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;
  const cupti::Api& api_;
  CUpti_Profiler_Host_Object* object = nullptr;
};

// What one device needs for every case: its chip's config image for the metrics it has.
struct DeviceSetup {
  std::string off;  // non-empty: the reason metrics cannot be collected on this device
  std::vector<std::string> metrics, unavailable;
  std::vector<std::uint8_t> config;
  std::size_t passes = 0;
  std::vector<std::uint8_t> availability;
  std::string chip;
  std::unique_ptr<Host> host;  // kept to evaluate the counter data of every case
};

class MetricsInstrument final : public Instrument {
 public:
  MetricsInstrument(std::vector<std::string> metrics, bool cuda_works, const std::string& no_cuda_reason)
      : requested_(metrics.empty() ? default_metrics() : std::move(metrics)) {
    if (!cuda_works) {
      status_ = no_device_status(no_cuda_reason);
      return;
    }
    std::string why;
    api_ = cupti::load(why);
    if (!api_) status_ = "off: " + why;
    else if (!api_->range_profiler) status_ = "off: " + api_->path + " lacks the range profiler API";
    else status_ = "on";
  }
  ~MetricsInstrument() override {
    if (initialized_) {
      CUpti_Profiler_DeInitialize_Params p{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
      api_->cuptiProfilerDeInitialize(&p);
    }
  }
  std::string name() const override { return "metrics"; }
  std::string status() const override { return status_; }

  void begin_case(const CaseInfo& info) override {
    device_ = status_ == "on" && info.device && info.device->is_cuda() ? info.device : nullptr;
    result_ = nlohmann::ordered_json::object();
  }
  bool wants_replay() const override { return device_ != nullptr; }

  void replay(const Replay& r) override {
    try {
      r.synchronize();
      const CUcontext ctx = current_context();
      DeviceSetup& d = setup(device_->ordinal);
      if (!d.off.empty()) throw Failure{d.off};
      result_ = collect(ctx, d, r);
      if (!d.unavailable.empty()) result_["unavailable"] = d.unavailable;
    } catch (const Failure& f) {
      result_ = {{"status", f.reason}};
    } catch (const std::exception& e) {  // the case's own run failed under the profiler
      result_ = {{"status", std::string("off: the replay failed: ") + e.what()}};
    }
  }

  void end_case(const CaseOutcome&, nlohmann::ordered_json& profile) override {
    if (device_) profile = std::move(result_);
    device_ = nullptr;
  }

 private:
  DeviceSetup& setup(int ordinal) {
    const auto it = devices_.find(ordinal);
    if (it != devices_.end()) return it->second;
    DeviceSetup& d = devices_[ordinal];
    try {
      if (!initialized_) {
        CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        check(api_->cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
        initialized_ = true;
      }
      CUpti_Profiler_DeviceSupported_Params sup{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
      sup.cuDevice = ordinal;
      sup.api = CUPTI_PROFILER_RANGE_PROFILING;
      check(api_->cuptiProfilerDeviceSupported(&sup), "cuptiProfilerDeviceSupported");
      if (sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) throw Failure{support_reason(sup)};

      CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
      chip.deviceIndex = static_cast<size_t>(ordinal);
      check(api_->cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
      d.chip = chip.pChipName;

      CUpti_Profiler_GetCounterAvailability_Params avail{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
      check(api_->cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
      d.availability.resize(avail.counterAvailabilityImageSize);
      avail.pCounterAvailabilityImage = d.availability.data();
      check(api_->cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

      d.host = std::make_unique<Host>(*api_, d.chip, d.availability);
      Host& host = *d.host;
      // One metric at a time, so a name this chip lacks is reported and the others still collected.
      for (const std::string& m : requested_) {
        const char* names[] = {m.c_str()};
        CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
        add.pHostObject = host.object;
        add.ppMetricNames = names;
        add.numMetrics = 1;
        if (api_->cuptiProfilerHostConfigAddMetrics(&add) == CUPTI_SUCCESS) d.metrics.push_back(m);
        else d.unavailable.push_back(m);
      }
      if (d.metrics.empty()) throw Failure{fmt::format("off: none of the metrics is available on {}", d.chip)};
      CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
      size.pHostObject = host.object;
      check(api_->cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
      d.config.resize(size.configImageSize);
      CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
      image.pHostObject = host.object;
      image.configImageSize = d.config.size();
      image.pConfigImage = d.config.data();
      check(api_->cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
      CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
      passes.configImageSize = d.config.size();
      passes.pConfigImage = d.config.data();
      check(api_->cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
      d.passes = passes.numOfPasses;
    } catch (const Failure& f) {
      d.off = f.reason;
    }
    return d;
  }

  // The range profiler on the case's context (RAII: disabled on every path out).
  struct Target {
    Target(const cupti::Api& api, CUcontext ctx) : api_(api) {
      CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
      p.ctx = ctx;
      check(api.cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
      object = p.pRangeProfilerObject;
    }
    ~Target() {
      CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      p.pRangeProfilerObject = object;
      api_.cuptiRangeProfilerDisable(&p);
    }
    Target(const Target&) = delete;
    Target& operator=(const Target&) = delete;
    const cupti::Api& api_;
    CUpti_RangeProfiler_Object* object = nullptr;
  };

  nlohmann::ordered_json collect(CUcontext ctx, const DeviceSetup& d, const Replay& r) {
    std::vector<const char*> names;
    for (const std::string& m : d.metrics) names.push_back(m.c_str());
    Target target(*api_, ctx);

    CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = target.object;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    check(api_->cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<std::uint8_t> counter_data(size.counterDataSize);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = target.object;
    init.counterDataSize = counter_data.size();
    init.pCounterData = counter_data.data();
    check(api_->cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");

    CUpti_RangeProfiler_SetConfig_Params config{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    config.pRangeProfilerObject = target.object;
    config.configSize = d.config.size();
    config.pConfig = d.config.data();
    config.counterDataImageSize = counter_data.size();
    config.pCounterDataImage = counter_data.data();
    config.range = CUPTI_UserRange;
    config.replayMode = CUPTI_UserReplay;
    config.maxRangesPerPass = 1;
    config.numNestingLevels = 1;
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    check(api_->cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");

    // User replay: one run of the case per pass, inside one user range.
    std::size_t passes = 0;
    for (bool done = false; !done; ++passes) {
      if (passes > d.passes + 2) throw Failure{"off: the range profiler asked for more passes than it announced"};
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = target.object;
      check(api_->cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
      CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
      push.pRangeProfilerObject = target.object;
      push.pRangeName = "run";
      check(api_->cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
      r.run();
      CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
      pop.pRangeProfilerObject = target.object;
      check(api_->cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
      r.synchronize();
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = target.object;
      check(api_->cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
      done = stop.isAllPassSubmitted != 0;
    }
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = target.object;
    check(api_->cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");

    CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    check(api_->cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    if (info.numTotalRanges < 1) throw Failure{"off: the range profiler recorded no range"};

    const Host& host = *d.host;
    std::vector<double> values(names.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    eval.pHostObject = host.object;
    eval.pCounterDataImage = counter_data.data();
    eval.counterDataImageSize = counter_data.size();
    eval.rangeIndex = 0;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    check(api_->cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");

    std::map<std::string, double> by_name;
    nlohmann::ordered_json raw = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < names.size(); ++i) {
      by_name[d.metrics[i]] = values[i];
      raw[d.metrics[i]] = values[i];
    }
    nlohmann::ordered_json j = summarize_metrics(by_name);
    j["values"] = std::move(raw);
    j["passes"] = passes;
    j["chip"] = d.chip;
    j["range"] = "one run of the case, replayed once per pass after timing";
    j["dropped_ranges"] = decode.numOfRangeDropped;
    return j;
  }

  std::vector<std::string> requested_;
  std::string status_;
  const cupti::Api* api_ = nullptr;
  bool initialized_ = false;
  const DeviceInfo* device_ = nullptr;
  std::map<int, DeviceSetup> devices_;
  nlohmann::ordered_json result_;
};

#else  // headers without the range profiler (CUDA < 12.6)

class MetricsInstrument final : public Instrument {
 public:
  MetricsInstrument(std::vector<std::string>, bool cuda_works, const std::string& no_cuda_reason)
      : status_(cuda_works ? "off: built without the CUPTI range profiler (CUDA 12.6 or newer)"
                           : no_device_status(no_cuda_reason)) {}
  std::string name() const override { return "metrics"; }
  std::string status() const override { return status_; }

 private:
  std::string status_;
};

#endif

}  // namespace

std::unique_ptr<Instrument> make_metrics_instrument(const std::vector<std::string>& metrics, bool cuda_works,
                                                    const std::string& no_cuda_reason) {
  return std::make_unique<MetricsInstrument>(metrics, cuda_works, no_cuda_reason);
}

}  // namespace gpubench::profilers
