#pragma once
// The soak verdict: pure rules over a series (docs/soak.md). Each rule has a default and a flag:
//   drop        throughput drop from the first to the last stable window, per device and load
//               (--max-drop, 5 %); a window is the median of a fifth of the judged samples
//               (at least 5, or half of them when fewer than 10)
//   spread      a device's throughput below the median device's, per load (--max-spread, 5 %)
//   verification any answer that differs from the reference (always judged)
//   ecc         any new uncorrected ECC error (always judged)
//   xid         any XID event (always judged)
//   throttle    a thermal, power-brake or hardware-slowdown clock reason while the GPU draws
//               less than its power limit
//   error       the load stopped on a device (an exception, an out-of-memory)
// Warm-up: samples whose interval starts before `warmup_s` are reported but the drop, spread
// and throttle rules do not judge them, so a cold GPU is not taken for a throttled one.
// A threshold is the smallest value that fails: --max-drop 0 fails every run with a judged
// window pair (no drop is below 0 %), which is how the failure path is exercised.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/soak/series.hpp"

namespace gpubench::soak {

struct Thresholds {
  double max_drop_pct = 5;
  double max_spread_pct = 5;
  double warmup_s = 0;
};

// The warm-up the docs promise: the first minute or 10 % of the duration, whichever is shorter.
double default_warmup_s(double duration_s);

// Throughput over the judged samples of one (phase, device, load): the first and last window
// (medians of a fifth of the samples each, at least 5, or half of them when fewer than 10), the drop between them (a gain is 0)
// and the mean. `window` is 0 when fewer than 2 samples were judged (first/last then unset).
struct Trend {
  std::string phase, device, load, unit;
  std::size_t samples = 0, window = 0;
  double first = 0, last = 0, drop_pct = 0, mean = 0;
};
std::vector<Trend> trends(const std::vector<Sample>& series, const Thresholds& t);

struct Failure {
  std::string device;
  std::string rule;  // drop, spread, verification, ecc, xid, throttle, error
  double measured = 0;
  double threshold = 0;
  std::string message;  // one line naming device, rule, measured value and threshold
};

struct Verdict {
  bool passed = true;
  bool interrupted = false;  // the soak ended early (a signal, a closed pipe): see mark_interrupted
  std::vector<Failure> failures;
  std::vector<std::string> notes;  // what could not be judged and why (too few samples)
};

Verdict judge(const std::vector<Sample>& series, const Thresholds& t);
// An interrupted soak's verdict says so, and never says passed without a timed sample: with
// none, it fails with rule "interrupted" (nothing was measured to judge).
void mark_interrupted(Verdict& v, const std::vector<Sample>& series, int signal, double at_s);

nlohmann::ordered_json to_json(const Failure& f);
nlohmann::ordered_json to_json(const Verdict& v);

}  // namespace gpubench::soak
