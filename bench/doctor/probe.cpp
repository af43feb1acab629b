#include "bench/doctor/probe.hpp"

#include <dlfcn.h>
#include <link.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>

#include "bench/core/device.hpp"
#include "bench/core/nvml.hpp"
#include "bench/core/path_text.hpp"
#include "gpubench/version.hpp"

namespace gpubench::doctor {
namespace fs = std::filesystem;
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<int> read_int(const fs::path& p) {
  std::ifstream in(p);
  int v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

// Loads `soname`, calls its version function and decodes the answer. The library stays
// loaded: unloading NCCL or cuDNN while their static initialisers ran is not worth the risk.
template <typename Fn, typename Decode>
LibraryView dlopen_library(const char* name, const char* soname, const char* symbol, Decode decode) {
  LibraryView lib{name, std::nullopt, {}, {}};
  void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    lib.missing_reason = fmt::format("{} not loadable", soname);
    return lib;
  }
  auto fn = reinterpret_cast<Fn>(dlsym(h, symbol));
  if (!fn) {
    lib.missing_reason = fmt::format("{} has no {}", soname, symbol);
    return lib;
  }
  lib.version = decode(fn);
  if (lib.version->empty()) {
    lib.version.reset();
    lib.missing_reason = fmt::format("{} failed", symbol);
  }
  return lib;
}

LibraryView nccl_library() {
  // ncclResult_t ncclGetVersion(int* version); ncclSuccess is 0.
  using Fn = int (*)(int*);
  return dlopen_library<Fn>("NCCL", "libnccl.so.2", "ncclGetVersion", [](Fn fn) {
    int v = 0;
    return fn(&v) == 0 ? decode_nccl_version(v) : std::string();
  });
}

// Whether the attention suite's cuDNN provider is built, and with which cudnn.h (bench/CMakeLists.txt
// defines GPUBENCH_CUDNN_HEADERS when it is): a library found at run time is of no use to a build
// without it, and headers of a newer cuDNN than the one loaded explain a failing graph.
std::string cudnn_built_with() {
#ifdef GPUBENCH_CUDNN_HEADERS
  return std::string("the attention suite's cudnn provider was built with ") + GPUBENCH_CUDNN_HEADERS;
#else
  return "this build has no cuDNN provider (no cuDNN frontend headers or cudnn.h when it was configured)";
#endif
}

LibraryView cudnn_library_found() {
  // size_t cudnnGetVersion(void);
  using Fn = std::size_t (*)();
  // cuDNN 9's libcudnn.so.9 forwards cudnnGetVersion to libcudnn_graph.so.9 and aborts the
  // process when it cannot load it (an incomplete install): that one must load first.
  if (dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL) != nullptr &&
      dlopen("libcudnn_graph.so.9", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    LibraryView lib;
    lib.name = "cuDNN";
    lib.missing_reason = "libcudnn.so.9 is there but not its libcudnn_graph.so.9 (an incomplete cuDNN install)";
    return lib;
  }
  LibraryView lib = dlopen_library<Fn>("cuDNN", "libcudnn.so.9", "cudnnGetVersion",
                                       [](Fn fn) { return decode_cudnn_version(fn()); });
  if (lib.version) return lib;
  LibraryView v8 = dlopen_library<Fn>("cuDNN", "libcudnn.so.8", "cudnnGetVersion",
                                      [](Fn fn) { return decode_cudnn_version(fn()); });
  if (v8.version) return v8;
  lib.missing_reason = "libcudnn.so.9 and libcudnn.so.8 not loadable";
  return lib;
}

LibraryView cudnn_library() {
  LibraryView lib = cudnn_library_found();
  lib.built_with = cudnn_built_with();
  return lib;
}

std::optional<std::vector<unsigned>> process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return std::nullopt;
  std::vector<unsigned> cpus;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

int driver_major(const std::string& driver_version_string) {
  try {
    return driver_version_string.empty() ? 0 : std::stoi(driver_version_string);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::optional<bool> parse_profiling_admin_only(const std::string& text) {
  static const std::regex re(R"((^|\n)RmProfilingAdminOnly:\s*(\d+))");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[2].str() != "0";
}

std::optional<std::uint64_t> parse_effective_capabilities(const std::string& text) {
  static const std::regex re(R"((^|\n)CapEff:\s*([0-9a-fA-F]+))");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return std::stoull(m[2].str(), nullptr, 16);
}

bool profiling_privileged(std::optional<std::uint64_t> cap_eff, bool euid_root, int driver_major) {
  constexpr std::uint64_t kCapSysAdmin = 1ULL << 21, kCapPerfmon = 1ULL << 38;
  if (!cap_eff) return euid_root;
  return (*cap_eff & kCapSysAdmin) != 0 || (driver_major >= 565 && (*cap_eff & kCapPerfmon) != 0);
}

std::string decode_nccl_version(int code) {
  if (code <= 0) return {};
  // NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z from 2.9 on, X*1000+Y*100+Z before.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

std::string decode_cudnn_version(std::size_t code) {
  if (code == 0) return {};
  // CUDNN_VERSION is MAJOR*10000+MINOR*100+PATCH from 9.0 on, MAJOR*1000+MINOR*100+PATCH before.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

std::map<std::string, int> read_cpu_governors(const fs::path& cpu_root) {
  std::map<std::string, int> counts;
  std::error_code ec;
  static const std::regex cpu_dir(R"(cpu\d+)");
  for (fs::directory_iterator it(cpu_root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!std::regex_match(it->path().filename().string(), cpu_dir)) continue;
    std::ifstream in(it->path() / "cpufreq" / "scaling_governor");
    std::string gov;
    if (in >> gov) ++counts[gov];
  }
  return counts;
}

DiskView probe_disk(const std::string& results_dir) {
  DiskView d;
  d.results_dir = results_dir;
  std::error_code ec;
  fs::path p = fs::absolute(results_dir.empty() ? fs::path(".") : fs::path(results_dir), ec);
  if (ec) {
    d.error = ec.message();
    return d;
  }
  const fs::path start = p;
  while (!fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  if (fs::exists(p, ec) && !fs::is_directory(p, ec)) {
    d.checked_dir = p.string();
    d.error = fmt::format("{} {}, not a folder", p.string(), describe_path(p.string()));
    return d;
  }
  d.checked_dir = p == start ? results_dir : p.string();
  struct statvfs st {};
  if (::statvfs(p.c_str(), &st) != 0) {
    d.error = fmt::format("statvfs: {}", std::strerror(errno));
    return d;
  }
  d.free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  d.total_bytes = static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
  d.writable = ::access(p.c_str(), W_OK | X_OK) == 0;
  return d;
}

std::pair<std::string, std::string> classify_container(const ContainerSigns& s) {
  if (s.kubernetes_env) return {"kubernetes", "KUBERNETES_SERVICE_HOST is set"};
  if (s.apptainer_env) return {"apptainer", "APPTAINER_CONTAINER is set"};
  if (s.run_containerenv) return {"podman", "/run/.containerenv"};
  if (s.dockerenv) return {"docker", "/.dockerenv"};
  if (!s.container_env.empty()) return {s.container_env, "container=" + s.container_env};
  for (const char* name : {"kubepods", "docker", "libpod", "containerd"}) {
    if (s.init_cgroup.find(name) != std::string::npos) {
      const std::string kind = std::string(name) == "kubepods" ? "kubernetes"
                               : std::string(name) == "libpod" ? "podman"
                                                               : name;
      return {kind, fmt::format("/proc/1/cgroup names {}", name)};
    }
  }
  return {};
}

namespace {

ContainerView probe_container() {
  ContainerSigns signs;
  std::error_code ec;
  signs.run_containerenv = fs::exists("/run/.containerenv", ec);
  signs.dockerenv = fs::exists("/.dockerenv", ec);
  if (const char* c = std::getenv("container")) signs.container_env = c;
  signs.kubernetes_env = std::getenv("KUBERNETES_SERVICE_HOST") != nullptr;
  signs.apptainer_env = std::getenv("APPTAINER_CONTAINER") != nullptr || std::getenv("SINGULARITY_CONTAINER") != nullptr;
  signs.init_cgroup = slurp("/proc/1/cgroup");
  ContainerView c;
  std::tie(c.kind, c.evidence) = classify_container(signs);
  // Where the dynamic loader finds each library (as cudart and NVML would): loaded, asked for its
  // path, then released (cudart and NVML keep their own references to the ones they use).
  for (const char* soname : kDriverLibraries) {
    DriverLibrary lib{soname, {}};
    if (void* h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL)) {
      struct link_map* map = nullptr;
      if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) lib.path = map->l_name;
      if (lib.path.empty()) lib.path = soname;  // found, path unknown
      dlclose(h);
    }
    c.driver_libraries.push_back(std::move(lib));
  }
  for (const auto& e : fs::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("nvidia", 0) == 0 && !e.is_directory(ec)) c.device_nodes.push_back(e.path().string());
  }
  std::sort(c.device_nodes.begin(), c.device_nodes.end());
  return c;
}

}  // namespace

SystemView probe_system(const std::string& results_dir) {
  SystemView v;
  v.self_pid = static_cast<unsigned>(::getpid());
  const DeviceInventory inv = discover_devices();
  v.runtime_version = inv.runtime_version;
  v.driver_version = inv.driver_version;
  v.cuda_device_count = static_cast<int>(inv.cuda.size());
  v.cuda_unavailable_reason = inv.cuda_unavailable_reason;

  // NVML is asked only where a driver is loaded; dlopen of libnvidia-ml fails cleanly anyway.
  v.nvml_available = nvml::available();
  v.nvml_unavailable_reason = nvml::unavailable_reason();
  if (v.nvml_available) {
    if (auto s = nvml::driver_version()) v.driver_version_string = *s;
  }
  std::vector<nvml::DeviceStatus> nvml_devices;
  if (auto n = nvml::device_count()) {
    for (unsigned i = 0; i < *n; ++i) {
      if (auto s = nvml::device_status(i)) nvml_devices.push_back(std::move(*s));
    }
  }
  std::vector<bool> matched(nvml_devices.size(), false);
  for (const DeviceInfo& d : inv.cuda) {
    GpuView g;
    g.cuda_ordinal = d.ordinal;
    g.name = d.name;
    g.pci_bus_id = nvml::normalize_pci_bus_id(d.pci_bus_id);
    for (std::size_t i = 0; i < nvml_devices.size(); ++i) {
      if (!matched[i] && !g.pci_bus_id.empty() && nvml_devices[i].pci_bus_id == g.pci_bus_id) {
        matched[i] = true;
        g.nvml = nvml_devices[i];
        break;
      }
    }
    v.gpus.push_back(std::move(g));
  }
  for (std::size_t i = 0; i < nvml_devices.size(); ++i) {
    if (matched[i]) continue;
    GpuView g;
    g.name = nvml_devices[i].name;
    g.pci_bus_id = nvml_devices[i].pci_bus_id;
    g.nvml = nvml_devices[i];
    v.gpus.push_back(std::move(g));
  }
  for (GpuView& g : v.gpus) {
    if (!g.pci_bus_id.empty()) g.numa_node = read_int(fs::path("/sys/bus/pci/devices") / g.pci_bus_id / "numa_node");
  }

  if (!v.gpus.empty()) {
    // The driver's own setting; reading it needs no device context and no CUPTI call.
    v.profiling_admin_only = parse_profiling_admin_only(slurp("/proc/driver/nvidia/params"));
    v.profiling_privileged = profiling_privileged(parse_effective_capabilities(slurp("/proc/self/status")),
                                                  ::geteuid() == 0, driver_major(v.driver_version_string));
  }

  v.built_with_cuda = kBuiltWithCuda;
  if (kBuiltWithCuda) v.libraries = {cublas_library(), nccl_library(), cudnn_library()};

  v.cpu_governors = read_cpu_governors("/sys/devices/system/cpu");
  v.process_cpus = process_cpus();
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    if (rl.rlim_cur == RLIM_INFINITY) {
      v.memlock_unlimited = true;
    } else {
      v.memlock_bytes = static_cast<std::uint64_t>(rl.rlim_cur);
    }
  }
  v.disk = probe_disk(results_dir);
  v.container = probe_container();
  return v;
}

}  // namespace gpubench::doctor
