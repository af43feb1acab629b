#include "bench/soak/document.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bench/core/harness.hpp"
#include "bench/core/stats.hpp"

namespace gpubench::soak {
namespace {

nlohmann::ordered_json thresholds_json(const Thresholds& t) {
  return {{"max_drop_pct", t.max_drop_pct}, {"max_spread_pct", t.max_spread_pct}, {"warmup_s", t.warmup_s}};
}

}  // namespace

nlohmann::ordered_json section(const Settings& settings, const std::vector<LoadInfo>& loads,
                               const std::vector<Sample>& series, const std::string& xid_status, double elapsed_s,
                               const std::optional<Verdict>& verdict, const std::optional<Interruption>& interrupted) {
  nlohmann::ordered_json j;
  j["load"] = settings.load;
  j["duration_s"] = settings.duration_s;
  j["sample_interval_s"] = settings.interval_s;
  j["verify_every_s"] = settings.verify_every_s;
  j["thresholds"] = thresholds_json(settings.thresholds);
  j["elapsed_s"] = elapsed_s;
  j["xid_watch"] = xid_status;
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const LoadInfo& l : loads) {
    nlohmann::ordered_json c = {{"device", l.device}, {"load", l.load}};
    if (l.planned.suite) {
      c["suite"] = l.planned.suite->name();
      c["case"] = l.planned.name();
      c["axes"] = l.planned.point.to_json();
    }
    if (l.planned.skip_reason) c["not_run"] = *l.planned.skip_reason;
    if (!l.unit.empty()) c["unit"] = l.unit;
    if (!l.note.empty()) c["chosen"] = l.note;
    cases.push_back(std::move(c));
  }
  j["cases"] = std::move(cases);
  nlohmann::ordered_json trend_list = nlohmann::ordered_json::array();
  for (const Trend& t : trends(series, settings.thresholds)) {
    nlohmann::ordered_json tj = {{"device", t.device}, {"load", t.load}, {"unit", t.unit}, {"samples", t.samples},
                                 {"mean", t.mean}};
    if (!t.phase.empty()) tj["phase"] = t.phase;
    if (t.window > 0) {
      tj["window"] = t.window;
      tj["first"] = t.first;
      tj["last"] = t.last;
      tj["drop_pct"] = t.drop_pct;
    }
    trend_list.push_back(std::move(tj));
  }
  j["trends"] = std::move(trend_list);
  if (interrupted) j["interrupted"] = {{"signal", interrupted->signal}, {"at_s", interrupted->at_s}};
  if (verdict) j["verdict"] = to_json(*verdict);
  nlohmann::ordered_json s = nlohmann::ordered_json::array();
  for (const Sample& x : series) s.push_back(to_json(x));
  j["series"] = std::move(s);
  return j;
}

std::vector<nlohmann::ordered_json> summary_entries(const Settings& settings, const std::vector<LoadInfo>& loads,
                                                    const std::vector<Sample>& series, const PeakLookup& peak) {
  std::vector<nlohmann::ordered_json> out;
  std::size_t index = 0;
  const Thresholds& t = settings.thresholds;
  for (const LoadInfo& l : loads) {
    if (!l.planned.suite) continue;
    std::vector<double> judged_s, all_s;
    std::int64_t runs = 0, judged_runs = 0;
    double busy = 0, judged_busy = 0;
    int checks = 0, wrong = 0;
    std::string detail, error;
    for (const Sample& s : series) {
      if (s.device != l.device || s.load != l.load) continue;
      checks += s.verifications;
      wrong += s.mismatches;
      if (detail.empty()) detail = s.mismatch_detail;
      if (error.empty()) error = s.error;
      if (s.runs <= 0 || !(s.busy_s > 0)) continue;
      const double per = s.busy_s / static_cast<double>(s.runs);
      all_s.push_back(per);
      runs += s.runs;
      busy += s.busy_s;
      if (s.t_s - s.interval_s >= t.warmup_s - 1e-9) {
        judged_s.push_back(per);
        judged_runs += s.runs;
        judged_busy += s.busy_s;
      }
    }
    const std::string name = "soak/" + l.load + "/" + l.planned.name();
    const std::string reason = wrong > 0      ? "verification failed: " + detail
                               : !error.empty() ? error
                               : l.planned.skip_reason ? "not run: " + *l.planned.skip_reason
                               : runs == 0       ? std::string("no run was timed")
                                                 : std::string();
    if (!reason.empty()) {
      nlohmann::ordered_json e = failure_entry(l.planned, index++, reason);
      e["name"] = e["run_name"] = name;
      out.push_back(std::move(e));
      continue;
    }
    const bool use_judged = !judged_s.empty();
    const std::vector<double>& per_sample = use_judged ? judged_s : all_s;
    const std::int64_t n_runs = use_judged ? judged_runs : runs;
    const double mean_s = (use_judged ? judged_busy : busy) / static_cast<double>(n_runs);
    const SampleStats st = summarize(per_sample);
    nlohmann::ordered_json e;
    e["name"] = name;
    e["family_index"] = index++;
    e["per_family_instance_index"] = 0;
    e["run_name"] = name;
    e["run_type"] = "iteration";
    e["repetitions"] = 1;
    e["repetition_index"] = 0;
    e["threads"] = 1;
    e["iterations"] = n_runs;
    e["real_time"] = mean_s * 1e3;
    e["cpu_time"] = mean_s * 1e3;
    e["time_unit"] = "ms";
    if (l.metrics.flops > 0) e[l.metrics.integer_ops ? "TOP/s" : "TFLOP/s"] = l.metrics.flops / mean_s / 1e12;
    if (l.metrics.bytes > 0 && l.metrics.flops == 0) e["GB/s"] = l.metrics.bytes / mean_s / 1e9;
    if (l.metrics.items > 0) e[l.metrics.items_unit + "/s"] = l.metrics.items / mean_s;
    e["samples"] = per_sample.size();
    e["noise_pct"] = st.rel_noise * 100;
    nlohmann::ordered_json g;
    g["suite"] = l.planned.suite->name();
    g["device"] = l.planned.device.id();
    g["device_name"] = l.planned.device.name;
    g["axes"] = l.planned.point.to_json();
    g["status"] = "ok";
    const std::optional<double> p = peak && !l.metrics.peak_key.empty() ? peak(l.planned.device.name, l.metrics.peak_key)
                                                                        : std::nullopt;
    g["metrics"] = derive_metrics(l.metrics, mean_s, p);
    g["verification"] = {{"passed", true},
                         {"checks", checks},
                         {"method", fmt::format("the case's own check, at the start and every {} s of the soak",
                                                settings.verify_every_s)}};
    g["measurement"] = {{"samples", per_sample.size()},
                        {"runs", n_runs},
                        {"mean_s", mean_s},
                        {"median_s", st.median},
                        {"min_s", st.min},
                        {"max_s", st.max},
                        {"stddev_s", st.stddev},
                        {"noise_pct", st.rel_noise * 100},
                        {"cold", false},
                        {"timer", l.planned.device.is_cuda() ? "cuda_event" : "host_steady"},
                        {"soak", {{"load", l.load}, {"judged", use_judged}, {"sample_interval_s", settings.interval_s}}}};
    e["gpubench"] = std::move(g);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace gpubench::soak
