// gpubench doctor: every check against hand-made SystemViews, the JSON and text forms, and the
// probe's parsers. The probe's machine queries are exercised end to end in tests/e2e.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gpubench/version.hpp"
#include "bench/core/nvml.hpp"
#include "bench/doctor/checks.hpp"
#include "bench/doctor/probe.hpp"

namespace gpubench::doctor {
namespace {
namespace fs = std::filesystem;

constexpr std::uint64_t GB = 1'000'000'000ULL;

// A machine with nothing wrong: driver 580 (CUDA 13.0), one idle H100 in a Gen5 x16 link.
SystemView healthy() {
  SystemView v;
  v.runtime_version = 13000;
  v.driver_version = 13000;
  v.driver_version_string = "580.65.06";
  v.cuda_device_count = 1;
  v.nvml_available = true;
  v.self_pid = 4242;
  GpuView g;
  g.cuda_ordinal = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.pci_bus_id = "0000:17:00.0";
  g.numa_node = 0;
  nvml::DeviceStatus s;
  s.index = 0;
  s.pci_bus_id = g.pci_bus_id;
  s.name = g.name;
  s.pcie_generation = 5, s.pcie_max_generation = 5, s.pcie_width = 16, s.pcie_max_width = 16;
  s.persistence_mode = true;
  s.ecc_enabled = true, s.ecc_enabled_pending = true;
  s.ecc_corrected_volatile = 0, s.ecc_uncorrected_volatile = 0;
  s.ecc_corrected_aggregate = 0, s.ecc_uncorrected_aggregate = 0;
  s.mig_enabled = false, s.mig_enabled_pending = false;
  s.sm_clock_mhz = 345, s.max_sm_clock_mhz = 1980, s.memory_clock_mhz = 2619, s.max_memory_clock_mhz = 2619;
  s.app_sm_clock_mhz = 1755, s.default_app_sm_clock_mhz = 1755;
  s.app_memory_clock_mhz = 2619, s.default_app_memory_clock_mhz = 2619;
  s.clocks_event_reasons = nvml::kClocksEventGpuIdle;
  s.power_limit_mw = 700000, s.default_power_limit_mw = 700000;
  s.temperature_c = 34, s.slowdown_temperature_c = 90;
  s.compute_processes = std::vector<nvml::GpuProcess>{};
  s.cpu_affinity = std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7};
  g.nvml = s;
  v.gpus.push_back(g);
  v.profiling_admin_only = false;
  v.libraries = {{"cuBLAS", "13.0.2", "", ""}, {"NCCL", "2.27.7", "", ""}, {"cuDNN", "9.13.0", "", ""}};
  v.cpu_governors = {{"performance", 8}};
  v.process_cpus = std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7};
  v.memlock_unlimited = true;
  v.disk.results_dir = "results";
  v.disk.checked_dir = "results";
  v.disk.free_bytes = 500 * GB;
  v.disk.total_bytes = 1000 * GB;
  v.disk.writable = true;
  return v;
}

nvml::DeviceStatus& gpu0(SystemView& v) { return *v.gpus.at(0).nvml; }

std::vector<Finding> of(const std::vector<Finding>& all, const std::string& check) {
  std::vector<Finding> out;
  for (const Finding& f : all) {
    if (f.check == check) out.push_back(f);
  }
  return out;
}

// The single finding of `check`; fails the test when there is not exactly one.
Finding one(const SystemView& v, const std::string& check) {
  const auto found = of(run_checks(v), check);
  EXPECT_EQ(found.size(), 1u) << check;
  return found.empty() ? Finding{} : found.front();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Doctor, HealthyMachineHasOnlyOkAndInfo) {
  const auto findings = run_checks(healthy());
  for (const Finding& f : findings) {
    EXPECT_TRUE(f.severity == Severity::Ok || f.severity == Severity::Info) << f.check << ": " << f.message;
  }
  for (const char* check : {"driver", "cuda", "gpu", "pcie", "persistence", "ecc", "mig", "clocks", "power",
                            "temperature", "processes", "numa", "profiling", "library", "cpu_governor", "memlock",
                            "disk"}) {
    EXPECT_FALSE(of(findings, check).empty()) << check;
  }
  EXPECT_EQ(exit_code(findings), 0);
}

// The healthy machine without its GPU and driver: CUDA finds no device for `why`.
SystemView without_gpu(const std::string& why) {
  SystemView v = healthy();
  v.gpus.clear();
  v.cuda_device_count = 0;
  v.driver_version = 0;
  v.driver_version_string.clear();
  v.nvml_available = false;
  v.nvml_unavailable_reason = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
  v.cuda_unavailable_reason = why;
  return v;
}

