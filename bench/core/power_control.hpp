#pragma once
// Power-limit and clock sweeps (`gpubench soak --power-limits 100%,90%,80%` or watts, and
// `--lock-clocks MHz,...`): parsing the settings, and PowerControl, which changes the power
// limit of a set of GPUs or locks their SM clocks through NVML and always puts the original
// state back:
// - when it is destroyed (the normal end, an exception unwinding, a failing phase),
// - from the interrupt handler on SIGINT, SIGTERM and SIGHUP (interrupt.hpp: the handler calls
//   the registered restore before it exits; PowerControl installs the handlers if the command
//   has not).
// SIGKILL cannot be caught: the original limits are in the results file (original_json) and
// `nvidia-smi -pl <W>` / `nvidia-smi -rgc` put them back by hand.
//
// Changing limits needs root or an administrator's grant. A refusal is not an error: the sweep
// goes on at the current settings and says so in one line
// ("power limit: off: NVML_ERROR_NO_PERMISSION, run as root or set by an administrator").
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

// One step of a sweep: a power limit (percent of the board's default limit, or watts) or a
// locked SM clock.
struct PowerStep {
  enum class Kind { PercentOfDefault, Watts, ClockMhz };
  Kind kind = Kind::Watts;
  double value = 0;
  std::string label() const;  // "90%", "300 W", "1410 MHz"
};

// "100%,90%,80%" or "700,500" / "700W,500W" (watts). UsageError naming the bad item: empty,
// not a number, a percent outside (0, 100] or watts outside (0, 10000].
std::vector<PowerStep> parse_power_limits(const std::string& text);
// "1980,1410,1095" (MHz, 1 to 10000). UsageError naming the bad item.
std::vector<PowerStep> parse_lock_clocks(const std::string& text);

// A GPU whose settings the sweep changes: the run's device id ("cuda:0") and PCI bus id.
struct PowerTarget {
  std::string device;
  std::string pci_bus_id;
};

class PowerControl {
 public:
  // Finds the GPUs in NVML and records their current limits. One PowerControl at a time per
  // process (a second throws std::logic_error): the signal path has one registry.
  // `install_handlers`: install interrupt.hpp's handlers when the command has not; a command
  // with its own graceful signal handling (soak: stop, write, return) passes false, lets the
  // destructor restore, and calls run_interrupt_restore() on its last-resort path.
  explicit PowerControl(const std::vector<PowerTarget>& gpus, bool install_handlers = true);
  ~PowerControl();
  PowerControl(const PowerControl&) = delete;
  PowerControl& operator=(const PowerControl&) = delete;

  struct Applied {
    // "on", or "off: <why>" when nothing was changed (the step runs at the current settings).
    std::string status;
    // Per GPU (constructor order): the power limit in force after the step, in watts, where
    // NVML reports it, and the locked SM clock when one was set.
    std::vector<std::optional<double>> limit_w;
    std::optional<unsigned> locked_mhz;
    bool on() const { return status == "on"; }
  };
  // Applies one step to every GPU. A refusal (any GPU) puts back the original settings and
  // turns the kind of setting off for the rest of the sweep: later steps of that kind answer
  // the same "off: ..." without asking NVML again. A step outside the board's range
  // (nvmlDeviceGetPowerManagementLimitConstraints) is "off: ..." for that step only.
  Applied apply(const PowerStep& step);
  // Puts back every GPU's original power limit and unlocks clocks that were locked.
  // Idempotent; also what the destructor and the signal handler do.
  void restore();

  // {"gpus": [{"device", "pci_bus_id", "original_limit_w", "default_limit_w", "min_limit_w",
  //  "max_limit_w"}], "restore": "..."}: what was found, for the results context.
  nlohmann::ordered_json original_json() const;

  // The line a refusal prints: "power limit: off: NVML_ERROR_NO_PERMISSION, run as root or set
  // by an administrator" (or "lock clocks: ...").
  static std::string status_line(const PowerStep& step, const std::string& status);

 private:
  struct Gpu {
    PowerTarget target;
    void* handle = nullptr;
    std::optional<unsigned> original_mw, default_mw, min_mw, max_mw;
  };
  std::vector<Gpu> gpus_;
  std::string unavailable_;     // why no GPU can be controlled ("" when all were found)
  std::string limit_off_, clocks_off_;  // sticky refusals
  bool install_handlers_ = true;
};

}  // namespace gpubench
