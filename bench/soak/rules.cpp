#include "bench/soak/rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace gpubench::soak {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool judged(const Sample& s, const Thresholds& t) { return s.t_s - s.interval_s >= t.warmup_s - 1e-9; }

std::string where(const std::string& phase, const std::string& load) {
  return phase.empty() ? load : fmt::format("{}, phase {}", load, phase);
}

void fail(Verdict& v, std::string device, std::string rule, double measured, double threshold, std::string message) {
  v.passed = false;
  v.failures.push_back({std::move(device), std::move(rule), measured, threshold, std::move(message)});
}

// Issue 27: a drop that coincides with load that was not the soak's (other processes, the
// hypervisor's steal time) is named as such: "; it coincides with outside load: 35% of the
// CPUs in the last window, 2% in the first". The mean over each window's samples of the device.
std::string outside_load_note(const std::vector<Sample>& series, const Trend& tr, const Thresholds& t) {
  constexpr double kContendedPct = 10;  // as run's console and compare --contended
  std::vector<const Sample*> judged_samples;
  for (const Sample& s : series) {
    if (s.rate && s.device == tr.device && s.load == tr.load && s.phase == tr.phase && judged(s, t)) {
      judged_samples.push_back(&s);
    }
  }
  std::sort(judged_samples.begin(), judged_samples.end(), [](const Sample* a, const Sample* b) { return a->t_s < b->t_s; });
  if (tr.window == 0 || judged_samples.size() < tr.window) return "";
  auto mean_load = [&](std::size_t from) {
    double sum = 0;
    int n = 0;
    for (std::size_t i = from; i < from + tr.window; ++i) {
      const Sample& s = *judged_samples[i];
      if (!s.other_cpu_pct && !s.steal_pct) continue;
      sum += s.other_cpu_pct.value_or(0) + s.steal_pct.value_or(0);
      ++n;
    }
    return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
  };
  const std::optional<double> first = mean_load(0), last = mean_load(judged_samples.size() - tr.window);
  if (!first || !last || !(*last > kContendedPct && *last > *first + 5)) return "";
  return fmt::format("; it coincides with outside load (other processes and steal): {:.0f}% of the CPUs in the last "
                     "window, {:.0f}% in the first",
                     *last, *first);
}

void judge_drop(const std::vector<Sample>& series, const Thresholds& t, Verdict& v) {
  for (const Trend& tr : trends(series, t)) {
    if (tr.window == 0) {
      v.notes.push_back(fmt::format("{} {}: drop not judged: {} sample(s) after the warm-up", tr.device,
                                    where(tr.phase, tr.load), tr.samples));
      continue;
    }
    if (tr.drop_pct >= t.max_drop_pct) {
      fail(v, tr.device, "drop", tr.drop_pct, t.max_drop_pct,
           fmt::format("{}: {}: throughput drop {:.2f} % >= --max-drop {} % ({:.4g} -> {:.4g} {}, first and last window "
                       "of {} samples after {:g} s of warm-up){}",
                       tr.device, where(tr.phase, tr.load), tr.drop_pct, t.max_drop_pct, tr.first, tr.last, tr.unit,
                       tr.window, t.warmup_s, outside_load_note(series, tr, t)));
    }
  }
}

// Spread: per (phase, load), each device's mean judged rate against the median device's.
void judge_spread(const std::vector<Sample>& series, const Thresholds& t, Verdict& v) {
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> groups;
  for (const Sample& s : series) {
    if (s.rate && judged(s, t)) groups[{s.phase, s.load}][s.device].push_back(*s.rate);
  }
  for (const auto& [key, devices] : groups) {
    if (devices.size() < 2) continue;  // one device: nothing to compare it with
    std::map<std::string, double> mean;
    std::vector<double> means;
    for (const auto& [device, rates] : devices) {
      double sum = 0;
      for (double r : rates) sum += r;
      mean[device] = sum / static_cast<double>(rates.size());
      means.push_back(mean[device]);
    }
    const double med = median(means);
    if (!(med > 0)) continue;
    for (const auto& [device, m] : mean) {
      if (!(m < med)) continue;  // only the slow side: a device is judged against the median
      const double spread = (med - m) / med * 100;
      if (spread >= t.max_spread_pct) {
        fail(v, device, "spread", spread, t.max_spread_pct,
             fmt::format("{}: {}: {:.2f} % below the median device >= --max-spread {} % ({:.4g} vs {:.4g})", device,
                         where(key.first, key.second), spread, t.max_spread_pct, m, med));
      }
    }
  }
}

}  // namespace