TEST(Doctor, NoGpuSaysSoAndChecksTheRest) {
  const SystemView v = without_gpu("no NVIDIA driver is loaded (cudaErrorInsufficientDriver)");
  const auto findings = run_checks(v);
  const Finding cuda = one(v, "cuda");
  EXPECT_EQ(cuda.severity, Severity::Info);
  EXPECT_EQ(cuda.message, "no CUDA device: no NVIDIA driver is loaded (cudaErrorInsufficientDriver)");
  EXPECT_EQ(one(v, "nvml").severity, Severity::Info);
  EXPECT_EQ(one(v, "driver").severity, Severity::Info);
  EXPECT_TRUE(of(findings, "profiling").empty());  // never asked without a device
  EXPECT_TRUE(of(findings, "pcie").empty());
  EXPECT_EQ(of(findings, "library").size(), 3u);
  EXPECT_EQ(one(v, "cpu_governor").severity, Severity::Ok);
  EXPECT_EQ(one(v, "memlock").severity, Severity::Ok);
  EXPECT_EQ(one(v, "disk").severity, Severity::Ok);
  EXPECT_EQ(exit_code(findings), 0);
}

// A build without CUDA (GPUBENCH_WITH_CUDA off): the build finding replaces the driver check (no
// driver advice: no driver would help this binary), the libraries are one "not used" finding,
// and the host checks run as usual.
TEST(Doctor, BuildWithoutCudaSaysSoInsteadOfTheDriverAndLibraries) {
  SystemView v = without_gpu("not built with CUDA");
  v.built_with_cuda = false;
  v.runtime_version = 0;
  v.libraries.clear();
  const auto findings = run_checks(v);
  EXPECT_TRUE(of(findings, "driver").empty());
  const Finding build = one(v, "build");
  EXPECT_EQ(build.severity, Severity::Info);
  EXPECT_TRUE(contains(build.message, "gpubench is not built with CUDA")) << build.message;
  EXPECT_TRUE(contains(build.remedy, "GPUBENCH_WITH_CUDA=ON")) << build.remedy;
  EXPECT_EQ(one(v, "cuda").message, "no CUDA device: not built with CUDA");
  const Finding lib = one(v, "library");
  EXPECT_EQ(lib.severity, Severity::Info);
  EXPECT_EQ(lib.message, "cuBLAS, NCCL and cuDNN are not used: not built with CUDA");
  EXPECT_EQ(one(v, "disk").severity, Severity::Ok);
  EXPECT_EQ(exit_code(findings), 0);
}

TEST(Doctor, DriverOlderThanRuntimeMajorIsAnErrorNamingTheDriverToInstall) {
  SystemView v = healthy();
  v.driver_version = 12080;
  v.driver_version_string = "570.86.10";
  v.cuda_device_count = 0;
  v.cuda_unavailable_reason =
      "CUDA driver version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver)";
  v.gpus.at(0).cuda_ordinal.reset();  // NVML still sees the GPU
  const Finding f = one(v, "driver");
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_TRUE(contains(f.message, "CUDA 12.8")) << f.message;
  EXPECT_TRUE(contains(f.message, "570.86.10")) << f.message;
  EXPECT_TRUE(contains(f.remedy, "580.65.06")) << f.remedy;
  EXPECT_TRUE(contains(f.remedy, "CUDA 12.x")) << f.remedy;
  const auto gpu = of(run_checks(v), "gpu");
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu[0].subject, "nvml:0");
  EXPECT_TRUE(contains(gpu[0].message, "NVML sees it but CUDA does not"));
  EXPECT_EQ(exit_code(run_checks(v)), 1);
}

TEST(Doctor, DriverOlderMinorVersionIsAWarning) {
  SystemView v = healthy();
  v.runtime_version = 13010;
  v.driver_version = 13000;
  const Finding f = one(v, "driver");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "minor version compatibility"));
  EXPECT_TRUE(contains(f.remedy, "CUDA 13.1"));
}

TEST(Doctor, DriverNewEnoughStillNamesTheBinarysMinimumDriver) {
  SystemView v = healthy();
  v.runtime_version = 12040;  // a CUDA 12.4 build on a CUDA 12.8 driver
  v.driver_version = 12080;
  v.driver_version_string = "570.86.10";
  const Finding f = one(v, "driver");
  EXPECT_EQ(f.severity, Severity::Ok);
  EXPECT_TRUE(contains(f.message, "CUDA 12.4 (it needs driver 525.60.13 or newer)")) << f.message;
}

