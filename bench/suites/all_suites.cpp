#include "bench/suites/all_suites.hpp"

#include <cstdlib>
#include <cstring>

#include "bench/suites/attention/attention.hpp"
#include "bench/suites/collectives/collectives.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "bench/suites/infer/infer.hpp"
#include "bench/suites/memory/memory.hpp"
#include "bench/suites/selftest/selftest.hpp"
#include "bench/suites/storage/storage.hpp"
#include "bench/suites/train/train.hpp"
#include "bench/suites/video/video.hpp"

namespace gpubench::suites {

const std::vector<const Suite*>& all() {
  static const std::vector<std::unique_ptr<Suite>> owned = [] {
    std::vector<std::unique_ptr<Suite>> v;
    v.push_back(gemm::make_suite());
    v.push_back(memory::make_suite());
    v.push_back(dataload::make_suite());
    v.push_back(storage::make_suite());
    v.push_back(train::make_suite());
    v.push_back(attention::make_suite());
    v.push_back(infer::make_suite());
    v.push_back(collectives::make_suite());
    v.push_back(video::make_suite());
    const char* selftest_env = std::getenv("GPUBENCH_ENABLE_SELFTEST");
    if (selftest_env && std::strcmp(selftest_env, "1") == 0) v.push_back(selftest::make_suite());
    return v;
  }();
  static const std::vector<const Suite*> view = [] {
    std::vector<const Suite*> v;
    for (const auto& s : owned) v.push_back(s.get());
    return v;
  }();
  return view;
}

}  // namespace gpubench::suites
