#pragma once
// A suite's own phases (forward, backward, optimizer, ...) inside the harness's phases, so
// instruments (NVTX ranges, traces) can show them. Cases open one with a scope:
//
//   { gpubench::PhaseScope p("forward"); enqueue_forward(); }
//
// Outside a case (unit tests, no instruments) a scope does nothing. The harness sets the
// instruments that observe the running case; cases never see the instruments themselves.
#include <vector>

namespace gpubench {

class Instrument;

class PhaseScope {
 public:
  explicit PhaseScope(const char* name);  // a null name opens nothing
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  const std::vector<Instrument*>* instruments_;
};

namespace detail {
// Set by the harness for the duration of one case on the thread that runs it (nullptr after).
void set_phase_instruments(const std::vector<Instrument*>* instruments);
}  // namespace detail

}  // namespace gpubench