TEST(Doctor, NoDriverIsInformationNamingTheDriver) {
  SystemView v = healthy();
  v.driver_version = 0;
  const Finding f = one(v, "driver");
  EXPECT_EQ(f.severity, Severity::Info);
  EXPECT_TRUE(contains(f.remedy, "580.65.06"));
}

TEST(Doctor, NvmlMissingWhereGpusAreIsAWarning) {
  SystemView v = healthy();
  v.nvml_available = false;
  v.nvml_unavailable_reason = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
  v.gpus.at(0).nvml.reset();
  EXPECT_EQ(one(v, "nvml").severity, Severity::Warning);
  const auto gpu = of(run_checks(v), "gpu");
  ASSERT_EQ(gpu.size(), 2u);
  EXPECT_TRUE(contains(gpu[1].message, "not checked"));
  EXPECT_TRUE(of(run_checks(v), "pcie").empty());  // nothing invented
}

TEST(Doctor, PcieLink) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "pcie").severity, Severity::Ok);
  EXPECT_EQ(one(v, "pcie").message, "PCIe Gen5 x16 (maximum Gen5 x16)");

  gpu0(v).pcie_width = 8;  // degraded width: always a warning
  Finding f = one(v, "pcie");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "x8 (maximum Gen5 x16)"));
  EXPECT_FALSE(f.remedy.empty());

  gpu0(v).pcie_width = 16;
  gpu0(v).pcie_generation = 1;  // idle GPUs drop the generation to save power
  EXPECT_EQ(one(v, "pcie").severity, Severity::Info);
  gpu0(v).clocks_event_reasons = 0;  // busy and still below the maximum: degraded
  EXPECT_EQ(one(v, "pcie").severity, Severity::Warning);
  gpu0(v).clocks_event_reasons.reset();  // unknown whether idle: treated as not idle
  EXPECT_EQ(one(v, "pcie").severity, Severity::Warning);

  gpu0(v).pcie_max_width.reset();
  f = one(v, "pcie");
  EXPECT_EQ(f.severity, Severity::Info);
  EXPECT_TRUE(contains(f.message, "not reported"));
}

TEST(Doctor, PersistenceOffIsInformation) {
  SystemView v = healthy();
  gpu0(v).persistence_mode = false;
  const Finding f = one(v, "persistence");
  EXPECT_EQ(f.severity, Severity::Info);
  EXPECT_TRUE(contains(f.remedy, "-pm 1"));
  gpu0(v).persistence_mode.reset();
  EXPECT_TRUE(of(run_checks(v), "persistence").empty());
}

TEST(Doctor, EccErrors) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "ecc").severity, Severity::Ok);

  gpu0(v).ecc_uncorrected_volatile = 2;
  Finding f = one(v, "ecc");
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_TRUE(contains(f.message, "2 uncorrectable"));
  EXPECT_TRUE(contains(f.remedy, "-r"));
  EXPECT_EQ(exit_code(run_checks(v)), 1);

  gpu0(v).ecc_uncorrected_volatile = 0;
  gpu0(v).ecc_uncorrected_aggregate = 3;
  EXPECT_EQ(one(v, "ecc").severity, Severity::Warning);

  gpu0(v).ecc_uncorrected_aggregate = 0;
  gpu0(v).ecc_corrected_volatile = 17;
  f = one(v, "ecc");
  EXPECT_EQ(f.severity, Severity::Info);
  EXPECT_TRUE(contains(f.message, "17 corrected"));

  gpu0(v).ecc_corrected_volatile = 0;
  gpu0(v).ecc_enabled_pending = false;  // turning off at the next reset
  auto all = of(run_checks(v), "ecc");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].severity, Severity::Warning);
  EXPECT_TRUE(contains(all[0].message, "will be off"));

  gpu0(v).ecc_enabled = false;
  f = one(v, "ecc");  // now consistent: off and staying off
  EXPECT_EQ(f.severity, Severity::Info);
  EXPECT_TRUE(contains(f.message, "ECC off"));

  gpu0(v).ecc_enabled.reset();  // a GPU without ECC: nothing to say
  EXPECT_TRUE(of(run_checks(v), "ecc").empty());
}

