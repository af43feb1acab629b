#pragma once
// The cuBLASLt tuning cache: for each GEMM problem on one GPU model with one cuBLASLt version,
// the fastest algorithm `gpubench tune gemm` found (its full configuration, so it can be
// rebuilt), its time, and the time of the heuristic's first choice. Written by `tune`, read by
// `run --tuning-cache` for the cublaslt-tuned provider. Plain C++ (no CUDA calls).
//
// File (JSON):
//   {"format": "gpubench-gemm-tuning", "version": 1,
//    "entries": [{"gpu": "NVIDIA H200", "cc": "9.0", "cublaslt": "13.1.0", "dtype": "bf16",
//                 "layout": "tn", "m": 8192, "n": 8192, "k": 8192, "batch": 1, "epilogue": "none",
//                 "algo": {"id": .., "tile": .., ...}, "time_s": .., "default_algo": {...},
//                 "default_time_s": .., "candidates": 32}]}
// An entry applies only to the same GPU name, compute capability and cuBLASLt version: a new
// library or another GPU may choose differently, so its entries are ignored (with a warning).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/blas/algo_config.hpp"

namespace gpubench::suites::gemm {

struct TuningKey {
  std::string gpu;         // CUDA device name
  std::string cc;          // "9.0"
  std::string cublaslt;    // cuBLASLt version "13.1.0"
  std::string dtype;       // fp16, bf16, ... (the gemm suite's names)
  std::string layout;      // nn nt tn tt
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string epilogue = "none";
  bool operator==(const TuningKey&) const = default;
  std::string shape_label() const;  // "bf16 tn 8192x8192x8192 batch 1 epilogue none"
};

struct TuningEntry {
  TuningKey key;
  blas::AlgoConfig algo;
  double time_s = 0;
  blas::AlgoConfig default_algo;
  double default_time_s = 0;
  int candidates = 0;  // algorithms timed
  double gain_pct() const;  // (default_time / time - 1) * 100
};

// A malformed or unreadable cache file; what() is one line naming the file.
class TuningCacheError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TuningCache {
 public:
  TuningCache() = default;
  // Throws TuningCacheError naming `path` (unreadable, not JSON, wrong format or version, an
  // entry with a missing or mistyped field).
  static TuningCache load(const std::string& path);
  static TuningCache parse(const std::string& text, const std::string& path_for_errors);
  // Writes atomically (temporary file, then rename); TuningCacheError on failure.
  void save(const std::string& path) const;
  std::string dump() const;

  // The entry for exactly this key (GPU, cc and version included), or null.
  const TuningEntry* find(const TuningKey& key) const;
  // Adds or replaces the entry with the same key.
  void put(TuningEntry entry);
  // Entries for no (gpu, cc) in `devices` with this cuBLASLt version: the ones a run ignores.
  std::size_t count_foreign(const std::vector<std::pair<std::string, std::string>>& devices,
                            const std::string& cublaslt) const;
  const std::vector<TuningEntry>& entries() const { return entries_; }

 private:
  std::vector<TuningEntry> entries_;
};

}  // namespace gpubench::suites::gemm
