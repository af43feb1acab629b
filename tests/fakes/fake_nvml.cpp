// A stand-in for libnvidia-ml.so.1, for end-to-end tests of the NVML binding and `gpubench
// doctor` on machines without a driver. Loaded by putting its folder on LD_LIBRARY_PATH. It
// reports one GPU ("Fake GPU" at 0000:17:00.0) whose state the tests know; every value here
// is a test fixture, not a measurement.
//
// Two builds: the default one exports the current entry points (nvmlDeviceGetComputeRunning
// Processes_v3 with the four-field process record, next to nvmlDeviceGetRunningProcessDetail
// List); FAKE_NVML_LEGACY exports what an old driver has plus the r530-era _v3 whose record had
// a fifth field, so a binding that picked _v3 there would misread the list.
//
// FAKE_NVML_UNCORRECTED_ECC=N in the environment makes it report N uncorrectable errors.
// Telemetry: the GPU draws FAKE_NVML_POWER_MW milliwatts (default 250000); its total-energy
// counter starts at FAKE_NVML_ENERGY_START_MJ (default 1000000; set it near 2^64 to test the
// wrap) and grows by that power over real time; FAKE_NVML_CLOCK_REASONS sets the clock event
// reason mask (default 0x1, idle); utilization is 87 % (GPU) and 40 % (memory).
//
// Power limit and locked clocks, kept like a driver keeps them (across processes): with
// FAKE_NVML_STATE=FILE the current limit and lock live in FILE ("limit_mw N", "locked_mhz
// MIN MAX" or "locked_mhz none"), and every set/reset call is appended to FILE.log as one line
// ("set_power_limit 630000", "lock_clocks 1410 1410", "reset_clocks", with " refused" when
// refused). Without FAKE_NVML_STATE the state lives in this process. The limit starts at
// 450 W; the default limit is 700 W and the allowed range 200-700 W.
// FAKE_NVML_NO_PERMISSION=1 refuses every change with NVML_ERROR_NO_PERMISSION.
// Soak health: memory temperature 52 C (a field value), fan 35 %, enforced power limit 450 W,
// PCIe replays 2, retired pages 1 (single-bit) and 0 (double-bit), remapped rows 4 corrected and
// 0 uncorrected; FAKE_NVML_XIDS="79,48" queues those XID events for the first event-set wait
// (each reported once per process).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using Return = int;
struct nvmlDevice_st {
  int unused;
};
nvmlDevice_st the_gpu;

constexpr Return kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNoPermission = 4, kNotFound = 6,
                 kInsufficientSize = 7, kUnknown = 999;

bool is_ours(nvmlDevice_st* d) { return d == &the_gpu; }

unsigned long long env_or(const char* name, unsigned long long fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 0) : fallback;
}
const auto loaded_at = std::chrono::steady_clock::now();

struct ProcessV1 {
  unsigned pid;
  unsigned long long used;
};
struct ProcessV2 {
  unsigned pid;
  unsigned long long used;
  unsigned gpu_instance, compute_instance;
};
struct ProcessR530 {
  unsigned pid;
  unsigned long long used;
  unsigned gpu_instance, compute_instance;
  unsigned long long used_cc_protected;
};

constexpr unsigned kProcesses = 3;
// The calling process itself (gpubench, which must leave itself out), pid 1 with 1 GiB, and a
// pid that no longer exists whose memory NVML cannot tell.
void process(unsigned i, unsigned& pid, unsigned long long& used) {
  const unsigned pids[kProcesses] = {static_cast<unsigned>(::getpid()), 1u, 4000000u};
  const unsigned long long mem[kProcesses] = {512ULL << 20, 1ULL << 30, ~0ULL};
  pid = pids[i];
  used = mem[i];
}

