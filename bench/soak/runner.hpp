#pragma once
// The soak loop: every selected device runs its load at once, one worker thread per device,
// in timed batches of the case's run(); every `verify_every_s` one run's answer is checked
// against the reference (Case::verify), so silent corruption fails the run. The calling thread
// samples every interval: each device's throughput over the batches that finished in it, NVML
// telemetry and health counters (GPUs) and the host's figures.
//
// A sweep (power limits, locked clocks) is a loop over run_phase() calls with a label each; the
// cases are set up once, on first use, and kept across phases.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/core/plan.hpp"
#include "bench/soak/loads.hpp"
#include "bench/soak/series.hpp"

namespace gpubench::soak {

struct SoakOptions {
  std::vector<std::string> loads;  // parse_load(): one, or the three of mixed (taken in turn)
  double verify_every_s = 10;
  PeakLookup peak;                 // datasheet peaks, for the gemm precision
};

// What a device runs for one load, with the case's figures per run for the summary entries.
struct LoadInfo {
  std::string device, load;
  PlannedCase planned;
  std::string unit;              // of the rate
  double work_per_run = 0;       // in the unit's numerator (1e12 FLOP, 1e9 B, tokens)
  bool ready = false;            // set up and verified once
  std::string note;              // how the case was chosen (the gemm precision)
  Metrics metrics;               // the case's work per run (set with ready)
};

class Soak {
 public:
  Soak(std::vector<DeviceInfo> devices, SoakOptions options);
  ~Soak();
  Soak(const Soak&) = delete;
  Soak& operator=(const Soak&) = delete;

  // The cases planned per device and load (skip_reason set where a device cannot run one).
  std::vector<LoadInfo> loads() const;
  // XID watching: "on" or "off: <why>" ("off: no GPU" on the CPU).
  std::string xid_status() const;

  // Runs the load on every device for `duration_s` (or until `stop` becomes true, or every
  // device has stopped on an error), calling `on_samples` with each interval's samples as they
  // are taken. Sample times are `t_offset_s` plus seconds since the phase started. Returns the
  // phase's samples.
  std::vector<Sample> run_phase(double duration_s, double interval_s, const std::string& label, double t_offset_s,
                                const std::atomic<bool>& stop,
                                const std::function<void(const std::vector<Sample>&)>& on_samples);

  // The mean seconds per run of each (device, load) over the given samples (the summary entries).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// --duration and --sample-interval values: a number with a unit, ms, s, m or h ("30s", "10m",
// "2h", "1.5h", "500ms"); a bare number is seconds. UsageError naming `option` for anything
// else, for zero, negative or non-finite values.
double parse_duration(const std::string& text, const char* option);

}  // namespace gpubench::soak