TEST(Doctor, MigMode) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "mig").severity, Severity::Ok);
  gpu0(v).mig_enabled = true;
  Finding f = one(v, "mig");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.remedy, "-mig 0"));
  gpu0(v).mig_enabled = false;
  gpu0(v).mig_enabled_pending = true;
  EXPECT_EQ(one(v, "mig").severity, Severity::Warning);
  gpu0(v).mig_enabled.reset();
  EXPECT_TRUE(of(run_checks(v), "mig").empty());
}

TEST(Doctor, ClocksBelowMaxWhileIdleAreFine) {
  SystemView v = healthy();
  const Finding f = one(v, "clocks");
  EXPECT_EQ(f.severity, Severity::Ok);
  EXPECT_TRUE(contains(f.message, "SM 345 of 1980 MHz"));
  EXPECT_TRUE(contains(f.message, "idle"));
}

TEST(Doctor, ApplicationClocksLockedLowAreAWarning) {
  SystemView v = healthy();
  gpu0(v).app_sm_clock_mhz = 1005;
  const Finding f = one(v, "clocks");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "1005 MHz, below its default 1755 MHz"));
  EXPECT_TRUE(contains(f.remedy, "-rac"));
}

TEST(Doctor, HardwareSlowdownIsAWarning) {
  SystemView v = healthy();
  gpu0(v).clocks_event_reasons = nvml::kClocksEventHwThermalSlowdown | nvml::kClocksEventHwPowerBrakeSlowdown;
  const Finding f = one(v, "clocks");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "hardware thermal slowdown, power brake"));
}

TEST(Doctor, PowerLimitBelowDefault) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "power").severity, Severity::Ok);
  gpu0(v).power_limit_mw = 450000;
  const Finding f = one(v, "power");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "450 W is below the default 700 W"));
  EXPECT_TRUE(contains(f.remedy, "-pl 700"));
  gpu0(v).default_power_limit_mw.reset();
  EXPECT_TRUE(of(run_checks(v), "power").empty());
}

TEST(Doctor, HotGpu) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "temperature").severity, Severity::Ok);
  gpu0(v).temperature_c = 82;  // within 10 C of the 90 C slowdown threshold
  EXPECT_EQ(one(v, "temperature").severity, Severity::Warning);
  gpu0(v).temperature_c = 79;
  EXPECT_EQ(one(v, "temperature").severity, Severity::Ok);
  gpu0(v).slowdown_temperature_c.reset();  // no threshold: the default limit applies
  gpu0(v).temperature_c = kHotDefaultC;
  EXPECT_EQ(one(v, "temperature").severity, Severity::Warning);
  gpu0(v).temperature_c = kHotDefaultC - 1;
  EXPECT_EQ(one(v, "temperature").severity, Severity::Ok);
}

TEST(Doctor, OtherProcessesOnTheGpu) {
  SystemView v = healthy();
  gpu0(v).compute_processes = std::vector<nvml::GpuProcess>{{v.self_pid, 1ULL << 30, "gpubench"}};
  EXPECT_EQ(one(v, "processes").severity, Severity::Ok);  // this process does not count
  gpu0(v).compute_processes->push_back({777, 3ULL << 30, "python3"});
  gpu0(v).compute_processes->push_back({778, std::nullopt, ""});
  const Finding f = one(v, "processes");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "2 other process(es)"));
  EXPECT_TRUE(contains(f.message, "python3 (pid 777, 3.0 GiB)")) << f.message;
  EXPECT_TRUE(contains(f.message, "? (pid 778)")) << f.message;
  gpu0(v).compute_processes.reset();
  EXPECT_EQ(one(v, "processes").severity, Severity::Info);
}

TEST(Doctor, NumaAffinity) {
  SystemView v = healthy();
  Finding f = one(v, "numa");
  EXPECT_EQ(f.severity, Severity::Ok);
  EXPECT_EQ(f.message, "NUMA node 0, near CPUs 0-7");
  v.process_cpus = std::vector<unsigned>{8, 9, 10, 11};
  f = one(v, "numa");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "CPUs 8-11"));
  EXPECT_TRUE(contains(f.remedy, "numactl --cpunodebind=0 --membind=0"));
  v.gpus[0].numa_node = -1;
  f = one(v, "numa");
  EXPECT_TRUE(contains(f.remedy, "taskset -c 0-7")) << f.remedy;
}

