// A build without CUDA links no cuBLAS (probe_system does not ask; this keeps the link whole).
#include "bench/doctor/probe.hpp"
#include "gpubench/version.hpp"

namespace gpubench::doctor {

LibraryView cublas_library() { return {"cuBLAS", std::nullopt, kNotBuiltWithCuda}; }

}  // namespace gpubench::doctor
