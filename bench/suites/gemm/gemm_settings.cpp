// The gemm suite's run settings from `gpubench run` / `tune` options: the number of cuBLASLt
// candidates and the tuning cache.
#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"
#include "kernels/blas/cublaslt.hpp"

namespace gpubench::suites::gemm {

std::string apply_run_settings(int lt_candidates, const std::string& cache_path, const std::vector<DeviceInfo>& devices) {
  if (lt_candidates < 1 || lt_candidates > kMaxLtCandidates) {
    throw UsageError(fmt::format("--lt-candidates {}: expected 1 to {}", lt_candidates, kMaxLtCandidates));
  }
  GemmRunSettings s;
  s.lt_candidates = lt_candidates;
  std::string warning;
  if (!cache_path.empty()) {
    TuningCache cache;
    try {
      cache = TuningCache::load(cache_path);
    } catch (const TuningCacheError& e) {
      throw UsageError(e.what());
    }
    std::vector<std::pair<std::string, std::string>> gpus;
    for (const DeviceInfo& d : devices) {
      if (d.is_cuda()) gpus.emplace_back(d.name, fmt::format("{}.{}", d.cc_major, d.cc_minor));
    }
    if (const std::size_t foreign = cache.count_foreign(gpus, blas::lt_version()); foreign > 0) {
      warning = fmt::format("warning: tuning cache {}: {} of {} entries are for another GPU or cuBLASLt version (this is {}); "
                            "ignored",
                            cache_path, foreign, cache.entries().size(), blas::lt_version());
    }
    s.cache = std::make_shared<const TuningCache>(std::move(cache));
  }
  configure(std::move(s));
  return warning;
}

}  // namespace gpubench::suites::gemm
