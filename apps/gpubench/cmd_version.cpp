#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "apps/gpubench/commands.hpp"
#include "bench/core/cuda_portable.hpp"
#include "bench/core/device.hpp"
#include "bench/core/errors.hpp"
#include "bench/doctor/checks.hpp"
#include "bench/suites/all_suites.hpp"
#include "gpubench/version.hpp"

namespace gpubench::app {

int cmd_version(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] != "--help" && args[0] != "-h") {
    throw UsageError(fmt::format("version: unexpected argument '{}'", args[0]));
  }
  if (!args.empty()) {
    fmt::print("Usage: gpubench version\n\nPrints the gpubench version, git revision, build and library versions.\n");
    return 0;
  }
  const DeviceInventory inv = discover_devices();
  fmt::print("gpubench {} (git {}, {} build)\n", kVersion, git_revision(), kBuildType);
  if (!kBuiltWithCuda) {
    fmt::print("CUDA: {} (GPUBENCH_WITH_CUDA=OFF): CPU suites, report, compare, history, scaling and serving only\n",
               kNotBuiltWithCuda);
  } else {
    fmt::print("CUDA architectures: {}\n", kCudaArchitectures);
    fmt::print("CUDA runtime {}, driver {}\n", format_cuda_version(inv.runtime_version),
               inv.driver_version > 0 ? format_cuda_version(inv.driver_version) : "none");
    // The runtime is linked statically, so the build's toolkit decides which drivers run it: any
    // of its major version's minor version compatibility range (docs/cuda12.md).
    const int built = cuda_build_runtime_version();
    const std::string minimum = doctor::minimum_driver_for(built);
    fmt::print("minimum NVIDIA driver: {} (built with CUDA {})\n", minimum.empty() ? "unknown" : minimum,
               format_cuda_version(built));
  }
  // Several suites measure the same library (gemm and train both use OpenBLAS and cuBLASLt):
  // each is listed once, in the order first met.
  std::vector<std::string> listed;
  for (const Suite* s : suites::all()) {
    const nlohmann::ordered_json libraries = s->libraries();
    for (const auto& [lib, ver] : libraries.items()) {
      if (std::find(listed.begin(), listed.end(), lib) != listed.end()) continue;
      listed.push_back(lib);
      fmt::print("{}: {}\n", lib, ver.get<std::string>());
    }
  }
  return 0;
}

}  // namespace gpubench::app