template <typename Record>
Return list_processes(nvmlDevice_st* d, unsigned* count, Record* infos) {
  if (!is_ours(d) || !count) return kInvalidArgument;
  if (*count < kProcesses || !infos) {
    *count = kProcesses;
    return kInsufficientSize;
  }
  for (unsigned i = 0; i < kProcesses; ++i) {
    std::memset(&infos[i], 0xab, sizeof(Record));  // padding and extra fields hold junk
    process(i, infos[i].pid, infos[i].used);
  }
  *count = kProcesses;
  return kSuccess;
}

// The power state (see the top of the file).
struct PowerState {
  unsigned limit_mw = 450000;
  unsigned locked_min = 0, locked_max = 0;  // 0: not locked
};
PowerState process_state;

PowerState load_state() {
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (!path) return process_state;
  PowerState st;
  if (FILE* f = std::fopen(path, "r")) {
    char key[32] = {};
    char a[32] = {}, b[32] = {};
    while (std::fscanf(f, "%31s %31s", key, a) == 2) {
      if (std::strcmp(key, "limit_mw") == 0) st.limit_mw = static_cast<unsigned>(std::strtoul(a, nullptr, 10));
      if (std::strcmp(key, "locked_mhz") == 0 && std::strcmp(a, "none") != 0 && std::fscanf(f, "%31s", b) == 1) {
        st.locked_min = static_cast<unsigned>(std::strtoul(a, nullptr, 10));
        st.locked_max = static_cast<unsigned>(std::strtoul(b, nullptr, 10));
      }
    }
    std::fclose(f);
  }
  return st;
}

void save_state(const PowerState& st) {
  process_state = st;
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (!path) return;
  const std::string tmp = std::string(path) + ".tmp";
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    if (st.locked_min == 0) std::fprintf(f, "limit_mw %u\nlocked_mhz none\n", st.limit_mw);
    else std::fprintf(f, "limit_mw %u\nlocked_mhz %u %u\n", st.limit_mw, st.locked_min, st.locked_max);
    std::fclose(f);
    std::rename(tmp.c_str(), path);
  }
}

