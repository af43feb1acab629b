#pragma once
// Activity records as gpubench keeps them: plain structs filled by the CUPTI source
// (cupti_source.cpp) from CUPTI's records, or by tests from recorded synthetic ones. Everything
// that turns them into breakdowns, gaps and trace events (analysis.hpp) sees only these.
// Times are nanoseconds in one timebase (CUPTI's: cuptiGetTimestamp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpubench::profilers {

struct KernelRecord {
  std::string_view name;  // mangled, as the compiler emitted it; stable for the source's life
  std::uint64_t start = 0, end = 0;
  std::uint32_t device = 0, stream = 0, correlation = 0;
  std::int32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  std::uint32_t registers_per_thread = 0;
  std::uint64_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
};

// A memcpy or a memset.
struct CopyRecord {
  std::string_view kind;  // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", ..., or "memset"
  std::uint64_t start = 0, end = 0;
  std::uint64_t bytes = 0;
  std::uint32_t device = 0, stream = 0, correlation = 0;
};

// An NVTX range (push/pop or start/end), paired from CUPTI's marker start and end records.
struct RangeRecord {
  std::string_view name, domain;
  std::uint64_t start = 0, end = 0;
  std::uint32_t thread = 0;
};

// A CUDA runtime API call, for correlation with the work it launched.
struct ApiRecord {
  std::string_view name;  // "cudaLaunchKernel"
  std::uint64_t start = 0, end = 0;
  std::uint32_t thread = 0, correlation = 0;
};

// Time CUPTI spent on its own work (buffer flushes, instrumentation) while tracing.
struct OverheadRecord {
  std::string_view kind;
  std::uint64_t start = 0, end = 0;
  std::uint32_t thread = 0;
};

struct ActivityBatch {
  std::vector<KernelRecord> kernels;
  std::vector<CopyRecord> copies;
  std::vector<RangeRecord> ranges;
  std::vector<ApiRecord> api;
  std::vector<OverheadRecord> overheads;
  std::uint64_t dropped = 0;  // records CUPTI could not deliver (buffers full)

  void append(ActivityBatch&& other);
  bool empty() const { return kernels.empty() && copies.empty() && ranges.empty() && api.empty() && overheads.empty(); }
};

// Where records come from. The CUPTI source implements it over the Activity API; tests feed
// recorded synthetic records through the same interface.
class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  // Empty when recording works; else why not ("no CUDA device", "CUPTI_ERROR_...").
  virtual std::optional<std::string> unavailable() const = 0;
  // Now, in the records' timebase.
  virtual std::uint64_t now_ns() = 0;
  // Everything recorded since the last take(), after flushing what is buffered. Callers wait
  // for their GPU work first (the records of unfinished work are not complete).
  virtual ActivityBatch take() = 0;
};

}  // namespace gpubench::profilers
