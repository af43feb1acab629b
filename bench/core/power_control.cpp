#include "power_control.hpp"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "errors.hpp"
#include "numbers.hpp"
#include "interrupt.hpp"
#include "nvml.hpp"

namespace gpubench {
namespace {

// What the signal handler puts back: fixed storage, no allocation. Flags are raised before a
// setting is changed, so a signal arriving in between still restores (setting the original
// limit again is harmless).
constexpr std::size_t kMaxGpus = 64;
struct Saved {
  std::atomic<void*> handle{nullptr};
  std::atomic<unsigned> original_mw{0};
  std::atomic<bool> limit_changed{false};
  std::atomic<bool> clocks_locked{false};
};
Saved g_saved[kMaxGpus];
std::atomic<bool> g_active{false};

void restore_saved() {
  for (Saved& s : g_saved) {
    nvml::Handle h{s.handle.load()};
    if (!h.device) continue;
    if (s.limit_changed.exchange(false)) (void)nvml::set_power_limit(h, s.original_mw.load());
    if (s.clocks_locked.exchange(false)) (void)nvml::reset_gpu_clocks(h);
  }
}

// The command line's one number syntax (numbers.hpp); `shown` is the item as the user typed it.
double parse_number(const std::string& number, const std::string& option, const std::string& shown, const char* unit_hint) {
  const std::optional<double> v = read_real(number);
  if (!v) throw UsageError(fmt::format("{} '{}': not a number{}", option, shown, unit_hint));
  return *v;
}

std::string w(unsigned mw) { return fmt::format("{:g} W", mw / 1000.0); }

std::string refusal(int code) {
  std::string s = "off: " + nvml::error_name(code);
  if (code == nvml::kErrorNoPermission) s += ", run as root or set by an administrator";
  return s;
}

}  // namespace

std::string PowerStep::label() const {
  switch (kind) {
    case Kind::PercentOfDefault: return fmt::format("{:g}%", value);
    case Kind::Watts: return fmt::format("{:g} W", value);
    case Kind::ClockMhz: return fmt::format("{:g} MHz", value);
  }
  return "";
}

std::vector<PowerStep> parse_power_limits(const std::string& text) {
  const std::string option = "--power-limits";
  std::vector<PowerStep> steps;
  for (const std::string& item : parse_list(text, option)) {
    PowerStep s;
    std::string number = item;
    if (number.back() == '%') {
      number.pop_back();
      s.kind = PowerStep::Kind::PercentOfDefault;
      s.value = parse_number(number, option, item, " (expected a percent of the default limit, e.g. 90%, or watts)");
      if (!(s.value > 0 && s.value <= 100)) {
        throw UsageError(fmt::format("{} '{}': a percent of the default limit must be above 0 and at most 100", option,
                                     item));
      }
    } else {
      if (number.back() == 'W' || number.back() == 'w') number.pop_back();
      s.kind = PowerStep::Kind::Watts;
      s.value = parse_number(number, option, item, " (expected watts, e.g. 300, or a percent, e.g. 90%)");
      if (!(s.value > 0 && s.value <= 10000)) {
        throw UsageError(fmt::format("{} '{}': watts must be above 0 and at most 10000", option, item));
      }
    }
    steps.push_back(s);
  }
  return steps;
}

std::vector<PowerStep> parse_lock_clocks(const std::string& text) {
  const std::string option = "--lock-clocks";
  std::vector<PowerStep> steps;
  for (const std::string& item : parse_list(text, option)) {
    PowerStep s;
    s.kind = PowerStep::Kind::ClockMhz;
    s.value = parse_number(item, option, item, " (expected an SM clock in MHz, e.g. 1410)");
    if (s.value != std::floor(s.value) || s.value < 1 || s.value > 10000) {
      throw UsageError(fmt::format("{} '{}': an SM clock is a whole number of MHz from 1 to 10000", option, item));
    }
    steps.push_back(s);
  }
  return steps;
}

PowerControl::PowerControl(const std::vector<PowerTarget>& gpus, bool install_handlers)
    : install_handlers_(install_handlers) {
  if (g_active.exchange(true)) throw std::logic_error("PowerControl: one at a time per process");
  if (gpus.empty()) {
    unavailable_ = "off: no GPU selected (a CPU's power is not set through NVML)";
  } else if (gpus.size() > kMaxGpus) {
    unavailable_ = fmt::format("off: more than {} GPUs in one process", kMaxGpus);
  } else if (!nvml::available()) {
    unavailable_ = "off: " + nvml::unavailable_reason();
  }
  if (!unavailable_.empty()) return;
  for (const PowerTarget& t : gpus) {
    const auto h = nvml::find_by_pci(t.pci_bus_id);
    if (!h) {
      unavailable_ = fmt::format("off: NVML has no GPU with PCI bus id {} ({})", t.pci_bus_id, t.device);
      gpus_.clear();
      return;
    }
    Gpu g;
    g.target = t;
    g.handle = h->device;
    const nvml::PowerLimits p = nvml::power_limits(*h);
    g.original_mw = p.current_mw;
    g.default_mw = p.default_mw;
    g.min_mw = p.min_mw;
    g.max_mw = p.max_mw;
    gpus_.push_back(g);
  }
}

PowerControl::~PowerControl() {
  restore();
  g_active.store(false);
}

void PowerControl::restore() {
  InterruptsHeld hold;  // a signal now would find the registry half cleared
  restore_saved();
  set_interrupt_restore(nullptr);
  for (Saved& s : g_saved) s.handle.store(nullptr);
}

PowerControl::Applied PowerControl::apply(const PowerStep& step) {
  Applied a;
  const bool clock = step.kind == PowerStep::Kind::ClockMhz;
  auto current_limits = [&] {
    a.limit_w.clear();
    for (const Gpu& g : gpus_) {
      const auto mw = nvml::power_limits(nvml::Handle{g.handle}).current_mw;
      a.limit_w.push_back(mw ? std::optional<double>(*mw / 1000.0) : std::nullopt);
    }
  };
  std::string& sticky = clock ? clocks_off_ : limit_off_;
  if (!unavailable_.empty() || !sticky.empty()) {
    a.status = unavailable_.empty() ? sticky : unavailable_;
    current_limits();
    return a;
  }
  // The targets in mW (or MHz), checked against each board's range before anything changes.
  std::vector<unsigned> target(gpus_.size(), 0);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    const Gpu& g = gpus_[i];
    if (clock) {
      target[i] = static_cast<unsigned>(step.value);
      continue;
    }
    double mw = step.value * 1000;
    if (step.kind == PowerStep::Kind::PercentOfDefault) {
      const std::optional<unsigned> base = g.default_mw ? g.default_mw : g.original_mw;
      if (!base) {
        a.status = fmt::format("off: NVML reports no default power limit for {}", g.target.device);
        current_limits();
        return a;
      }
      mw = *base * step.value / 100;
    }
    target[i] = static_cast<unsigned>(std::lround(mw));
    if ((g.min_mw && target[i] < *g.min_mw) || (g.max_mw && target[i] > *g.max_mw)) {
      a.status = fmt::format("off: {} is {} on {}, outside the board's range {} to {}", step.label(), w(target[i]),
                             g.target.device, g.min_mw ? w(*g.min_mw) : "?", g.max_mw ? w(*g.max_mw) : "?");
      current_limits();
      return a;
    }
  }
  // Register for the signal path first, then change.
  {
    InterruptsHeld hold;
    if (install_handlers_ && !interrupt_handlers_installed()) install_interrupt_handlers("", false);
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      g_saved[i].handle.store(gpus_[i].handle);
      g_saved[i].original_mw.store(gpus_[i].original_mw.value_or(0));
    }
    set_interrupt_restore(restore_saved);
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    const nvml::Handle h{gpus_[i].handle};
    int rc = 0;
    std::atomic<bool>& flag = clock ? g_saved[i].clocks_locked : g_saved[i].limit_changed;
    const bool was = flag.exchange(true);
    if (clock) {
      rc = nvml::lock_gpu_clocks(h, target[i], target[i]);
    } else if (gpus_[i].original_mw) {
      rc = nvml::set_power_limit(h, target[i]);
    } else {
      rc = nvml::kErrorFunctionNotFound;  // no original to restore: never change it
    }
    if (rc != 0) {
      flag.store(was);  // refused: this GPU's setting did not change
      sticky = refusal(rc);
      restore();  // the original settings for the rest of the sweep
      a.status = sticky;
      current_limits();
      return a;
    }
  }
  a.status = "on";
  if (clock) a.locked_mhz = target.empty() ? 0 : target[0];
  current_limits();
  return a;
}

nlohmann::ordered_json PowerControl::original_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto watts = [](std::optional<unsigned> mw) {
    return mw ? nlohmann::ordered_json(*mw / 1000.0) : nlohmann::ordered_json(nullptr);
  };
  j["gpus"] = nlohmann::ordered_json::array();
  for (const Gpu& g : gpus_) {
    j["gpus"].push_back({{"device", g.target.device},
                         {"pci_bus_id", g.target.pci_bus_id},
                         {"original_limit_w", watts(g.original_mw)},
                         {"default_limit_w", watts(g.default_mw)},
                         {"min_limit_w", watts(g.min_mw)},
                         {"max_limit_w", watts(g.max_mw)}});
  }
  if (!unavailable_.empty()) j["status"] = unavailable_;
  j["restore"] = "original power limits set back and locked clocks reset at the end, on failure and on "
                 "SIGINT/SIGTERM/SIGHUP; after SIGKILL: nvidia-smi -pl <original W> and nvidia-smi -rgc";
  return j;
}

std::string PowerControl::status_line(const PowerStep& step, const std::string& status) {
  return (step.kind == PowerStep::Kind::ClockMhz ? "lock clocks: " : "power limit: ") + status;
}

}  // namespace gpubench
