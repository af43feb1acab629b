#include "bench/doctor/checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "bench/core/device.hpp"

namespace gpubench::doctor {
namespace {

void add(std::vector<Finding>& out, std::string check, std::string subject, Severity s, std::string message,
         std::string remedy = {}) {
  out.push_back({std::move(check), std::move(subject), s, std::move(message), std::move(remedy)});
}

std::string watts(unsigned mw) { return fmt::format("{:g} W", mw / 1000.0); }

std::string nvidia_smi_i(const GpuView& g) {
  // nvidia-smi -i accepts a PCI bus id, which is unambiguous where CUDA and NVML number differently.
  return g.pci_bus_id.empty() ? std::string("nvidia-smi") : fmt::format("nvidia-smi -i {}", g.pci_bus_id);
}

void check_driver(const SystemView& v, std::vector<Finding>& out) {
  const std::string runtime = format_cuda_version(v.runtime_version);
  const std::string driver_name =
      v.driver_version_string.empty() ? std::string() : fmt::format(" (driver {})", v.driver_version_string);
  if (v.driver_version <= 0) {
    add(out, "driver", "host", Severity::Info,
        fmt::format("no NVIDIA driver is loaded; gpubench's CUDA runtime is {}", runtime),
        (v.container.kind.empty() ? std::string() : std::string("the container was not given the host's driver (see "
                                                                  "the container finding); on the host, ")) +
            (v.runtime_version > 0 && !minimum_driver_for(v.runtime_version).empty()
                 ? fmt::format("to use a GPU, install NVIDIA driver {} or newer", minimum_driver_for(v.runtime_version))
                 : std::string("to use a GPU, install the NVIDIA driver")));
    return;
  }
  const std::string driver = format_cuda_version(v.driver_version);
  const int driver_major = v.driver_version / 1000, runtime_major = v.runtime_version / 1000;
  if (driver_major < runtime_major) {
    const std::string minimum = minimum_driver_for(v.runtime_version);
    add(out, "driver", "host", Severity::Error,
        fmt::format("the driver supports CUDA {}{}, older than gpubench's CUDA {} runtime: no GPU case can run", driver,
                    driver_name, runtime),
        minimum.empty()
            ? fmt::format("install an NVIDIA driver that supports CUDA {}, or use a gpubench built with CUDA {}",
                          runtime, driver)
            : fmt::format("install NVIDIA driver {} or newer (CUDA {}), or use a gpubench built with CUDA {}.x",
                          minimum, runtime_major, driver_major));
  } else if (v.driver_version < v.runtime_version) {
    add(out, "driver", "host", Severity::Warning,
        fmt::format("the driver supports CUDA {}{}, older than gpubench's CUDA {} runtime: it runs through minor "
                    "version compatibility, but code needing a newer driver (PTX JIT of newer PTX) fails",
                    driver, driver_name, runtime),
        fmt::format("update the NVIDIA driver to one supporting CUDA {}", runtime));
  } else {
    const std::string minimum = minimum_driver_for(v.runtime_version);
    add(out, "driver", "host", Severity::Ok,
        fmt::format("driver supports CUDA {}{}; gpubench's runtime is CUDA {}{}", driver, driver_name, runtime,
                    minimum.empty() ? std::string() : fmt::format(" (it needs driver {} or newer)", minimum)));
  }
}

void check_pcie(const GpuView& g, const nvml::DeviceStatus& s, std::vector<Finding>& out) {
  const std::string id = g.label();
  if (!s.pcie_generation || !s.pcie_max_generation || !s.pcie_width || !s.pcie_max_width) {
    add(out, "pcie", id, Severity::Info, "PCIe link state not reported by NVML");
    return;
  }
  const std::string link = fmt::format("PCIe Gen{} x{} (maximum Gen{} x{})", *s.pcie_generation, *s.pcie_width,
                                       *s.pcie_max_generation, *s.pcie_max_width);
  const bool idle = s.clocks_event_reasons && (*s.clocks_event_reasons & nvml::kClocksEventGpuIdle);
  if (*s.pcie_width < *s.pcie_max_width) {
    add(out, "pcie", id, Severity::Warning, link + ": the link runs at reduced width; host-device copies are slower",
        "reseat the GPU or move it to a full-width slot; check the slot's wiring and BIOS PCIe settings");
  } else if (*s.pcie_generation < *s.pcie_max_generation && !idle) {
    add(out, "pcie", id, Severity::Warning, link + " while the GPU is not idle: the link trained below its maximum",
        "check the slot, riser and BIOS PCIe generation setting; `nvidia-smi -q -d PCIE` shows the link under load");
  } else if (*s.pcie_generation < *s.pcie_max_generation) {
    add(out, "pcie", id, Severity::Info,
        link + ": an idle GPU lowers its link generation to save power; it returns to the maximum under load");
  } else {
    add(out, "pcie", id, Severity::Ok, link);
  }
}

void check_persistence(const GpuView& g, const nvml::DeviceStatus& s, std::vector<Finding>& out) {
  if (!s.persistence_mode) return;  // not reported on every platform; nothing to say
  if (*s.persistence_mode) {
    add(out, "persistence", g.label(), Severity::Ok, "persistence mode on");
  } else {
    add(out, "persistence", g.label(), Severity::Info,
        "persistence mode off: the driver tears the GPU state down when no process uses it, so every start pays "
        "its initialisation and clock settings may not stick",
        "sudo " + nvidia_smi_i(g) + " -pm 1 (or enable the nvidia-persistenced service)");
  }
}

void check_ecc(const GpuView& g, const nvml::DeviceStatus& s, std::vector<Finding>& out) {
  const std::string id = g.label();
  if (!s.ecc_enabled) return;  // GPUs without ECC (most consumer boards) report NOT_SUPPORTED
  if (s.ecc_enabled_pending && *s.ecc_enabled_pending != *s.ecc_enabled) {
    add(out, "ecc", id, Severity::Warning,
        fmt::format("ECC is {} but will be {} after the next GPU reset or reboot", *s.ecc_enabled ? "on" : "off",
                    *s.ecc_enabled_pending ? "on" : "off"),
        "reboot (or `sudo " + nvidia_smi_i(g) + " -r`) before measuring, so results match the configured mode");
  }
  if (s.ecc_uncorrected_volatile && *s.ecc_uncorrected_volatile > 0) {
    add(out, "ecc", id, Severity::Error,
        fmt::format("{} uncorrectable ECC error(s) since the driver loaded: results from this GPU may be wrong",
                    *s.ecc_uncorrected_volatile),
        "drain the GPU and reset it (`sudo " + nvidia_smi_i(g) +
            " -r`); if errors recur, `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER` and contact the vendor");
  } else if (s.ecc_uncorrected_aggregate && *s.ecc_uncorrected_aggregate > 0) {
    add(out, "ecc", id, Severity::Warning,
        fmt::format("{} uncorrectable ECC error(s) over the GPU's lifetime (none since the driver loaded)",
                    *s.ecc_uncorrected_aggregate),
        "check `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER` for pending retirements or remaps");
  }
  if (s.ecc_corrected_volatile && *s.ecc_corrected_volatile > 0) {
    add(out, "ecc", id, Severity::Info,
        fmt::format("{} corrected ECC error(s) since the driver loaded", *s.ecc_corrected_volatile),
        "watch the count; a fast-growing one predicts failures (`nvidia-smi -q -d ECC`)");
  }
  const bool any_error = (s.ecc_uncorrected_volatile && *s.ecc_uncorrected_volatile > 0) ||
                         (s.ecc_uncorrected_aggregate && *s.ecc_uncorrected_aggregate > 0) ||
                         (s.ecc_corrected_volatile && *s.ecc_corrected_volatile > 0);
  if (!*s.ecc_enabled) {
    add(out, "ecc", id, Severity::Info,
        "ECC off: more usable memory and bandwidth, but results are not comparable with ECC-on GPUs of the same model",
        "to compare with ECC-on machines: `sudo " + nvidia_smi_i(g) + " -e 1` and reboot");
  } else if (!any_error) {
    add(out, "ecc", id, Severity::Ok, "ECC on, no errors counted");
  }
}

void check_mig(const GpuView& g, const nvml::DeviceStatus& s, std::vector<Finding>& out) {
  if (!s.mig_enabled) return;  // GPUs without MIG report NOT_SUPPORTED
  const std::string id = g.label();
  if (*s.mig_enabled) {
    add(out, "mig", id, Severity::Warning,
        "MIG mode on: CUDA sees MIG instances, not the whole GPU, so results describe one slice",
        "to measure the whole GPU: `sudo " + nvidia_smi_i(g) + " -mig 0` (then reset the GPU)");
  } else if (s.mig_enabled_pending && *s.mig_enabled_pending) {
    add(out, "mig", id, Severity::Warning, "MIG mode will turn on at the next GPU reset",
            "`sudo " + nvidia_smi_i(g) + " -mig 0` to keep measuring the whole GPU");
  } else {
    add(out, "mig", id, Severity::Ok, "MIG mode off");
  }
}

std::vector<std::string> slowdown_reasons(std::uint64_t reasons) {
  std::vector<std::string> r;
  if (reasons & nvml::kClocksEventHwSlowdown) r.emplace_back("hardware slowdown");
  if (reasons & nvml::kClocksEventSwThermalSlowdown) r.emplace_back("software thermal slowdown");
  if (reasons & nvml::kClocksEventHwThermalSlowdown) r.emplace_back("hardware thermal slowdown");
  if (reasons & nvml::kClocksEventHwPowerBrakeSlowdown) r.emplace_back("power brake");
  return r;
}

void check_clocks(const GpuView& g, const nvml::DeviceStatus& s, std::vector<Finding>& out) {
  const std::string id = g.label();
  bool flagged = false;
  auto below_default = [&](const char* what, const std::optional<unsigned>& app, const std::optional<unsigned>& def) {
    if (!app || !def || *app >= *def) return;
    flagged = true;
    add(out, "clocks", id, Severity::Warning,
        fmt::format("application {} clock set to {} MHz, below its default {} MHz: kernels run slower", what, *app,
                    *def),
        "sudo " + nvidia_smi_i(g) + " -rac (reset application clocks)");
  };
  below_default("SM", s.app_sm_clock_mhz, s.default_app_sm_clock_mhz);
  below_default("memory", s.app_memory_clock_mhz, s.default_app_memory_clock_mhz);
  if (s.clocks_event_reasons) {
    const auto reasons = slowdown_reasons(*s.clocks_event_reasons);
    if (!reasons.empty()) {
      flagged = true;
      add(out, "clocks", id, Severity::Warning,
          fmt::format("clocks held down by {}", fmt::join(reasons, ", ")),
          "check cooling, fans and power cables; `nvidia-smi -q -d PERFORMANCE` lists the active reasons");
    }
  }
  if (flagged) return;
  if (!s.sm_clock_mhz || !s.max_sm_clock_mhz) {
    add(out, "clocks", id, Severity::Info, "clocks not reported by NVML");
    return;
  }
  std::string msg = fmt::format("SM {} of {} MHz", *s.sm_clock_mhz, *s.max_sm_clock_mhz);
  if (s.memory_clock_mhz && s.max_memory_clock_mhz) {
    msg += fmt::format(", memory {} of {} MHz", *s.memory_clock_mhz, *s.max_memory_clock_mhz);
  }
  if (s.app_sm_clock_mhz) msg += fmt::format("; application SM clock {} MHz", *s.app_sm_clock_mhz);
  const bool idle = s.clocks_event_reasons && (*s.clocks_event_reasons & nvml::kClocksEventGpuIdle);
  if (idle) msg += " (idle: clocks rise under load)";
  add(out, "clocks", id, Severity::Ok, msg);
}

void check_power(const GpuView& g, const nvml::DeviceStatus& s, std::vector<Finding>& out) {
  if (!s.power_limit_mw || !s.default_power_limit_mw) return;  // not every GPU has a settable limit
  const std::string id = g.label();
  if (*s.power_limit_mw < *s.default_power_limit_mw) {
    add(out, "power", id, Severity::Warning,
        fmt::format("power limit {} is below the default {}: compute-bound results will be lower",
                    watts(*s.power_limit_mw), watts(*s.default_power_limit_mw)),
        fmt::format("sudo {} -pl {:g}", nvidia_smi_i(g), *s.default_power_limit_mw / 1000.0));
  } else {
    add(out, "power", id, Severity::Ok,
        fmt::format("power limit {} (default {})", watts(*s.power_limit_mw), watts(*s.default_power_limit_mw)));
  }
}

void check_temperature(const GpuView& g, const nvml::DeviceStatus& s, std::vector<Finding>& out) {
  if (!s.temperature_c) return;
  const std::string id = g.label();
  const unsigned hot = s.slowdown_temperature_c && *s.slowdown_temperature_c > kHotMarginC
                           ? *s.slowdown_temperature_c - kHotMarginC
                           : kHotDefaultC;
  const std::string limit =
      s.slowdown_temperature_c ? fmt::format(" (slowdown at {} C)", *s.slowdown_temperature_c) : std::string();
  if (*s.temperature_c >= hot) {
    add(out, "temperature", id, Severity::Warning,
        fmt::format("GPU at {} C{}: it will throttle under load", *s.temperature_c, limit),
        "check airflow and fans; let the GPU cool (or stop what heats it) before measuring");
  } else {
    add(out, "temperature", id, Severity::Ok, fmt::format("GPU at {} C{}", *s.temperature_c, limit));
  }
}

void check_processes(const SystemView& v, const GpuView& g, const nvml::DeviceStatus& s,
                     std::vector<Finding>& out) {
  const std::string id = g.label();
  if (!s.compute_processes) {
    add(out, "processes", id, Severity::Info, "could not list the processes using this GPU (NVML refused)");
    return;
  }
  std::vector<std::string> others;
  for (const nvml::GpuProcess& p : *s.compute_processes) {
    if (p.pid == v.self_pid) continue;
    std::string d = fmt::format("{} (pid {}", p.name.empty() ? std::string("?") : p.name, p.pid);
    if (p.used_memory_bytes) d += ", " + format_bytes(*p.used_memory_bytes);
    others.push_back(d + ")");
  }
  if (others.empty()) {
    add(out, "processes", id, Severity::Ok, "no other process uses this GPU");
    return;
  }
  add(out, "processes", id, Severity::Warning,
      fmt::format("{} other process(es) use this GPU, so measurements on it are not trustworthy: {}", others.size(),
                  fmt::join(others, ", ")),
      "wait for them to finish, or measure another GPU (--device cuda:N)");
}

void check_numa(const SystemView& v, const GpuView& g, const nvml::DeviceStatus* s, std::vector<Finding>& out) {
  const std::string id = g.label();
  std::string msg;
  if (g.numa_node && *g.numa_node >= 0) msg = fmt::format("NUMA node {}", *g.numa_node);
  const std::vector<unsigned>* near = s && s->cpu_affinity && !s->cpu_affinity->empty() ? &*s->cpu_affinity : nullptr;
  if (near) msg += fmt::format("{}near CPUs {}", msg.empty() ? "" : ", ", format_cpu_list(*near));
  if (msg.empty()) {
    if (g.numa_node && *g.numa_node < 0) add(out, "numa", id, Severity::Ok, "no NUMA affinity (single node)");
    return;
  }
  if (near && v.process_cpus && !v.process_cpus->empty()) {
    std::set<unsigned> allowed(v.process_cpus->begin(), v.process_cpus->end());
    const bool overlap = std::any_of(near->begin(), near->end(), [&](unsigned c) { return allowed.count(c) > 0; });
    if (!overlap) {
      add(out, "numa", id, Severity::Warning,
          fmt::format("{}; this process may only run on CPUs {}, none of them near the GPU: copies cross the "
                      "CPU interconnect",
                      msg, format_cpu_list(*v.process_cpus)),
          g.numa_node && *g.numa_node >= 0
              ? fmt::format("run under `numactl --cpunodebind={0} --membind={0}`", *g.numa_node)
              : fmt::format("run under `taskset -c {}`", format_cpu_list(*near)));
      return;
    }
  }
  add(out, "numa", id, Severity::Ok, msg);
}

}  // namespace

std::string GpuView::label() const {
  if (cuda_ordinal) return fmt::format("cuda:{}", *cuda_ordinal);
  if (nvml) return fmt::format("nvml:{}", nvml->index);
  return pci_bus_id.empty() ? std::string("gpu") : pci_bus_id;
}

std::string to_string(Severity s) {
  switch (s) {
    case Severity::Ok: return "ok";
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "?";
}

void check_cuda(const SystemView& v, std::vector<Finding>& out) {
  if (!v.built_with_cuda) {
    add(out, "build", "host", Severity::Info,
        "gpubench is not built with CUDA: the GPU suites' cases and the CUDA instruments (nvtx, trace, metrics) are "
        "not available; CPU cases, report, compare, history and scaling work",
        "to measure GPUs, build where the CUDA Toolkit is installed (nvcc on PATH, or CUDACXX): scripts/run.sh, or "
        "cmake -DGPUBENCH_WITH_CUDA=ON");
  } else {
    check_driver(v, out);
  }
  if (v.cuda_device_count == 0) {
    add(out, "cuda", "host", Severity::Info,
        "no CUDA device: " + (v.cuda_unavailable_reason.empty() ? std::string("none found") : v.cuda_unavailable_reason),
        "GPU cases are skipped; CPU cases run");
  } else {
    add(out, "cuda", "host", Severity::Ok, fmt::format("{} CUDA device(s)", v.cuda_device_count));
  }
  if (!v.nvml_available) {
    const bool gpus_expected = v.cuda_device_count > 0 || v.driver_version > 0;
    add(out, "nvml", "host", gpus_expected ? Severity::Warning : Severity::Info,
        "NVML unavailable: " + v.nvml_unavailable_reason +
            (gpus_expected ? "; link, clock, power, ECC and process checks are skipped" : ""),
        gpus_expected ? "install the NVIDIA driver's NVML library (libnvidia-ml.so.1, in the driver package)" : "");
  }
}

void check_gpu(const SystemView& v, const GpuView& g, std::vector<Finding>& out) {
  const std::string id = g.label();
  std::string what = g.name.empty() ? std::string("GPU") : g.name;
  if (!g.pci_bus_id.empty()) what += " at " + g.pci_bus_id;
  if (!g.cuda_ordinal) {
    add(out, "gpu", id, Severity::Info, what + ": NVML sees it but CUDA does not",
        "see the driver and cuda findings (a driver too old for the runtime), or CUDA_VISIBLE_DEVICES hides it");
  } else {
    add(out, "gpu", id, Severity::Info, what);
  }
  if (!g.nvml) {
    add(out, "gpu", id, Severity::Info, "NVML does not report this GPU: its state is not checked");
    check_numa(v, g, nullptr, out);
    return;
  }
  const nvml::DeviceStatus& s = *g.nvml;
  check_pcie(g, s, out);
  check_persistence(g, s, out);
  check_ecc(g, s, out);
  check_mig(g, s, out);
  check_clocks(g, s, out);
  check_power(g, s, out);
  check_temperature(g, s, out);
  check_processes(v, g, s, out);
  check_numa(v, g, &s, out);
}

void check_profiling(const SystemView& v, std::vector<Finding>& out) {
  if (v.gpus.empty()) return;  // nothing to profile; CUPTI is never asked without a device
  if (!v.profiling_admin_only) {
    add(out, "profiling", "host", Severity::Info,
        "GPU performance counter permission unknown (/proc/driver/nvidia/params has no RmProfilingAdminOnly)");
  } else if (!*v.profiling_admin_only) {
    add(out, "profiling", "host", Severity::Ok, "GPU performance counters (CUPTI metrics) open to all users");
  } else if (v.profiling_privileged) {
    add(out, "profiling", "host", Severity::Ok,
        "GPU performance counters restricted to administrators; this process is privileged");
  } else {
    add(out, "profiling", "host", Severity::Warning,
        "GPU performance counters are restricted to administrators: CUPTI metrics (--profile) will be refused "
        "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)",
        "run as root (or with CAP_SYS_ADMIN), or set `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in "
        "/etc/modprobe.d and reload the driver");
  }
}

void check_libraries(const SystemView& v, std::vector<Finding>& out) {
  if (!v.built_with_cuda) {
    add(out, "library", "host", Severity::Info, "cuBLAS, NCCL and cuDNN are not used: not built with CUDA");
    return;
  }
  for (const LibraryView& lib : v.libraries) {
    const std::string built = lib.built_with.empty() ? std::string() : "; " + lib.built_with;
    if (lib.version) {
      add(out, "library", lib.name, Severity::Ok, fmt::format("{} {}{}", lib.name, *lib.version, built));
    } else {
      add(out, "library", lib.name, Severity::Info,
          fmt::format("{} not found ({}): cases that need it are skipped{}", lib.name, lib.missing_reason, built),
          fmt::format("install {} for CUDA {} if you need those cases", lib.name,
                      v.runtime_version > 0 ? std::to_string(v.runtime_version / 1000) : std::string("?")));
    }
  }
}

void check_host(const SystemView& v, std::vector<Finding>& out) {
  if (v.cpu_governors.empty()) {
    add(out, "cpu_governor", "host", Severity::Info,
        "CPU frequency governor not exposed (no cpufreq in sysfs, as in many VMs and containers)");
  } else {
    std::vector<std::string> parts;
    for (const auto& [gov, n] : v.cpu_governors) parts.push_back(fmt::format("{} on {} CPU(s)", gov, n));
    const std::string summary = fmt::format("{}", fmt::join(parts, ", "));
    const bool all_performance = v.cpu_governors.size() == 1 && v.cpu_governors.count("performance");
    if (v.cpu_governors.count("powersave")) {
      add(out, "cpu_governor", "host", Severity::Warning,
          "CPU governor " + summary + ": host-side work (launches, data loading, CPU cases) runs slower and varies",
          "sudo cpupower frequency-set -g performance");
    } else if (!all_performance) {
      add(out, "cpu_governor", "host", Severity::Info,
          "CPU governor " + summary + ": clocks follow load, so host-side timings vary more",
          "for steadier host timings: sudo cpupower frequency-set -g performance");
    } else {
      add(out, "cpu_governor", "host", Severity::Ok, "CPU governor " + summary);
    }
  }
  if (v.memlock_unlimited) {
    add(out, "memlock", "host", Severity::Ok, "locked-memory limit unlimited");
  } else if (!v.memlock_bytes) {
    add(out, "memlock", "host", Severity::Info, "locked-memory limit unknown (getrlimit failed)");
  } else {
    add(out, "memlock", "host", Severity::Warning,
        fmt::format("locked-memory limit (ulimit -l) is {}: RDMA registration (NCCL over InfiniBand/RoCE, "
                    "GPUDirect) and mlock'd host buffers beyond it fail",
                    format_bytes(*v.memlock_bytes)),
        "raise it: `memlock unlimited` for the user in /etc/security/limits.conf, `ulimit -l unlimited`, or "
        "`docker run --ulimit memlock=-1`");
  }
}

void check_disk(const SystemView& v, std::vector<Finding>& out) {
  const DiskView& d = v.disk;
  const std::string where = d.checked_dir == d.results_dir || d.checked_dir.empty()
                                ? d.results_dir
                                : fmt::format("{} (checked at {}, its nearest existing folder)", d.results_dir,
                                              d.checked_dir);
  if (!d.error.empty() || !d.free_bytes) {
    add(out, "disk", "results", Severity::Error,
        fmt::format("cannot check the results folder {}: {}", where, d.error.empty() ? "unknown" : d.error),
        "pass a usable folder with --results-dir (or fix its path)");
    return;
  }
  if (!d.writable) {
    add(out, "disk", "results", Severity::Error, fmt::format("results folder {} is not writable", where),
        "fix its permissions, or write results elsewhere (gpubench run --out FILE)");
    return;
  }
  const std::string free = format_bytes(*d.free_bytes) + " free at " + where;
  if (*d.free_bytes < kDiskErrorBytes) {
    add(out, "disk", "results", Severity::Error, free + ": results and traces may not fit",
        "free space there, or write results elsewhere (gpubench run --out FILE)");
  } else if (*d.free_bytes < kDiskWarningBytes) {
    add(out, "disk", "results", Severity::Warning, free + ": enough for results files, tight for traces",
        "free space there before profiling runs, or write results elsewhere");
  } else {
    add(out, "disk", "results", Severity::Ok, free);
  }
}

namespace {
// How a container is given the GPUs, by the way it was started.
std::string container_gpu_remedy(const std::string& kind) {
  if (kind == "kubernetes")
    return "ask for the GPUs in the pod spec (resources.limits: nvidia.com/gpu: N) on a node with the NVIDIA device "
           "plugin or GPU Operator (deploy/kubernetes/)";
  if (kind == "apptainer") return "start it with --nv (apptainer exec --nv IMAGE gpubench ...)";
  return "start it with the GPUs: `docker run --gpus all`, or with the NVIDIA Container Toolkit's CDI `podman run "
         "--device nvidia.com/gpu=all`; under Slurm, pyxis/enroot inject them for a job given GPUs (docs/containers.md)";
}
}  // namespace

void check_container(const SystemView& v, std::vector<Finding>& out) {
  const ContainerView& c = v.container;
  if (c.kind.empty()) return;
  std::vector<std::string> found, missing;
  auto has = [&](std::string_view soname) {
    return std::any_of(c.driver_libraries.begin(), c.driver_libraries.end(),
                       [&](const DriverLibrary& l) { return l.soname == soname && !l.path.empty(); });
  };
  for (const DriverLibrary& l : c.driver_libraries) {
    if (l.path.empty()) {
      missing.push_back(l.soname);
    } else {
      found.push_back(l.path == l.soname ? l.soname : fmt::format("{} ({})", l.soname, l.path));
    }
  }
  const std::string where = fmt::format("in a {} container ({})", c.kind, c.evidence);
  const std::string nodes = c.device_nodes.empty() ? std::string("no /dev/nvidia* device nodes")
                                                   : "device nodes " + fmt::format("{}", fmt::join(c.device_nodes, ", "));
  if (!has("libcuda.so.1")) {
    add(out, "container", "host", Severity::Warning,
        fmt::format("{} with no NVIDIA driver libraries injected: {} not found, {}; GPU cases are skipped", where,
                    fmt::join(missing, ", "), nodes),
        container_gpu_remedy(c.kind));
  } else if (!has("libnvidia-ml.so.1")) {
    add(out, "container", "host", Severity::Warning,
        fmt::format("{}: the driver's {} were injected, but not {}: NVML's telemetry and doctor's GPU checks are "
                    "unavailable",
                    where, fmt::join(found, ", "), fmt::join(missing, ", ")),
        "give the container the driver's utility capability: NVIDIA_DRIVER_CAPABILITIES=compute,utility (gpubench's "
        "image sets it; a pod spec or --env can override it)");
  } else if (c.device_nodes.empty()) {
    add(out, "container", "host", Severity::Warning,
        fmt::format("{}: the driver's libraries were injected ({}) but there are no /dev/nvidia* device nodes",
                    where, fmt::join(found, ", ")),
        container_gpu_remedy(c.kind));
  } else {
    add(out, "container", "host", missing.empty() ? Severity::Ok : Severity::Info,
        fmt::format("{}: the driver's libraries were injected: {}; {}{}", where, fmt::join(found, ", "), nodes,
                    missing.empty() ? std::string()
                                    : fmt::format("; {} missing: PTX that must be JIT-compiled for this GPU fails",
                                                  fmt::join(missing, ", "))),
        missing.empty() ? std::string() : std::string("give the container the compute capability (NVIDIA_DRIVER_CAPABILITIES=compute,utility)"));
  }
}

std::vector<Finding> run_checks(const SystemView& v) {
  std::vector<Finding> out;
  check_container(v, out);
  check_cuda(v, out);
  for (const GpuView& g : v.gpus) check_gpu(v, g, out);
  check_profiling(v, out);
  check_libraries(v, out);
  check_host(v, out);
  check_disk(v, out);
  return out;
}

int exit_code(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::Error; })
             ? 1
             : 0;
}

