// decode=gpu in a build without nvJPEG's header or without CUDA: planned (a dry run shows the
// cases), skipped with the reason. Stands in for nvjpeg.cpp.
#include "bench/core/errors.hpp"
#include "bench/suites/dataload/dataload.hpp"
#include "gpubench/version.hpp"

namespace gpubench::suites::dataload {

std::optional<std::string> nvjpeg_unavailable() {
#ifdef GPUBENCH_NVJPEG_NO_CUDA
  return std::string("decode=gpu: ") + kNotBuiltWithCuda;
#else
  return std::string("decode=gpu: this build found no nvjpeg.h (scripts/lib.sh ensure_nvjpeg_headers fetches it from PyPI's "
                     "nvidia-nvjpeg wheel; rebuild)");
#endif
}

std::unique_ptr<Case> make_nvjpeg_case(const DeviceInfo&, const Config&) { throw CaseSkipped(*nvjpeg_unavailable()); }

}  // namespace gpubench::suites::dataload
