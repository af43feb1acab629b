// The build without MPI: no session. A run started under mpirun is refused in `gpubench run`
// (bench/core/launch.hpp) so the ranks do not run as independent jobs.
#include <cstdlib>

#include "bench/mpi/session.hpp"

namespace gpubench::mpi {

bool built_with_mpi() { return false; }
std::string library_version() { return ""; }
std::vector<std::string> library_settings() { return {}; }
void choose_library_settings() {}
Session* session(double) { return nullptr; }
bool active() { return false; }
std::vector<double> Session::all_gather(double, const std::string&) { return {}; }
std::vector<std::string> Session::all_gather(const std::string&, const std::string&) { return {}; }
void Session::barrier(const std::string&) {}
std::vector<std::optional<std::string>> Session::gather_to_root(const std::string&, double) { return {}; }
void Session::post_to_root(const std::string&) {}
std::vector<std::pair<int, std::string>> Session::take_posts() { return {}; }
std::string Session::broadcast(const std::string&, const std::string&) { return ""; }
void Session::abort_run(const std::string&) const { std::abort(); }

}  // namespace gpubench::mpi