TEST(Doctor, ProfilingPermission) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "profiling").severity, Severity::Ok);
  v.profiling_admin_only = true;
  v.profiling_privileged = false;
  Finding f = one(v, "profiling");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.remedy, "NVreg_RestrictProfilingToAdminUsers=0"));
  EXPECT_TRUE(contains(f.remedy, "root"));
  v.profiling_privileged = true;
  EXPECT_EQ(one(v, "profiling").severity, Severity::Ok);
  v.profiling_admin_only.reset();
  EXPECT_EQ(one(v, "profiling").severity, Severity::Info);
}

TEST(Doctor, MissingLibrariesAreInformation) {
  SystemView v = healthy();
  v.libraries = {{"NCCL", std::nullopt, "libnccl.so.2 not loadable", ""}};
  const Finding f = one(v, "library");
  EXPECT_EQ(f.severity, Severity::Info);
  EXPECT_EQ(f.subject, "NCCL");
  EXPECT_TRUE(contains(f.message, "libnccl.so.2 not loadable"));
  EXPECT_TRUE(contains(f.remedy, "CUDA 13"));
}

// What the build compiled against (the cuDNN provider's cudnn.h and where it came from) is said
// whether or not the library is found at run time.
TEST(Doctor, LibraryFindingsSayWhatTheBuildCompiledAgainst) {
  SystemView v = healthy();
  const std::string built = "the attention suite's cudnn provider was built with cudnn.h 9.19.0 from PyPI "
                            "nvidia-cudnn-cu12==9.19.0.56";
  v.libraries = {{"cuDNN", "9.19.0", "", built}};
  Finding f = one(v, "library");
  EXPECT_EQ(f.severity, Severity::Ok);
  EXPECT_EQ(f.message, "cuDNN 9.19.0; " + built);
  v.libraries = {{"cuDNN", std::nullopt, "libcudnn.so.9 and libcudnn.so.8 not loadable", built}};
  f = one(v, "library");
  EXPECT_EQ(f.severity, Severity::Info);
  EXPECT_TRUE(contains(f.message, "not loadable): cases that need it are skipped; " + built)) << f.message;
  v.libraries = {{"NCCL", "2.27.7", "", ""}};
  EXPECT_EQ(one(v, "library").message, "NCCL 2.27.7");
}

TEST(Doctor, CpuGovernor) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "cpu_governor").severity, Severity::Ok);
  v.cpu_governors = {{"performance", 4}, {"powersave", 4}};
  Finding f = one(v, "cpu_governor");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "powersave on 4 CPU(s)"));
  EXPECT_TRUE(contains(f.remedy, "-g performance"));
  v.cpu_governors = {{"schedutil", 8}};
  EXPECT_EQ(one(v, "cpu_governor").severity, Severity::Info);
  v.cpu_governors.clear();
  EXPECT_EQ(one(v, "cpu_governor").severity, Severity::Info);
}

TEST(Doctor, LowLockedMemoryLimit) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "memlock").severity, Severity::Ok);
  v.memlock_unlimited = false;
  v.memlock_bytes = 64 * 1024;
  const Finding f = one(v, "memlock");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "64.0 KiB"));
  EXPECT_TRUE(contains(f.remedy, "ulimit -l unlimited"));
  v.memlock_bytes.reset();
  EXPECT_EQ(one(v, "memlock").severity, Severity::Info);
}

TEST(Doctor, Disk) {
  SystemView v = healthy();
  EXPECT_EQ(one(v, "disk").severity, Severity::Ok);
  v.disk.free_bytes = kDiskWarningBytes - 1;
  EXPECT_EQ(one(v, "disk").severity, Severity::Warning);
  v.disk.free_bytes = kDiskErrorBytes - 1;
  Finding f = one(v, "disk");
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_TRUE(contains(f.message, "free at results"));
  EXPECT_EQ(exit_code(run_checks(v)), 1);
  v.disk.free_bytes = 500 * GB;
  v.disk.writable = false;
  EXPECT_EQ(one(v, "disk").severity, Severity::Error);
  v.disk.writable = true;
  v.disk.checked_dir = "/data";
  EXPECT_TRUE(contains(one(v, "disk").message, "results (checked at /data, its nearest existing folder)"));
  v.disk.error = "/data/x is not a folder";
  f = one(v, "disk");
  EXPECT_EQ(f.severity, Severity::Error);
  EXPECT_TRUE(contains(f.message, "/data/x is not a folder"));
}

