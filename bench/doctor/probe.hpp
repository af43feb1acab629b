#pragma once
// Fills a SystemView from the real machine: the CUDA runtime and driver (cudart), NVML (through
// the dlopen binding), the driver's profiling permission, library versions (cuBLAS linked;
// NCCL and cuDNN through dlopen, so neither is a dependency), CPU governors, the process's CPU
// affinity, RLIMIT_MEMLOCK and the results folder's free space. Never throws for a missing
// driver, library or file: the field stays empty.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "bench/doctor/system_view.hpp"

namespace gpubench::doctor {

SystemView probe_system(const std::string& results_dir);

// The pieces, exposed for tests.
// "RmProfilingAdminOnly: 1" in the text of /proc/driver/nvidia/params -> true.
std::optional<bool> parse_profiling_admin_only(const std::string& params_text);
// The CapEff mask in the text of /proc/self/status.
std::optional<std::uint64_t> parse_effective_capabilities(const std::string& status_text);
// CAP_SYS_ADMIN, or CAP_PERFMON on drivers from r565 (NVIDIA's ERR_NVGPUCTRPERM page);
// euid 0 when the capability mask is unknown.
bool profiling_privileged(std::optional<std::uint64_t> cap_eff, bool euid_root, int driver_major);
// cuBLAS's version through cublasGetProperty (cublas_probe.cpp; in a build without CUDA,
// cublas_probe_none.cpp says kNotBuiltWithCuda).
LibraryView cublas_library();

// ncclGetVersion's code: 21903 -> "2.19.3" (2.9 and later), 2708 -> "2.7.8" (before).
std::string decode_nccl_version(int code);
// cudnnGetVersion's value: 90100 -> "9.1.0" (9.0 and later), 8902 -> "8.9.2" (before).
std::string decode_cudnn_version(std::size_t code);
// governor -> CPU count, from <cpu_root>/cpu<N>/cpufreq/scaling_governor.
std::map<std::string, int> read_cpu_governors(const std::filesystem::path& cpu_root);
// statvfs and write access at the results folder or, when it does not exist yet, its nearest
// existing parent (run creates the folder).
DiskView probe_disk(const std::string& results_dir);

// What says that a process runs in a container; probe_system reads each from the machine.
struct ContainerSigns {
  bool run_containerenv = false;  // /run/.containerenv: podman and buildah create it in every container
  bool dockerenv = false;         // /.dockerenv: Docker creates it
  std::string container_env;      // $container: podman sets "podman", systemd-nspawn its name
  bool kubernetes_env = false;    // $KUBERNETES_SERVICE_HOST: the kubelet sets it in every pod's containers
  bool apptainer_env = false;     // $APPTAINER_CONTAINER or $SINGULARITY_CONTAINER
  std::string init_cgroup;        // /proc/1/cgroup: cgroup v1 paths name docker, kubepods, libpod, containerd
};
// The container's kind and the sign that said so ({"", ""}: none seen). Kubernetes first: a
// pod's container also carries its runtime's signs.
std::pair<std::string, std::string> classify_container(const ContainerSigns& s);
// The driver's user-space libraries doctor looks for, in display order.
inline constexpr const char* kDriverLibraries[] = {"libcuda.so.1", "libnvidia-ml.so.1",
                                                   "libnvidia-ptxjitcompiler.so.1"};

}  // namespace gpubench::doctor
