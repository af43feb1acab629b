// The cuBLAS version `gpubench doctor` reports: the library this binary links (cublasGetProperty).
#include <cublas_v2.h>
#include <fmt/format.h>
#include <library_types.h>

#include "bench/doctor/probe.hpp"

namespace gpubench::doctor {

LibraryView cublas_library() {
  LibraryView lib{"cuBLAS", std::nullopt, {}, {}};
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    lib.version = fmt::format("{}.{}.{}", major, minor, patch);
  } else {
    lib.missing_reason = "cublasGetProperty failed";
  }
  return lib;
}

}  // namespace gpubench::doctor
