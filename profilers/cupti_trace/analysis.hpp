#pragma once
// From activity records to what a case's result says about the GPU (kernel breakdown, busy
// time, gaps, copies, CUPTI's overhead) and to Chrome/Perfetto trace events. Plain C++ over
// the structs of activity.hpp, tested with recorded synthetic records.
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "profilers/cupti_trace/activity.hpp"

namespace gpubench::profilers {

// C++ names demangled (abi::__cxa_demangle); anything else (C names, "void foo<...>" already
// readable) unchanged.
std::string demangle(std::string_view mangled);

// A stretch of time, ns: the case's measure phase.
struct Window {
  std::uint64_t start = 0, end = 0;
  std::uint64_t length() const { return end > start ? end - start : 0; }
  bool contains_start(std::uint64_t t) const { return t >= start && t < end; }
};

struct KernelSummary {
  std::string name;  // demangled
  std::int64_t count = 0;
  std::uint64_t total_ns = 0;
  std::int32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};  // of the first launch
  std::uint32_t registers_per_thread = 0;
  std::uint64_t shared_bytes = 0;  // static + dynamic, of the first launch
  int launch_configs = 1;          // distinct grid/block/shared-memory combinations seen
};

struct CopySummary {
  std::int64_t count = 0;
  std::uint64_t bytes = 0, total_ns = 0;
};

// GPU busy below this share of the wall time: the host (launches, synchronization) sets the
// pace, not the GPU. A heuristic threshold, stated in docs/results-format.md.
constexpr double kLaunchBoundBusyFraction = 0.5;

// The devices (CUPTI's deviceId: the CUDA ordinal) whose records belong to a case; empty: every
// device. A single-process collective spans several.
using DeviceSet = std::set<std::uint32_t>;

struct CaseActivity {
  std::uint64_t wall_ns = 0;    // the window's length
  std::uint64_t kernel_ns = 0;  // sum of kernel durations (overlapping kernels count twice)
  std::uint64_t kernel_busy_ns = 0;  // union of kernel intervals within the window (each instant once)
  std::uint64_t busy_ns = 0;    // union of kernel, copy and memset intervals within the window
  DeviceSet devices;            // the filter the records went through (empty: every device)
  std::int64_t launches = 0;
  std::vector<KernelSummary> kernels;  // by total time, largest first
  std::map<std::string, CopySummary> copies;  // by kind
  // Idle stretches between busy intervals (not counting before the first or after the last).
  std::int64_t gaps = 0;
  std::uint64_t gap_total_ns = 0, gap_max_ns = 0;
  std::uint64_t overhead_ns = 0;  // CUPTI's own overhead records within the window
  std::uint64_t dropped = 0;
  bool launch_bound() const {
    return launches > 0 && static_cast<double>(busy_ns) < kLaunchBoundBusyFraction * static_cast<double>(wall_ns);
  }
};

// Records whose start lies in the window and whose device is in `devices` count; busy time is
// clipped to the window.
CaseActivity analyze(const ActivityBatch& batch, Window window, const DeviceSet& devices = {});

// The `cupti` timer: the time during which at least one kernel on `devices` ran, over the kernels
// that started in the window (the length of the union of their intervals). Not their sum: a
// collective on N GPUs of one process runs N kernels at once, and kernels on concurrent streams
// overlap; a sum would count those instants N times. The harness's cold-mode L2 flush is a
// kernel (kernels/common/l2_flush.cu) launched just before a cold sample's timer starts, so it
// often starts on the GPU inside the window: it is never counted (is_cold_flush_kernel).
bool is_cold_flush_kernel(std::string_view mangled_name);
std::uint64_t kernel_time_ns(const std::vector<KernelRecord>& kernels, Window window, const DeviceSet& devices = {});
// What `--timer cupti` measures: the same union over the case's kernels and its memcpy and
// memset records (a training step zeroes its gradients with cudaMemsetAsync; a pipeline copies):
// work the case issued inside the timed batch is its time, whatever engine ran it.
std::uint64_t gpu_time_ns(const ActivityBatch& batch, Window window, const DeviceSet& devices = {});

// The devices of the kernels that started in the window.
DeviceSet kernel_devices(const std::vector<KernelRecord>& kernels, Window window);

// gpubench.profile.trace fields; at most `max_kernels` kernels listed (the rest summed as
// `other_kernels`).
nlohmann::ordered_json to_json(const CaseActivity& activity, std::size_t max_kernels = 20);

// Chrome trace-event format ("JSON Array Format", read by Perfetto and chrome://tracing):
// complete events ("ph": "X", "ts"/"dur" in microseconds) on one process per GPU
// (pid = kGpuPidBase + device, named "GPU N") with one track per stream (tid = stream id), and
// the host process (its real pid) with one track per thread for NVTX ranges, gpubench's case and
// phase ranges and CUDA API calls; flow events ("s"/"f") tie each launch to its kernel. Names
// of processes and threads are metadata events ("ph": "M"), emitted once per track.
constexpr int kGpuPidBase = 1 << 30;

class TraceBuilder {
 public:
  TraceBuilder(int host_pid, std::uint64_t origin_ns) : host_pid_(host_pid), origin_(origin_ns) {}
  // Events for one case's records; `own` are gpubench's case/phase ranges (NVTX records of
  // the "gpubench" domain in `batch` are left out: they would repeat them). At most
  // `max_events` (besides the track names), in this order of priority: gpubench's ranges, NVTX
  // ranges, kernels and copies with their launch flows, CUDA API calls, CUPTI overhead; the
  // number left out is added to `*dropped`. A long run's trace stays loadable, and memory
  // bounded, however many launches a case makes.
  std::vector<nlohmann::ordered_json> events(const ActivityBatch& batch, const std::vector<RangeRecord>& own,
                                             const std::string& case_name, std::size_t max_events = SIZE_MAX,
                                             std::size_t* dropped = nullptr);

 private:
  double us(std::uint64_t t) const;
  void track(std::vector<nlohmann::ordered_json>& out, int pid, std::uint32_t tid, const std::string& process,
             const std::string& thread);
  int host_pid_;
  std::uint64_t origin_;
  std::set<int> named_processes_;
  std::set<std::pair<int, std::uint32_t>> named_threads_;
  std::map<std::string_view, std::string> demangled_;  // kernels repeat: demangle each name once
};

// A trace file in the JSON Array Format, written as it grows: "[" first, then each event on its
// own line, "]" on close. A run cut short leaves a file without the closing bracket, which the
// format allows and Perfetto reads.
class TraceFile {
 public:
  explicit TraceFile(const std::string& path);  // throws std::runtime_error when it cannot open
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  void append(const std::vector<nlohmann::ordered_json>& events);
  void close();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  bool first_ = true;
};

}  // namespace gpubench::profilers
