#pragma once
// The search `gpubench tune gemm` runs per case, and the cache key of a case.
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/gemm/tuning_cache.hpp"

namespace gpubench::suites::gemm {

inline constexpr int kMaxLtCandidates = 1024;

// Applies --lt-candidates and --tuning-cache for a run on `devices`: throws UsageError (one
// line naming the file) for a bad count or a malformed cache; returns the one warning line for
// entries made on another GPU or cuBLASLt version (empty when there are none).
std::string apply_run_settings(int lt_candidates, const std::string& cache_path, const std::vector<DeviceInfo>& devices);

// The per-shape tuning report `gpubench tune gemm` prints: default vs best time, gain, and the
// best algorithm.
std::string format_tuning_report(const std::vector<TuningEntry>& entries);

// The cache key of a case on a device (GPU name, compute capability, cuBLASLt version, dtype,
// layout, m, n, k, batch, fused epilogue or "none").
TuningKey tuning_key(const DeviceInfo& device, const GemmCaseSpec& spec);

// Times up to `candidates` heuristic algorithms for `spec` (the heuristic's first included),
// verifies the fastest against the reference, and returns the cache entry. Throws CaseSkipped
// when cuBLASLt cannot run the case here, another exception when it fails.
TuningEntry tune_cublaslt(const DeviceInfo& device, const GemmCaseSpec& spec, int candidates);

}  // namespace gpubench::suites::gemm