TEST(Doctor, JsonHasEveryFindingAndASummary) {
  SystemView v = healthy();
  gpu0(v).power_limit_mw = 300000;
  const auto findings = run_checks(v);
  const auto j = to_json(findings);
  ASSERT_EQ(j["findings"].size(), findings.size());
  int warnings = 0;
  for (const auto& f : j["findings"]) {
    EXPECT_TRUE(f.contains("check") && f.contains("subject") && f.contains("message") && f.contains("remedy"));
    const std::string sev = f["severity"];
    EXPECT_TRUE(sev == "ok" || sev == "info" || sev == "warning" || sev == "error") << sev;
    if (sev == "warning") {
      ++warnings;
      EXPECT_TRUE(f["remedy"].is_string());
    }
    if (sev == "ok") {
      EXPECT_TRUE(f["remedy"].is_null());
    }
  }
  EXPECT_EQ(warnings, 1);
  EXPECT_EQ(j["summary"]["warning"], 1);
  EXPECT_EQ(j["summary"]["error"], 0);
  EXPECT_EQ(j["exit_code"], 0);
}

TEST(Doctor, TextListsFindingsWithRemediesAndASummary) {
  SystemView v = healthy();
  v.memlock_unlimited = false;
  v.memlock_bytes = 8 << 20;
  const std::string text = format_text(run_checks(v));
  EXPECT_TRUE(contains(text, "warning  memlock")) << text;
  EXPECT_TRUE(contains(text, "-> raise it")) << text;
  EXPECT_TRUE(contains(text, "1 warning(s), 0 error(s)\n")) << text;
}

TEST(Doctor, Formatting) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536ULL << 20), "1.5 GiB");
  EXPECT_EQ(minimum_driver_for(13000), "580.65.06");
  EXPECT_EQ(minimum_driver_for(12040), "525.60.13");
  EXPECT_EQ(minimum_driver_for(9000), "");
  EXPECT_EQ(nvml::normalize_pci_bus_id("00000000:17:00.0"), "0000:17:00.0");
  EXPECT_EQ(nvml::normalize_pci_bus_id("0000:AB:1F.7"), "0000:ab:1f.7");
  EXPECT_EQ(nvml::normalize_pci_bus_id("garbage"), "garbage");
  EXPECT_EQ(nvml::normalize_pci_bus_id("0000:17:00.0x"), "0000:17:00.0x");
  EXPECT_EQ(nvml::normalize_pci_bus_id("0000:17:00.8"), "0000:17:00.8");
}