std::vector<Trend> trends(const std::vector<Sample>& series, const Thresholds& t) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Sample*>> groups;
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  std::map<std::tuple<std::string, std::string, std::string>, std::string> units;
  for (const Sample& s : series) {
    if (!s.rate) continue;
    auto key = std::make_tuple(s.phase, s.device, s.load);
    if (!units.count(key)) order.push_back(key);  // also when every sample is in the warm-up
    units[key] = s.unit;
    if (judged(s, t)) groups[key].push_back(&s);
  }
  std::vector<Trend> out;
  for (const auto& key : order) {
    std::vector<const Sample*>& samples = groups[key];
    Trend tr;
    std::tie(tr.phase, tr.device, tr.load) = key;
    tr.unit = units[key];
    tr.samples = samples.size();
    if (samples.empty()) {
      out.push_back(std::move(tr));
      continue;
    }
    double sum = 0;
    for (const Sample* s : samples) sum += *s->rate;
    tr.mean = sum / static_cast<double>(samples.size());
    if (samples.size() >= 2) {
      std::sort(samples.begin(), samples.end(), [](const Sample* a, const Sample* b) { return a->t_s < b->t_s; });
      // A fifth of the samples, at least 5 (half of them when fewer than 10): one noisy
      // interval must not decide a long soak, nor a short one.
      tr.window = std::max<std::size_t>({1, samples.size() / 5, std::min<std::size_t>(5, samples.size() / 2)});
      std::vector<double> first, last;
      for (std::size_t i = 0; i < tr.window; ++i) {
        first.push_back(*samples[i]->rate);
        last.push_back(*samples[samples.size() - tr.window + i]->rate);
      }
      tr.first = median(first);
      tr.last = median(last);
      if (tr.first > 0) tr.drop_pct = std::max(0.0, (tr.first - tr.last) / tr.first * 100);  // a gain is no drop
    }
    out.push_back(std::move(tr));
  }
  return out;
}

Verdict judge(const std::vector<Sample>& series, const Thresholds& t) {
  Verdict v;
  judge_drop(series, t, v);
  judge_spread(series, t, v);

  std::vector<std::string> devices;  // in order of appearance
  for (const Sample& s : series) {
    if (std::find(devices.begin(), devices.end(), s.device) == devices.end()) devices.push_back(s.device);
  }
  for (const std::string& device : devices) {
    int checks = 0, wrong = 0;
    std::string detail, error;
    std::vector<std::uint64_t> xids;
    std::optional<std::uint64_t> ecc_first, ecc_max;
    int throttled = 0;
    const Sample* first_throttle = nullptr;
    for (const Sample& s : series) {
      if (s.device != device) continue;
      checks += s.verifications;
      wrong += s.mismatches;
      if (detail.empty() && !s.mismatch_detail.empty()) detail = s.mismatch_detail;
      if (error.empty() && !s.error.empty()) error = s.error;
      xids.insert(xids.end(), s.xids.begin(), s.xids.end());
      if (s.ecc_uncorrected) {
        if (!ecc_first) ecc_first = s.ecc_uncorrected;
        ecc_max = std::max(ecc_max.value_or(0), *s.ecc_uncorrected);
      }
      const bool under_limit = !(s.power_w && s.power_limit_w) || *s.power_w < *s.power_limit_w;
      if (judged(s, t) && s.clocks_event_reasons && (*s.clocks_event_reasons & kBadThrottleMask) && under_limit) {
        if (++throttled == 1) first_throttle = &s;
      }
    }
    if (wrong > 0) {
      fail(v, device, "verification", wrong, 0,
           fmt::format("{}: verification: {} of {} checks differ from the reference (threshold 0): {}", device, wrong,
                       checks, detail));
    }
    if (ecc_first && ecc_max && *ecc_max > *ecc_first) {
      const double n = static_cast<double>(*ecc_max - *ecc_first);
      fail(v, device, "ecc", n, 0,
           fmt::format("{}: ecc: {} new uncorrected ECC error(s) during the soak (threshold 0; {} -> {})", device, n,
                       *ecc_first, *ecc_max));
    }
    if (!xids.empty()) {
      std::string list;
      for (std::uint64_t x : xids) list += (list.empty() ? "" : ", ") + std::to_string(x);
      fail(v, device, "xid", static_cast<double>(xids.size()), 0,
           fmt::format("{}: xid: {} XID event(s) (threshold 0): XID {}", device, xids.size(), list));
    }
    if (throttled > 0) {
      const Sample& s = *first_throttle;
      const std::string power = s.power_w && s.power_limit_w
                                    ? fmt::format("{:.0f} W of a {:.0f} W limit", *s.power_w, *s.power_limit_w)
                                    : std::string("power not reported");
      fail(v, device, "throttle", throttled, 0,
           fmt::format("{}: throttle: {} sample(s) slowed by {} under the power limit (threshold 0; first at {:.0f} s, {})",
                       device, throttled, bad_throttle_names(*s.clocks_event_reasons), s.t_s, power));
    }
    if (!error.empty()) fail(v, device, "error", 1, 0, fmt::format("{}: error: the load stopped: {}", device, error));
  }
  return v;
}

void mark_interrupted(Verdict& v, const std::vector<Sample>& series, int signal, double at_s) {
  v.interrupted = true;
  const bool timed = std::any_of(series.begin(), series.end(), [](const Sample& s) { return s.runs > 0 && s.busy_s > 0; });
  if (!timed) {
    fail(v, "", "interrupted", at_s, 0,
         fmt::format("interrupted (signal {}) after {:.1f} s, before any timed sample: nothing was measured to judge",
                     signal, at_s));
  }
}

nlohmann::ordered_json to_json(const Failure& f) {
  return {{"device", f.device}, {"rule", f.rule}, {"measured", f.measured}, {"threshold", f.threshold}, {"message", f.message}};
}

nlohmann::ordered_json to_json(const Verdict& v) {
  nlohmann::ordered_json j = {{"passed", v.passed}, {"failures", nlohmann::ordered_json::array()}};
  if (v.interrupted) j["interrupted"] = true;
  for (const Failure& f : v.failures) j["failures"].push_back(to_json(f));
  if (!v.notes.empty()) j["notes"] = v.notes;
  return j;
}

}  // namespace gpubench::soak
