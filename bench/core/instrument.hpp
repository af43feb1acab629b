#pragma once
// Instruments observe cases through these hooks (NVTX ranges now; CUPTI and NVML later) and
// may add fields to a case's result under gpubench.profile.<instrument>. Suites never call
// them; the harness does, around each phase of each case.
#include <string>

#include <nlohmann/json.hpp>

namespace gpubench {

class Instrument {
 public:
  virtual ~Instrument() = default;
  virtual std::string name() const = 0;
  virtual void begin_case(const std::string& case_name) { (void)case_name; }
  // Phases: "setup", "verify", "warm-up", "measure".
  virtual void begin_phase(const char* phase) { (void)phase; }
  virtual void end_phase() {}
  // Adds this instrument's fields for the case to `profile` (left empty: nothing is written).
  virtual void end_case(nlohmann::ordered_json& profile) { (void)profile; }
};

}  // namespace gpubench