TEST(DoctorProbe, Parsers) {
  EXPECT_EQ(parse_profiling_admin_only("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nX: 0\n"), true);
  EXPECT_EQ(parse_profiling_admin_only("RmProfilingAdminOnly: 0\n"), false);
  EXPECT_EQ(parse_profiling_admin_only(""), std::nullopt);
  EXPECT_EQ(parse_effective_capabilities("Name:\tx\nCapPrm:\t0\nCapEff:\t000001fffeffffff\n"), 0x1fffeffffffULL);
  EXPECT_EQ(parse_effective_capabilities("Name:\tx\n"), std::nullopt);
  EXPECT_TRUE(profiling_privileged(1ULL << 21, false, 535));    // CAP_SYS_ADMIN
  EXPECT_FALSE(profiling_privileged(1ULL << 38, false, 550));   // CAP_PERFMON before r565
  EXPECT_TRUE(profiling_privileged(1ULL << 38, false, 570));    // CAP_PERFMON from r565
  EXPECT_FALSE(profiling_privileged(0, true, 570));             // root without capabilities
  EXPECT_TRUE(profiling_privileged(std::nullopt, true, 570));   // unknown mask: euid decides
  EXPECT_EQ(decode_nccl_version(21903), "2.19.3");
  EXPECT_EQ(decode_nccl_version(2708), "2.7.8");
  EXPECT_EQ(decode_nccl_version(0), "");
  EXPECT_EQ(decode_cudnn_version(90100), "9.1.0");
  EXPECT_EQ(decode_cudnn_version(8902), "8.9.2");
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("gpubench-doctor-" + std::to_string(::getpid()) + "-" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(DoctorProbe, CpuGovernorsFromSysfs) {
  TempDir dir;
  auto governor = [&](const std::string& cpu, const std::string& gov) {
    fs::create_directories(dir.path / cpu / "cpufreq");
    std::ofstream(dir.path / cpu / "cpufreq" / "scaling_governor") << gov << "\n";
  };
  governor("cpu0", "powersave");
  governor("cpu1", "powersave");
  governor("cpu12", "performance");
  governor("cpufreq", "ignored");  // not a cpu<N> folder
  fs::create_directories(dir.path / "cpu3");  // no cpufreq: not counted
  const auto g = read_cpu_governors(dir.path);
  EXPECT_EQ(g, (std::map<std::string, int>{{"performance", 1}, {"powersave", 2}}));
  EXPECT_TRUE(read_cpu_governors(dir.path / "missing").empty());
}

TEST(DoctorProbe, DiskAtNearestExistingFolder) {
  TempDir dir;
  DiskView d = probe_disk(dir.path.string());
  EXPECT_EQ(d.checked_dir, dir.path.string());
  ASSERT_TRUE(d.free_bytes.has_value());
  EXPECT_GT(*d.total_bytes, 0u);
  EXPECT_TRUE(d.writable);
  EXPECT_TRUE(d.error.empty());

  d = probe_disk((dir.path / "not" / "yet").string());  // run would create it
  EXPECT_EQ(d.checked_dir, dir.path.string());
  EXPECT_TRUE(d.free_bytes.has_value());

  std::ofstream(dir.path / "file") << "x";
  d = probe_disk((dir.path / "file" / "sub").string());
  EXPECT_FALSE(d.error.empty());
  EXPECT_FALSE(d.free_bytes.has_value());
}

TEST(DoctorProbe, NvmlQueriesDegradeToEmpty) {
  // No GPU has this bus id, with or without a driver: nothing is invented.
  EXPECT_EQ(nvml::compute_processes("ffff:ff:1f.7"), std::nullopt);
  EXPECT_EQ(nvml::compute_processes(""), std::nullopt);
  EXPECT_EQ(nvml::device_status(1u << 20), std::nullopt);
  if (!nvml::available()) {
    EXPECT_EQ(nvml::device_count(), std::nullopt);
    EXPECT_FALSE(nvml::unavailable_reason().empty());
  }
}

TEST(DoctorProbe, RealMachineViewIsConsistent) {
  TempDir dir;
  const SystemView v = probe_system(dir.path.string());
  EXPECT_EQ(v.cuda_device_count == 0, !v.cuda_unavailable_reason.empty());
  EXPECT_EQ(v.self_pid, static_cast<unsigned>(::getpid()));
  EXPECT_EQ(v.built_with_cuda, kBuiltWithCuda);
  if (kBuiltWithCuda) {
    EXPECT_GT(v.runtime_version, 0);
    ASSERT_EQ(v.libraries.size(), 3u);
    EXPECT_TRUE(v.libraries[0].version.has_value()) << "cuBLAS is linked, so its version is known";
  } else {  // no runtime, no libraries used: nothing to probe
    EXPECT_EQ(v.runtime_version, 0);
    EXPECT_TRUE(v.libraries.empty());
    EXPECT_EQ(v.cuda_unavailable_reason, kNotBuiltWithCuda);
  }
  EXPECT_TRUE(v.memlock_unlimited || v.memlock_bytes.has_value());
  EXPECT_TRUE(v.disk.free_bytes.has_value());
  for (const GpuView& g : v.gpus) EXPECT_TRUE(g.cuda_ordinal.has_value() || g.nvml.has_value());
}


// --- containers ---------------------------------------------------------------------------------

// A container started without the GPUs: no driver library, no device node.
SystemView in_bare_container(const std::string& kind) {
  SystemView v = without_gpu("no NVIDIA driver is loaded (cudaErrorInsufficientDriver)");
  v.container.kind = kind;
  v.container.evidence = "/run/.containerenv";
  for (const char* soname : kDriverLibraries) v.container.driver_libraries.push_back({soname, ""});
  return v;
}

TEST(DoctorContainer, NothingIsSaidOutsideAContainer) {
  SystemView v = without_gpu("no NVIDIA driver is loaded (cudaErrorInsufficientDriver)");
  for (const char* soname : kDriverLibraries) v.container.driver_libraries.push_back({soname, ""});
  EXPECT_TRUE(of(run_checks(v), "container").empty());
  // The host's remedy is the driver itself.
  EXPECT_FALSE(contains(one(v, "driver").remedy, "container"));
}

TEST(DoctorContainer, StartedWithoutGpusNamesEveryMissingDriverLibraryAndHowToInjectThem) {
  const SystemView v = in_bare_container("podman");
  const Finding f = one(v, "container");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "in a podman container (/run/.containerenv)")) << f.message;
  EXPECT_TRUE(contains(f.message, "libcuda.so.1, libnvidia-ml.so.1, libnvidia-ptxjitcompiler.so.1 not found"))
      << f.message;
  EXPECT_TRUE(contains(f.message, "no /dev/nvidia* device nodes")) << f.message;
  EXPECT_TRUE(contains(f.remedy, "--gpus all")) << f.remedy;
  EXPECT_TRUE(contains(f.remedy, "--device nvidia.com/gpu=all")) << f.remedy;
  // It is the first finding, and the driver finding points at it rather than at installing a driver.
  EXPECT_EQ(run_checks(v).front().check, "container");
  EXPECT_TRUE(contains(one(v, "driver").remedy, "the container was not given the host's driver"));
  // A CPU run in a container is legitimate: a warning, not a blocking error.
  EXPECT_EQ(exit_code(run_checks(v)), 0);
}