nlohmann::ordered_json to_json(const std::vector<Finding>& findings) {
  nlohmann::ordered_json j;
  j["findings"] = nlohmann::ordered_json::array();
  int counts[4] = {};
  for (const Finding& f : findings) {
    ++counts[static_cast<int>(f.severity)];
    nlohmann::ordered_json e{{"check", f.check}, {"subject", f.subject}, {"severity", to_string(f.severity)},
                             {"message", f.message}};
    e["remedy"] = f.remedy.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.remedy);
    j["findings"].push_back(std::move(e));
  }
  j["summary"] = {{"ok", counts[0]}, {"info", counts[1]}, {"warning", counts[2]}, {"error", counts[3]}};
  j["exit_code"] = exit_code(findings);
  return j;
}

std::string format_text(const std::vector<Finding>& findings) {
  std::size_t check_w = 5, subject_w = 7;
  for (const Finding& f : findings) {
    check_w = std::max(check_w, f.check.size());
    subject_w = std::max(subject_w, f.subject.size());
  }
  std::string out;
  int counts[4] = {};
  for (const Finding& f : findings) {
    ++counts[static_cast<int>(f.severity)];
    out += fmt::format("{:<8} {:<{}} {:<{}} {}\n", to_string(f.severity), f.check, check_w, f.subject, subject_w,
                       f.message);
    if (!f.remedy.empty()) out += fmt::format("{:<{}}-> {}\n", "", 8 + 1 + check_w + 1 + subject_w + 1, f.remedy);
  }
  out += fmt::format("{} ok, {} info, {} warning(s), {} error(s)\n", counts[0], counts[1], counts[2], counts[3]);
  return out;
}

std::string minimum_driver_for(int cuda_version) {
  // The minimum driver of each major version's minor version compatibility (CUDA
  // Compatibility guide, https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html:
  // 13.x >= 580, 12.x >= 525, 11.x >= 450; the exact releases are the GA rows of the release
  // notes' "CUDA Toolkit and Corresponding Driver Versions" table): every runtime of that major
  // runs on it, except for features that need a newer driver (PTX JIT of newer PTX).
  switch (cuda_version / 1000) {
    case 13: return "580.65.06";
    case 12: return "525.60.13";
    case 11: return "450.80.02";
    default: return {};
  }
}

std::string format_cpu_list(const std::vector<unsigned>& cpus) {
  std::vector<unsigned> s(cpus);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t j = i;
    while (j + 1 < s.size() && s[j + 1] == s[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(s[i]) : fmt::format("{}-{}", s[i], s[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, kUnits[u]);
}

}  // namespace gpubench::doctor
