#include "phase.hpp"

#include "instrument.hpp"

namespace gpubench {
namespace {
thread_local const std::vector<Instrument*>* current = nullptr;
}  // namespace

namespace detail {
void set_phase_instruments(const std::vector<Instrument*>* instruments) { current = instruments; }
}  // namespace detail

PhaseScope::PhaseScope(const char* name) : instruments_(name != nullptr ? current : nullptr) {
  if (instruments_ == nullptr) return;
  for (Instrument* i : *instruments_) i->begin_phase(name);
}

PhaseScope::~PhaseScope() {
  if (instruments_ == nullptr) return;
  for (auto it = instruments_->rbegin(); it != instruments_->rend(); ++it) (*it)->end_phase();
}

}  // namespace gpubench