TEST(DoctorContainer, EachWayOfStartingHasItsOwnRemedy) {
  EXPECT_TRUE(contains(one(in_bare_container("kubernetes"), "container").remedy, "nvidia.com/gpu"));
  EXPECT_TRUE(contains(one(in_bare_container("apptainer"), "container").remedy, "--nv"));
}

TEST(DoctorContainer, CudaWithoutNvmlAsksForTheUtilityCapability) {
  SystemView v = healthy();
  v.container = {"docker", "/.dockerenv",
                 {{"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}, {"libnvidia-ml.so.1", ""},
                  {"libnvidia-ptxjitcompiler.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1"}},
                 {"/dev/nvidia0", "/dev/nvidiactl"}};
  const Finding f = one(v, "container");
  EXPECT_EQ(f.severity, Severity::Warning);
  EXPECT_TRUE(contains(f.message, "but not libnvidia-ml.so.1")) << f.message;
  EXPECT_TRUE(contains(f.remedy, "NVIDIA_DRIVER_CAPABILITIES=compute,utility")) << f.remedy;
}

TEST(DoctorContainer, InjectedLibrariesAndDevicesAreListedWithTheirPaths) {
  SystemView v = healthy();
  v.container = {"kubernetes", "KUBERNETES_SERVICE_HOST is set",
                 {{"libcuda.so.1", "/usr/lib64/libcuda.so.1"}, {"libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1"},
                  {"libnvidia-ptxjitcompiler.so.1", "/usr/lib64/libnvidia-ptxjitcompiler.so.1"}},
                 {"/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl"}};
  const Finding f = one(v, "container");
  EXPECT_EQ(f.severity, Severity::Ok);
  EXPECT_TRUE(contains(f.message, "libcuda.so.1 (/usr/lib64/libcuda.so.1)")) << f.message;
  EXPECT_TRUE(contains(f.message, "device nodes /dev/nvidia-uvm, /dev/nvidia0, /dev/nvidiactl")) << f.message;
  // Without the PTX JIT compiler: still usable, said as information with its remedy.
  v.container.driver_libraries[2].path.clear();
  const Finding g = one(v, "container");
  EXPECT_EQ(g.severity, Severity::Info);
  EXPECT_TRUE(contains(g.message, "libnvidia-ptxjitcompiler.so.1 missing")) << g.message;
  // Libraries but no device nodes: the GPUs were not given.
  v.container.device_nodes.clear();
  EXPECT_EQ(one(v, "container").severity, Severity::Warning);
}

TEST(DoctorContainer, ClassifiesTheSignsKubernetesFirst) {
  ContainerSigns s;
  EXPECT_EQ(classify_container(s).first, "");
  s.init_cgroup = "12:pids:/\n0::/\n";
  EXPECT_EQ(classify_container(s).first, "");
  s.init_cgroup = "11:devices:/kubepods/besteffort/pod1234/abcd\n";
  EXPECT_EQ(classify_container(s).first, "kubernetes");
  s.init_cgroup = "11:devices:/docker/0123abcd\n";
  EXPECT_EQ(classify_container(s).first, "docker");
  s.container_env = "oci";
  EXPECT_EQ(classify_container(s), std::make_pair(std::string("oci"), std::string("container=oci")));
  s.dockerenv = true;
  EXPECT_EQ(classify_container(s).first, "docker");
  s.run_containerenv = true;
  EXPECT_EQ(classify_container(s).first, "podman");
  s.apptainer_env = true;
  EXPECT_EQ(classify_container(s).first, "apptainer");
  s.kubernetes_env = true;
  EXPECT_EQ(classify_container(s), std::make_pair(std::string("kubernetes"), std::string("KUBERNETES_SERVICE_HOST is set")));
}

}  // namespace
}  // namespace gpubench::doctor