// Appends one line to FAKE_NVML_STATE.log; plain system calls, as a signal handler may be
// the caller.
void log_call(const char* line, bool refused) {
  const char* path = std::getenv("FAKE_NVML_STATE");
  if (!path) return;
  char file[4096];
  std::snprintf(file, sizeof file, "%s.log", path);
  char text[160];
  const int n = std::snprintf(text, sizeof text, "%s%s\n", line, refused ? " refused" : "");
  const int fd = ::open(file, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  (void)!::write(fd, text, static_cast<std::size_t>(n));
  ::close(fd);
}

bool refuse() {
  const char* v = std::getenv("FAKE_NVML_NO_PERMISSION");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace

extern "C" {

Return nvmlInit_v2() { return kSuccess; }
Return nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  if (len < 10) return kInsufficientSize;
  std::strcpy(buf, "580.65.06");
  return kSuccess;
}
Return nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 1;
  return kSuccess;
}
Return nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** d) {
  if (index != 0) return kInvalidArgument;
  *d = &the_gpu;
  return kSuccess;
}
Return nvmlDeviceGetHandleByPciBusId_v2(const char* id, nvmlDevice_st** d) {
  if (std::strcmp(id, "0000:17:00.0") != 0 && std::strcmp(id, "00000000:17:00.0") != 0) return kNotFound;
  *d = &the_gpu;
  return kSuccess;
}
Return nvmlDeviceGetName(nvmlDevice_st* d, char* buf, unsigned len) {
  if (!is_ours(d) || len < 9) return kInvalidArgument;
  std::strcpy(buf, "Fake GPU");
  return kSuccess;
}
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_sub_system_id;
  char bus_id[32];
};
Return nvmlDeviceGetPciInfo_v3(nvmlDevice_st* d, PciInfo* p) {
  if (!is_ours(d)) return kInvalidArgument;
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->bus_id_legacy, "0000:17:00.0");
  p->bus = 0x17;
  std::strcpy(p->bus_id, "00000000:17:00.0");
  return kSuccess;
}
Return nvmlDeviceGetClockInfo(nvmlDevice_st* d, int type, unsigned* mhz) {
  if (!is_ours(d)) return kInvalidArgument;
  *mhz = type == 2 ? 2619 : 345;
  return kSuccess;
}
Return nvmlDeviceGetMaxClockInfo(nvmlDevice_st* d, int type, unsigned* mhz) {
  if (!is_ours(d)) return kInvalidArgument;
  *mhz = type == 2 ? 2619 : 1980;
  return kSuccess;
}
Return nvmlDeviceGetApplicationsClock(nvmlDevice_st*, int type, unsigned* mhz) {
  *mhz = type == 2 ? 2619 : 1755;
  return kSuccess;
}
Return nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_st*, int type, unsigned* mhz) {
  *mhz = type == 2 ? 2619 : 1755;
  return kSuccess;
}
// Degraded width (x8 of x16) and an idle GPU.
Return nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_st*, unsigned* v) { return *v = 4, kSuccess; }
Return nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_st*, unsigned* v) { return *v = 5, kSuccess; }
Return nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_st*, unsigned* v) { return *v = 8, kSuccess; }
Return nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_st*, unsigned* v) { return *v = 16, kSuccess; }
Return nvmlDeviceGetPersistenceMode(nvmlDevice_st*, int* mode) { return *mode = 1, kSuccess; }
Return nvmlDeviceGetEccMode(nvmlDevice_st*, int* current, int* pending) {
  *current = 1, *pending = 1;
  return kSuccess;
}
Return nvmlDeviceGetTotalEccErrors(nvmlDevice_st*, int type, int counter, unsigned long long* n) {
  const char* uncorrected = std::getenv("FAKE_NVML_UNCORRECTED_ECC");
  if (type == 1) *n = counter == 0 && uncorrected ? std::strtoull(uncorrected, nullptr, 10) : 0;
  else *n = counter == 0 ? 3 : 40;
  return kSuccess;
}
Return nvmlDeviceGetMigMode(nvmlDevice_st*, unsigned*, unsigned*) { return kNotSupported; }
#ifdef FAKE_NVML_LEGACY
Return nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_st*, unsigned long long* r) {
  return *r = env_or("FAKE_NVML_CLOCK_REASONS", 0x1), kSuccess;
}
#else
Return nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_st*, unsigned long long* r) {
  return *r = env_or("FAKE_NVML_CLOCK_REASONS", 0x1), kSuccess;
}
#endif
Return nvmlDeviceGetPowerUsage(nvmlDevice_st* d, unsigned* mw) {
  if (!is_ours(d)) return kInvalidArgument;
  return *mw = static_cast<unsigned>(env_or("FAKE_NVML_POWER_MW", 250000)), kSuccess;
}
Return nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_st* d, unsigned long long* mj) {
  if (!is_ours(d)) return kInvalidArgument;
  // The counter runs from its start value since that value was first seen (so a test setting
  // a start near 2^64 gets the wrap a few milliseconds later, inside its case).
  static std::string start_text;
  static auto since = loaded_at;
  const char* start = std::getenv("FAKE_NVML_ENERGY_START_MJ");
  if ((start ? start : "") != start_text) {
    start_text = start ? start : "";
    since = std::chrono::steady_clock::now();
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
  const double watts = static_cast<double>(env_or("FAKE_NVML_POWER_MW", 250000)) / 1000;
  // mJ = W * ms; unsigned arithmetic wraps at 2^64 as a real counter would.
  *mj = env_or("FAKE_NVML_ENERGY_START_MJ", 1000000) + static_cast<unsigned long long>(watts * ms);
  return kSuccess;
}
struct Utilization {
  unsigned gpu, memory;
};
Return nvmlDeviceGetUtilizationRates(nvmlDevice_st* d, Utilization* u) {
  if (!is_ours(d)) return kInvalidArgument;
  u->gpu = 87, u->memory = 40;
  return kSuccess;
}
Return nvmlDeviceGetPowerManagementLimit(nvmlDevice_st* d, unsigned* mw) {
  if (!is_ours(d)) return kInvalidArgument;
  return *mw = load_state().limit_mw, kSuccess;
}
Return nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_st* d, unsigned* lo, unsigned* hi) {
  if (!is_ours(d)) return kInvalidArgument;
  *lo = 200000, *hi = 700000;
  return kSuccess;
}
Return nvmlDeviceSetPowerManagementLimit(nvmlDevice_st* d, unsigned mw) {
  if (!is_ours(d)) return kInvalidArgument;
  char line[64];
  std::snprintf(line, sizeof line, "set_power_limit %u", mw);
  if (refuse()) return log_call(line, true), kNoPermission;
  if (mw < 200000 || mw > 700000) return log_call(line, true), kInvalidArgument;
  PowerState st = load_state();
  st.limit_mw = mw;
  save_state(st);
  log_call(line, false);
  return kSuccess;
}
Return nvmlDeviceSetGpuLockedClocks(nvmlDevice_st* d, unsigned min_mhz, unsigned max_mhz) {
  if (!is_ours(d)) return kInvalidArgument;
  char line[64];
  std::snprintf(line, sizeof line, "lock_clocks %u %u", min_mhz, max_mhz);
  if (refuse()) return log_call(line, true), kNoPermission;
  PowerState st = load_state();
  st.locked_min = min_mhz, st.locked_max = max_mhz;
  save_state(st);
  log_call(line, false);
  return kSuccess;
}
Return nvmlDeviceResetGpuLockedClocks(nvmlDevice_st* d) {
  if (!is_ours(d)) return kInvalidArgument;
  if (refuse()) return log_call("reset_clocks", true), kNoPermission;
  PowerState st = load_state();
  st.locked_min = st.locked_max = 0;
  save_state(st);
  log_call("reset_clocks", false);
  return kSuccess;
}
Return nvmlDeviceGetUUID(nvmlDevice_st* d, char* buf, unsigned len) {
  if (!is_ours(d) || len < 41) return kInsufficientSize;
  std::strcpy(buf, "GPU-0f0e0d0c-0b0a-0908-0706-050403020100");
  return kSuccess;
}
Return nvmlDeviceGetSerial(nvmlDevice_st* d, char* buf, unsigned len) {
  if (!is_ours(d) || len < 14) return kInsufficientSize;
  std::strcpy(buf, "1650924001234");
  return kSuccess;
}
struct FieldValue {
  unsigned field_id, scope_id;
  long long timestamp, latency_us;
  int value_type;
  Return nvml_return;
  unsigned long long value;
};
Return nvmlDeviceGetFieldValues(nvmlDevice_st* d, int count, FieldValue* values) {
  if (!is_ours(d) || count < 0) return kInvalidArgument;
  for (int i = 0; i < count; ++i) {
    FieldValue& v = values[i];
    if (v.field_id == 82) {  // NVML_FI_DEV_MEMORY_TEMP
      v.value_type = 1;      // unsigned int
      v.nvml_return = kSuccess;
      v.value = 0;
      const unsigned c = 52;
      std::memcpy(&v.value, &c, sizeof c);
    } else {
      v.nvml_return = kNotSupported;
    }
  }
  return kSuccess;
}
Return nvmlDeviceGetFanSpeed(nvmlDevice_st* d, unsigned* pct) { return is_ours(d) ? (*pct = 35, kSuccess) : kInvalidArgument; }
Return nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_st* d, unsigned* mw) {
  return is_ours(d) ? (*mw = load_state().limit_mw, kSuccess) : kInvalidArgument;  // follows the set limit
}
Return nvmlDeviceGetPcieReplayCounter(nvmlDevice_st* d, unsigned* n) { return is_ours(d) ? (*n = 2, kSuccess) : kInvalidArgument; }
Return nvmlDeviceGetRetiredPages(nvmlDevice_st* d, int cause, unsigned* count, unsigned long long* addresses) {
  if (!is_ours(d) || !count) return kInvalidArgument;
  const unsigned n = cause == 0 ? 1 : 0;
  if (*count < n) {
    *count = n;
    return kInsufficientSize;
  }
  for (unsigned i = 0; i < n && addresses; ++i) addresses[i] = 0x1000;
  *count = n;
  return kSuccess;
}
Return nvmlDeviceGetRemappedRows(nvmlDevice_st* d, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failed) {
  if (!is_ours(d)) return kInvalidArgument;
  *corr = 4, *unc = 0, *pending = 0, *failed = 0;
  return kSuccess;
}
struct nvmlEventSet_st {
  unsigned long long types = 0;
};
nvmlEventSet_st the_set;
struct EventData {
  nvmlDevice_st* device;
  unsigned long long event_type, event_data;
  unsigned gpu_instance, compute_instance;
};
Return nvmlEventSetCreate(nvmlEventSet_st** set) { return *set = &the_set, kSuccess; }
Return nvmlDeviceRegisterEvents(nvmlDevice_st* d, unsigned long long types, nvmlEventSet_st* set) {
  if (!is_ours(d) || set != &the_set) return kInvalidArgument;
  set->types |= types;
  return kSuccess;
}
Return nvmlEventSetWait_v2(nvmlEventSet_st* set, EventData* data, unsigned) {
  constexpr Return kTimeout = 10;
  static std::string pending = std::getenv("FAKE_NVML_XIDS") ? std::getenv("FAKE_NVML_XIDS") : "";
  if (set != &the_set || !(set->types & 0x8) || pending.empty()) return kTimeout;
  const std::size_t comma = pending.find(',');
  const unsigned long long xid = std::strtoull(pending.substr(0, comma).c_str(), nullptr, 10);
  pending = comma == std::string::npos ? "" : pending.substr(comma + 1);
  *data = EventData{&the_gpu, 0x8, xid, 0xffffffffu, 0xffffffffu};
  return kSuccess;
}
Return nvmlEventSetFree(nvmlEventSet_st*) { return kSuccess; }
Return nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_st*, unsigned* mw) { return *mw = 700000, kSuccess; }
Return nvmlDeviceGetTemperature(nvmlDevice_st*, int sensor, unsigned* c) {
  if (sensor != 0) return kInvalidArgument;
  return *c = 41, kSuccess;
}
Return nvmlDeviceGetTemperatureThreshold(nvmlDevice_st*, int type, unsigned* c) {
  if (type != 1) return kNotSupported;
  return *c = 90, kSuccess;
}
Return nvmlDeviceGetCpuAffinity(nvmlDevice_st*, unsigned size, unsigned long* set) {
  if (size < 1) return kInvalidArgument;
  std::memset(set, 0, size * sizeof(unsigned long));
  set[0] = 0x3;  // CPUs 0 and 1
  return kSuccess;
}
#ifdef FAKE_NVML_LEGACY
Return nvmlDeviceGetComputeRunningProcesses(nvmlDevice_st* d, unsigned* n, ProcessV1* p) {
  return list_processes(d, n, p);
}
Return nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_st* d, unsigned* n, ProcessR530* p) {
  return list_processes(d, n, p);
}
#else
Return nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_st* d, unsigned* n, ProcessV2* p) {
  return list_processes(d, n, p);
}
Return nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_st*, unsigned*, ProcessV2*) { return kUnknown; }
Return nvmlDeviceGetRunningProcessDetailList(nvmlDevice_st*, void*) { return kNotSupported; }
#endif

}  // extern "C"
