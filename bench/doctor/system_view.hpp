#pragma once
// What `gpubench doctor` knows about the machine: a plain struct that probe_system() fills
// from the real machine and tests fill by hand. Every optional field is empty when the
// machine did not answer; checks then say "unknown" instead of guessing.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/core/nvml.hpp"

namespace gpubench::doctor {

// One GPU, as CUDA and/or NVML see it (matched by PCI bus id).
struct GpuView {
  std::optional<int> cuda_ordinal;  // empty when only NVML sees it (e.g. the driver is too old for CUDA)
  std::string name;
  std::string pci_bus_id;                   // "0000:17:00.0"
  std::optional<nvml::DeviceStatus> nvml;   // empty when NVML is unavailable or does not know it
  std::optional<int> numa_node;             // from sysfs; -1 where the platform has no NUMA affinity

  std::string label() const;  // "cuda:0", or "nvml:1" for a GPU CUDA cannot use
};

struct LibraryView {
  std::string name;                    // "cuBLAS", "NCCL", "cuDNN"
  std::optional<std::string> version;  // "12.9.1"; empty when not found
  std::string missing_reason;          // why not, when empty
  // What this build of gpubench compiled against, where that varies by build ("the attention
  // suite's cudnn provider was built with cudnn.h 9.19.0 from PyPI nvidia-cudnn-cu12==9.19.0.56");
  // empty when nothing to say.
  std::string built_with;
};

struct DiskView {
  std::string results_dir;              // as given
  std::string checked_dir;              // the directory statvfs looked at (nearest existing one)
  std::optional<std::uint64_t> free_bytes;
  std::optional<std::uint64_t> total_bytes;
  bool writable = false;
  std::string error;                    // when nothing could be checked
};

// One of the NVIDIA driver's user-space libraries. On a host they come with the driver package;
// in a container the NVIDIA Container Toolkit (or the device plugin, pyxis/enroot, Apptainer's
// --nv) bind-mounts them in at start, and a container started without GPUs has none.
struct DriverLibrary {
  std::string soname;  // "libcuda.so.1"
  std::string path;    // where the dynamic loader found it; empty when not found
};

// Whether this process runs in a container, and what the container was given of the driver.
struct ContainerView {
  std::string kind;      // "podman", "docker", "kubernetes", "apptainer", "enroot", "container"; empty: none seen
  std::string evidence;  // what said so: "/run/.containerenv", "KUBERNETES_SERVICE_HOST", ...
  std::vector<DriverLibrary> driver_libraries;  // libcuda, libnvidia-ml, libnvidia-ptxjitcompiler
  std::vector<std::string> device_nodes;        // /dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm, ... present
};

struct SystemView {
  // CUDA
  bool built_with_cuda = true;          // false: a build without CUDA (GPUBENCH_WITH_CUDA=OFF)
  int runtime_version = 0;              // 13000
  int driver_version = 0;               // CUDA version the driver supports; 0 without a driver
  std::string driver_version_string;    // NVML's "580.65.06", when NVML answered
  int cuda_device_count = 0;
  std::string cuda_unavailable_reason;  // empty when CUDA found at least one device
  // NVML
  bool nvml_available = false;
  std::string nvml_unavailable_reason;
  std::vector<GpuView> gpus;
  // GPU performance counters (CUPTI profiling): the driver's RmProfilingAdminOnly setting and
  // whether this process counts as an administrator for it.
  std::optional<bool> profiling_admin_only;
  bool profiling_privileged = false;    // root or CAP_SYS_ADMIN (or CAP_PERFMON on r565+ drivers)
  std::vector<LibraryView> libraries;  // empty in a build without CUDA (none is used)
  // Host
  std::map<std::string, int> cpu_governors;            // governor -> number of CPUs; empty when not exposed
  std::optional<std::vector<unsigned>> process_cpus;   // CPUs this process may run on
  std::optional<std::uint64_t> memlock_bytes;          // RLIMIT_MEMLOCK soft limit; empty = unknown
  bool memlock_unlimited = false;
  DiskView disk;
  ContainerView container;
  unsigned self_pid = 0;                               // excluded from "other processes"
};

}  // namespace gpubench::doctor
