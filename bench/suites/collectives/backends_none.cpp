// Builds without MPI or without NCCL: the missing backend reports itself absent, and the
// suite skips its cases with the reason (collectives_suite.cpp). Compiled only for what is
// missing (bench/CMakeLists.txt).
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

#ifndef GPUBENCH_HAVE_MPI
bool have_mpi_backend() { return false; }
std::unique_ptr<Transport> make_mpi_transport(double) { return nullptr; }
#endif

#ifndef GPUBENCH_HAVE_NCCL
bool have_nccl_backend() { return false; }
std::string nccl_version() { return ""; }
int nccl_version_code() { return 0; }
std::optional<std::string> nccl_dtype_unsupported(Dtype, int) { return std::nullopt; }
std::unique_ptr<Transport> make_nccl_transport(int, int, double) { return nullptr; }
#endif

}  // namespace gpubench::suites::collectives
