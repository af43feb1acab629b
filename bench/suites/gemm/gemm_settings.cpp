// The gemm suite's run settings from `gpubench run` / `tune` options: the number of cuBLASLt
// candidates and the tuning cache, and the cache key of a case.
#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "bench/suites/gemm/gemm_tune.hpp"

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
    if (const std::size_t foreign = cache.count_foreign(gpus, cublaslt_version()); foreign > 0) {
      warning = fmt::format("warning: tuning cache {}: {} of {} entries are for another GPU or cuBLASLt version (this is {}); "
                            "ignored",
                            cache_path, foreign, cache.entries().size(), cublaslt_version());
    }
    s.cache = std::make_shared<const TuningCache>(std::move(cache));
  }
  configure(std::move(s));
  return warning;
}

TuningKey tuning_key(const DeviceInfo& device, const GemmCaseSpec& spec) {
  const GemmProblem& p = spec.problem;
  TuningKey k;
  k.gpu = device.name;
  k.cc = fmt::format("{}.{}", device.cc_major, device.cc_minor);
  k.cublaslt = cublaslt_version();
  k.dtype = precision_name(p.precision);
  k.layout = layout_name(p);
  k.m = p.m;
  k.n = p.n;
  k.k = p.k;
  k.batch = p.batch;
  // The algorithm sees the epilogue only when it is fused.
  k.epilogue = spec.fusion == Fusion::Fused ? epilogue_name(p.epilogue) : "none";
  return k;
}

}  // namespace gpubench::suites::gemm
