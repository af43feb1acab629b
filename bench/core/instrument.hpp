#pragma once
// Instruments observe cases through these hooks (NVTX ranges, CUPTI trace and metrics, NVML
// telemetry, the host sampler; see profilers/) and may add fields to a case's result under
// gpubench.profile.<instrument>. Suites never call them; the harness does, around each phase
// of each case.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "case.hpp"
#include "device.hpp"
#include "timer.hpp"

namespace gpubench {

struct CaseInfo {
  std::string name;
  std::string suite;
  const DeviceInfo* device = nullptr;  // the device the case runs on
};

// What the harness measured, so an instrument can relate what it saw to the work (energy per
// run, perf per watt).
struct CaseOutcome {
  std::string status = "ok";  // ok | skipped | failed
  Metrics metrics;            // per run
  std::int64_t runs = 0;      // timed runs (0: the case produced no time)
  double mean_s = 0;          // mean seconds per run
};

// One more run of the measured case, outside timing: for instruments that need their own
// passes (hardware counters replay the work once per pass).
struct Replay {
  std::function<void()> run;          // enqueue (GPU) or perform (CPU) one run
  std::function<void()> synchronize;  // wait for what run() queued
};

class Instrument {
 public:
  virtual ~Instrument() = default;
  virtual std::string name() const = 0;
  // "on", or "off: <reason>" when the instrument cannot work here (no device, no driver, no
  // permission); written to the results context under gpubench.profile.<name>.
  virtual std::string status() const { return "on"; }
  virtual void begin_case(const CaseInfo& info) { (void)info; }
  // Phases: "setup", "verify", "warm-up", "measure", "replay", and a suite's own (PhaseScope).
  virtual void begin_phase(const char* phase) { (void)phase; }
  virtual void end_phase() {}
  // May wrap or replace the timer the case measures with (e.g. CUPTI kernel time); returns
  // `base` to keep it.
  virtual std::unique_ptr<Timer> timer(std::unique_ptr<Timer> base) { return base; }
  // Called once after a case was measured, in the "replay" phase, when wants_replay();
  // `replay.run` may be called as often as the instrument needs. Never during timing.
  virtual bool wants_replay() const { return false; }
  virtual void replay(const Replay& replay) { (void)replay; }
  // Adds this instrument's fields for the case to `profile` (left empty: nothing is written).
  virtual void end_case(const CaseOutcome& outcome, nlohmann::ordered_json& profile) {
    (void)outcome;
    (void)profile;
  }
};

}  // namespace gpubench
