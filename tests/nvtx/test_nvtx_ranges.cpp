// The NVTX instrument under a recording NVTX injection (tests/fakes/nvtx_recorder.cpp, named by
// NVTX_INJECTION64_PATH, which ctest sets): the ranges a run through the real harness leaves in
// the "gpubench" domain nest run > suite > case > phase, with a suite's own phases inside.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "../unit/fake_suite.hpp"
#include "../unit/test_util.hpp"
#include "bench/core/harness.hpp"
#include "profilers/nvtx/nvtx.hpp"

namespace gpubench {
namespace {

std::vector<std::string> recorded() {
  void* lib = dlopen(std::getenv("NVTX_INJECTION64_PATH"), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return {};
  auto fn = reinterpret_cast<const char* (*)()>(dlsym(lib, "gpubench_nvtx_record"));
  std::vector<std::string> lines;
  std::istringstream in(fn ? fn() : "");
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(NvtxRanges, NestRunSuiteCasePhase) {
  ASSERT_NE(std::getenv("NVTX_INJECTION64_PATH"), nullptr) << "run through ctest, which sets NVTX_INJECTION64_PATH";
  testing::FakeSuite suite;
  PlanRequest r;
  r.axis_overrides = {"size=16", "mode=phased"};
  const auto plan = make_plan({&suite}, r, {testing::fake_cpu()});
  const auto file = std::filesystem::temp_directory_path() / ("gpubench-nvtx-" + std::to_string(::getpid()) + ".json");
  {
    auto nvtx = profilers::make_nvtx_instrument();
    HarnessOptions h = testing::fast_harness_options();
    h.instruments = {nvtx.get()};
    ResultsFile results(file, {{"host_name", "test"}});
    run_plan(plan, h, results);
  }
  std::filesystem::remove(file);
  const std::vector<std::string> lines = recorded();
  ASSERT_GE(lines.size(), 12u) << "the injection saw no ranges";
  const std::vector<std::string> head = {"push gpubench: gpubench run", "push gpubench: suite fake",
                                         "push gpubench: fake/size=16/twin=16/mode=phased/cpu", "push gpubench: setup",
                                         "pop gpubench", "push gpubench: verify", "push gpubench: inner", "pop gpubench",
                                         "pop gpubench"};
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.begin() + static_cast<long>(head.size())), head);
  // Every push is popped, in order: the depth never goes below zero and ends at zero.
  int depth = 0, max_depth = 0;
  for (const std::string& l : lines) {
    depth += l.rfind("push", 0) == 0 ? 1 : -1;
    ASSERT_GE(depth, 0);
    max_depth = std::max(max_depth, depth);
  }
  EXPECT_EQ(depth, 0);
  EXPECT_EQ(max_depth, 5);  // run > suite > case > measure > inner
  EXPECT_NE(std::find(lines.begin(), lines.end(), "push gpubench: measure"), lines.end());
}

}  // namespace
}  // namespace gpubench
