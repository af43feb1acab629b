// `gpubench compare` (see compare.hpp).
#include "reports/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"
#include "reports/escape.hpp"
#include "reports/stats.hpp"

namespace gpubench::reports {

using ordered = nlohmann::ordered_json;

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::improved: return "improved";
    case Verdict::regressed: return "regressed";
    case Verdict::unchanged: return "unchanged";
    case Verdict::noisy: return "noisy";
    case Verdict::missing: return "missing";
    case Verdict::added: return "new";
    case Verdict::ambiguous: return "ambiguous";
  }
  return "?";
}

std::size_t Comparison::ambiguous() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.verdict == Verdict::ambiguous; }));
}

std::size_t Comparison::regressions() const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [](const auto& c) { return c.verdict == Verdict::regressed; }));
}

namespace {

// The GPU models a file measured: cuda devices of its cases.
std::set<std::string> gpu_models(const ResultsFile& f) {
  std::set<std::string> out;
  for (const auto& e : f.entries) {
    if (e.device.starts_with("cuda") && !e.device_name.empty()) out.insert(e.device_name);
  }
  return out;
}

struct Side {
  std::vector<double> values;
  std::vector<double> noise;  // relative, per repetition
  std::optional<Perf> perf;   // metric and unit of the first
  const ResultEntry* first = nullptr;
  std::string failed;  // reason when the case did not produce a value
  std::vector<std::string> suspect;  // plausibility reasons of its entries
  std::vector<double> clocks_mhz;    // the clock each repetition recorded
  double load_pct = 0;               // the most outside load any repetition ran with
  std::string load_what;             // which: "other processes 23% of the CPUs" / "steal 12%"
  std::string gpu_shared;            // "2 other process(es) held the GPU", from the telemetry instrument
};

// The clock an entry recorded: the GPU's mean SM clock over the timed batches (NVML, the
// harness's metrics.sm_clock_mhz), else the CPU's effective clock (the host instrument).
std::optional<double> recorded_clock(const ResultEntry& e) {
  if (auto v = number_at(e.metrics, {"sm_clock_mhz"}); v && *v > 0) return v;
  if (auto v = number_at(e.profile, {"host", "cpu_clock_mhz"}); v && *v > 0) return v;
  return std::nullopt;
}

using SideMap = std::unordered_map<std::string, Side>;

// Keeps the order of first appearance in `order`.
SideMap collect(const ResultsFile& f, std::vector<std::string>& order, const plausibility::PeakLookup& datasheet,
                const plausibility::ClockLookup& datasheet_clock) {
  SideMap out;
  const plausibility::FileSuspects suspects = plausibility::judge_file(f, datasheet, datasheet_clock);
  for (std::size_t i = 0; i < f.entries.size(); ++i) {
    const ResultEntry& e = f.entries[i];
    if (!is_iteration(e)) continue;
    const std::string key = case_identity(e) + '\x1f' + e.device;
    auto [it, added] = out.try_emplace(key);
    if (added) order.push_back(key), it->second.first = &e;
    Side& s = it->second;
    if (const auto* reasons = suspects.of(i)) {
      for (const auto& r : *reasons) {
        if (std::find(s.suspect.begin(), s.suspect.end(), r) == s.suspect.end()) s.suspect.push_back(r);
      }
    }
    if (e.status != "ok") {
      s.failed = e.status + (e.reason.empty() ? "" : ": " + e.reason);
      continue;
    }
    auto p = entry_perf(e);
    if (!p) continue;
    if (!s.perf) s.perf = p;
    if (p->metric != s.perf->metric) continue;
    s.values.push_back(p->value);
    s.noise.push_back(number_at(e.measurement, {"noise_pct"}).value_or(0) / 100);
    if (auto mhz = recorded_clock(e)) s.clocks_mhz.push_back(*mhz);
    for (const auto& [key, what] : {std::pair<const char*, const char*>{"other_cpu_pct", "other processes used {:.0f}% of the CPUs"},
                                    {"steal_pct", "the hypervisor stole {:.0f}% of the CPU time"}}) {
      if (auto v = number_at(e.profile, {"host", key}); v && *v > s.load_pct) {
        s.load_pct = *v;
        s.load_what = fmt::format(fmt::runtime(what), *v);
      }
    }
    // Another process on the GPU while it was timed (the telemetry instrument, NVML): contended
    // whatever its share, which NVML does not say per process here.
    if (auto n = number_at(e.profile, {"telemetry", "other_gpu_processes"}); n && *n > 0) {
      s.gpu_shared = fmt::format("{:.0f} other process(es) held the GPU", *n);
    }
  }
  return out;
}

double log_binomial(double n, double k) { return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1); }

}  // namespace

Comparison compare_results(const ResultsFile& base, const ResultsFile& next, const CompareOptions& opt) {
  Comparison out;
  const auto base_gpus = gpu_models(base), new_gpus = gpu_models(next);
  if (base_gpus != new_gpus) {
    const std::string why = fmt::format(
        "{} measured {} and {} measured {}: a difference between GPU models is not a regression",
        base.path.string(), base_gpus.empty() ? "no GPU" : fmt::format("{}", fmt::join(base_gpus, ", ")),
        next.path.string(), new_gpus.empty() ? "no GPU" : fmt::format("{}", fmt::join(new_gpus, ", ")));
    if (!opt.allow_different_devices) {
      throw UsageError(why + " (use gpubench report to compare hardware, or --allow-different-devices)");
    }
    out.warnings.push_back(why + "; compared anyway (--allow-different-devices).");
  }
  std::vector<std::string> base_order, new_order;
  const SideMap b = collect(base, base_order, opt.datasheet, opt.datasheet_clock),
                n = collect(next, new_order, opt.datasheet, opt.datasheet_clock);
  bool few = false;
  auto fill = [&](CaseComparison& c, const Side& s) {
    c.suite = s.first->suite;
    c.device = s.first->device;
    c.device_name = s.first->device_name;
    c.label = axes_label(*s.first);
  };
  auto add_suspect = [](CaseComparison& c, const Side& s, const char* side) {
    for (const auto& r : s.suspect) c.suspect.push_back(side + r);
  };
  for (const auto& key : base_order) {
    const Side& sb = b.at(key);
    CaseComparison c;
    fill(c, sb);
    c.base = sb.values;
    auto it = n.find(key);
    add_suspect(c, sb, "base: ");
    if (it != n.end()) add_suspect(c, it->second, "new: ");
    if (sb.values.empty()) {
      // Nothing to compare against: report what the new run did with it.
      if (it != n.end() && !it->second.values.empty()) {
        c.next = it->second.values;
        c.verdict = Verdict::added;
        c.detail = "no value in the baseline (" + (sb.failed.empty() ? std::string("no time") : sb.failed) + ")";
        c.new_median = median(c.next);
        c.metric = it->second.perf->metric, c.unit = it->second.perf->unit;
      } else {
        c.verdict = Verdict::missing;
        c.detail = "no value on either side" + (sb.failed.empty() ? std::string() : " (" + sb.failed + ")");
      }
      out.cases.push_back(std::move(c));
      continue;
    }
    c.metric = sb.perf->metric, c.unit = sb.perf->unit;
    c.base_median = median(c.base);
    if (it == n.end() || it->second.values.empty() || it->second.perf->metric != sb.perf->metric) {
      c.verdict = Verdict::missing;
      c.detail = it == n.end() ? "not in the new results"
                 : !it->second.failed.empty() ? "new run: " + it->second.failed
                                              : "no comparable value in the new results";
      out.cases.push_back(std::move(c));
      continue;
    }
    const Side& sn = it->second;
    c.next = sn.values;
    c.new_median = median(c.next);
    c.ratio = c.new_median / c.base_median;
    const double change = c.ratio - 1;
    const double n1 = static_cast<double>(c.base.size()), n2 = static_cast<double>(c.next.size());
    // The smallest two-sided p the exact U test can give is 2 / C(n1 + n2, n1).
    const bool u_possible =
        c.base.size() >= 2 && c.next.size() >= 2 && std::log(2.0) - log_binomial(n1 + n2, n1) < std::log(opt.alpha);
    bool significant = false;
    if (u_possible) {
      const MannWhitney mw = mann_whitney_u(c.base, c.next);
      c.test = "mann-whitney";
      c.p = mw.p;
      significant = mw.p < opt.alpha;
      few = few || c.base.size() < 9 || c.next.size() < 9;
      c.detail = fmt::format("Mann-Whitney U p={:.4f} ({}, {} vs {} repetitions)", mw.p,
                             mw.exact ? "exact" : "normal approximation", c.base.size(), c.next.size());
    } else {
      c.test = "noise-overlap";
      const double nb = *std::max_element(sb.noise.begin(), sb.noise.end());
      const double nn = *std::max_element(sn.noise.begin(), sn.noise.end());
      const double lo_b = c.base_median * (1 - nb), hi_b = c.base_median * (1 + nb);
      const double lo_n = c.new_median * (1 - nn), hi_n = c.new_median * (1 + nn);
      significant = hi_n < lo_b || lo_n > hi_b;
      c.detail = fmt::format("noise overlap: base {} +-{}%, new {} +-{}% {}", sig3(c.base_median), decimal(100 * nb, 1),
                             sig3(c.new_median), decimal(100 * nn, 1), significant ? "do not overlap" : "overlap");
      if (c.base.size() >= 2 && c.next.size() >= 2) {
        c.detail += fmt::format(" ({} vs {} repetitions: too few for the U test to reach p<{})", c.base.size(),
                                c.next.size(), opt.alpha);
      }
    }
    if (std::fabs(change) * 100 < opt.threshold_pct) {
      c.verdict = Verdict::unchanged;
    } else if (!significant) {
      c.verdict = Verdict::noisy;
    } else {
      c.verdict = change > 0 ? Verdict::improved : Verdict::regressed;
    }
    if (!sb.clocks_mhz.empty() && !sn.clocks_mhz.empty()) {
      c.base_clock_mhz = median(sb.clocks_mhz);
      c.new_clock_mhz = median(sn.clocks_mhz);
    }
    if (c.verdict == Verdict::improved || c.verdict == Verdict::regressed) {
      // In cycle space (time x clock): a rate per clock. A lower clock that explains the change
      // is a different machine state (power cap, thermal, another boost), not slower code.
      if (c.base_clock_mhz && c.new_clock_mhz) {
        const double clock_ratio = *c.new_clock_mhz / *c.base_clock_mhz;
        const double per_cycle_change = c.ratio / clock_ratio - 1;
        if (std::fabs(clock_ratio - 1) * 100 >= 1 && std::fabs(per_cycle_change) * 100 < opt.threshold_pct) {
          c.verdict = Verdict::ambiguous;
          c.detail = fmt::format("clock {:.0f} -> {:.0f} MHz: per clock the change is {:+.1f}% ({})", *c.base_clock_mhz,
                                 *c.new_clock_mhz, per_cycle_change * 100, c.detail);
        }
      }
      const Side& loaded = sb.load_pct >= sn.load_pct ? sb : sn;
      const Side* shared = !sn.gpu_shared.empty() ? &sn : !sb.gpu_shared.empty() ? &sb : nullptr;
      if (c.verdict != Verdict::ambiguous && shared != nullptr) {
        c.verdict = Verdict::ambiguous;
        c.detail = fmt::format("load: in the {} run {} while it was timed ({})", shared == &sb ? "base" : "new",
                               shared->gpu_shared, c.detail);
      } else if (c.verdict != Verdict::ambiguous && loaded.load_pct > opt.contended_pct) {
        c.verdict = Verdict::ambiguous;
        c.detail = fmt::format("load: in the {} run {} while it was timed (above {}%) ({})", &loaded == &sb ? "base" : "new",
                               loaded.load_what, opt.contended_pct, c.detail);
      }
    }
    out.cases.push_back(std::move(c));
  }
  for (const auto& key : new_order) {
    if (b.count(key)) continue;
    const Side& sn = n.at(key);
    CaseComparison c;
    fill(c, sn);
    add_suspect(c, sn, "new: ");
    c.next = sn.values;
    c.verdict = Verdict::added;
    if (sn.perf) c.metric = sn.perf->metric, c.unit = sn.perf->unit, c.new_median = median(c.next);
    c.detail = sn.values.empty() ? "not in the baseline; " + sn.failed : "not in the baseline";
    out.cases.push_back(std::move(c));
  }
  if (few) {
    out.warnings.push_back(
        "fewer than 9 repetitions on a side: the Mann-Whitney U test has little power there and may call a real change "
        "noisy (as Google Benchmark's compare.py warns); run with --benchmark_repetitions=9 or more.");
  }
  return out;
}

namespace {

std::string change_text(const CaseComparison& c) {
  if (c.ratio <= 0) return {};
  return percent_change(100 * (c.ratio - 1));
}

}  // namespace

Document comparison_document(const Comparison& c, const ResultsFile& base, const ResultsFile& next,
                             const CompareOptions& opt) {
  Document d;
  d.title = "gpubench compare";
  d.paragraph(fmt::format("Base: {} ({}). New: {} ({}).", base.path.generic_string(), base.host(),
                          next.path.generic_string(), next.host()));
  d.paragraph(fmt::format(
      "Per case the median of the headline metric over repetitions (higher is better) and the change of new over "
      "base. unchanged: |change| < {}%; improved/regressed: a larger change that is significant (Mann-Whitney U "
      "p < {} when both sides have enough repetitions, otherwise the noise ranges do not overlap); noisy: a larger "
      "change that is not significant; ambiguous: an improvement or regression that a change of the recorded clock "
      "explains (per clock the change is below {}%) or that ran while other processes loaded the machine (above "
      "{}%). Only regressions fail (exit code 1){}.",
      opt.threshold_pct, opt.alpha, opt.threshold_pct, opt.contended_pct,
      opt.fail_on_ambiguous ? ", and ambiguous cases (--fail-on-ambiguous)" : ""));
  for (const auto& w : c.warnings) d.warning(w);
  const auto suspect_cases =
      std::count_if(c.cases.begin(), c.cases.end(), [](const CaseComparison& x) { return !x.suspect.empty(); });
  if (suspect_cases > 0) {
    d.warning(fmt::format("{} case(s) have a suspect figure (above a datasheet peak or a measured ceiling): their "
                          "verdicts compare numbers that cannot be believed; see \"Suspect figures\".",
                          suspect_cases));
  }
  std::map<Verdict, std::size_t> counts;
  for (const auto& x : c.cases) ++counts[x.verdict];
  Table summary;
  for (Verdict v : {Verdict::regressed, Verdict::improved, Verdict::ambiguous, Verdict::noisy, Verdict::unchanged,
                    Verdict::missing, Verdict::added}) {
    summary.add_column(verdict_name(v), true);
  }
  std::vector<std::string> row;
  for (Verdict v : {Verdict::regressed, Verdict::improved, Verdict::ambiguous, Verdict::noisy, Verdict::unchanged,
                    Verdict::missing, Verdict::added}) {
    row.push_back(fmt::format("{}", counts[v]));
  }
  summary.rows.push_back(std::move(row));
  d.heading("Summary");
  d.table(std::move(summary));

  auto section = [&](const char* title, std::initializer_list<Verdict> verdicts) {
    Table t;
    for (const char* col : {"verdict", "suite", "device", "case"}) t.add_column(col);
    for (const char* col : {"base", "new", "change"}) t.add_column(col, true);
    t.add_column("test");
    for (const auto& x : c.cases) {
      if (std::find(verdicts.begin(), verdicts.end(), x.verdict) == verdicts.end()) continue;
      t.rows.push_back({verdict_name(x.verdict), x.suite, x.device_name.empty() ? x.device : x.device + " " + x.device_name,
                        x.label, x.base_median > 0 ? sig3(x.base_median) + " " + x.unit : "",
                        x.new_median > 0 ? sig3(x.new_median) + " " + x.unit : "", change_text(x), x.detail});
    }
    if (t.rows.empty()) return;
    d.heading(title);
    d.table(std::move(t));
  };
  BarChart bars{"New / base per case (regressions first)", "x", {}, {}, 1.0};
  for (Verdict v : {Verdict::regressed, Verdict::noisy, Verdict::improved, Verdict::unchanged}) {
    for (const auto& x : c.cases) {
      if (x.verdict != v || x.ratio <= 0 || bars.values.size() >= 60) continue;
      bars.labels.push_back(fmt::format("{} {} {}", verdict_name(v), x.suite, x.label));
      bars.values.push_back(x.ratio);
    }
  }
  if (!bars.values.empty()) d.chart(std::move(bars));
  section("Regressions", {Verdict::regressed});
  section("Improvements", {Verdict::improved});
  section("Ambiguous (a clock or load change explains it)", {Verdict::ambiguous});
  section("Noisy", {Verdict::noisy});
  section("Missing and new", {Verdict::missing, Verdict::added});
  section("Unchanged", {Verdict::unchanged});
  Table suspect;
  for (const char* col : {"verdict", "suite", "device", "case", "why (docs/plausibility.md)"}) suspect.add_column(col);
  for (const auto& x : c.cases) {
    if (x.suspect.empty()) continue;
    suspect.rows.push_back({verdict_name(x.verdict), x.suite, x.device, x.label, fmt::format("{}", fmt::join(x.suspect, "; "))});
  }
  if (!suspect.rows.empty()) {
    d.heading("Suspect figures");
    d.table(std::move(suspect));
  }
  return d;
}

std::string comparison_junit(const Comparison& c, const CompareOptions& opt) {
  std::size_t failures = 0, skipped = 0;
  for (const auto& x : c.cases) {
    failures += x.verdict == Verdict::regressed || (x.verdict == Verdict::ambiguous && opt.fail_on_ambiguous);
    skipped += x.verdict == Verdict::missing || (x.verdict == Verdict::ambiguous && !opt.fail_on_ambiguous);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gpubench compare\" tests=\"{0}\" failures=\"{1}\" skipped=\"{2}\">\n"
                     "<testsuite name=\"gpubench compare\" tests=\"{0}\" failures=\"{1}\" skipped=\"{2}\" errors=\"0\">\n",
                     c.cases.size(), failures, skipped);
  out += fmt::format("<properties><property name=\"threshold_pct\" value=\"{}\"/><property name=\"alpha\" value=\"{}\"/>"
                     "</properties>\n",
                     opt.threshold_pct, opt.alpha);
  for (const auto& x : c.cases) {
    const std::string name = x.device + " " + x.label;
    out += fmt::format("<testcase classname=\"{}\" name=\"{}\">", xml_escape("gpubench." + x.suite), xml_escape(name));
    std::string message = fmt::format("{} {} (base {} {}, new {} {}): {}", verdict_name(x.verdict), change_text(x),
                                      sig3(x.base_median), x.unit, sig3(x.new_median), x.unit, x.detail);
    if (!x.suspect.empty()) message += fmt::format(" [suspect: {}]", fmt::join(x.suspect, "; "));
    if (x.verdict == Verdict::regressed) {
      out += "<failure type=\"regression\" message=\"" + xml_escape(message) + "\"/>";
    } else if (x.verdict == Verdict::ambiguous && opt.fail_on_ambiguous) {
      out += "<failure type=\"ambiguous\" message=\"" + xml_escape(message) + "\"/>";
    } else if (x.verdict == Verdict::missing || x.verdict == Verdict::ambiguous) {
      out += "<skipped message=\"" + xml_escape(message) + "\"/>";
    } else {
      out += "<system-out>" + xml_escape(message) + "</system-out>";
    }
    out += "</testcase>\n";
  }
  return out + "</testsuite>\n</testsuites>\n";
}

nlohmann::ordered_json comparison_json(const Comparison& c, const CompareOptions& opt) {
  ordered j;
  j["format"] = "gpubench-compare";
  j["format_version"] = 1;
  j["threshold_pct"] = opt.threshold_pct;
  j["alpha"] = opt.alpha;
  j["regressions"] = c.regressions();
  j["ambiguous"] = c.ambiguous();
  j["warnings"] = c.warnings;
  ordered cases = ordered::array();
  for (const auto& x : c.cases) {
    ordered o{{"suite", x.suite}, {"device", x.device}, {"device_name", x.device_name}, {"case", x.label},
              {"verdict", verdict_name(x.verdict)}, {"metric", x.metric}, {"unit", x.unit}};
    o["base"] = x.base;
    o["new"] = x.next;
    o["base_median"] = x.base_median > 0 ? ordered(x.base_median) : ordered(nullptr);
    o["new_median"] = x.new_median > 0 ? ordered(x.new_median) : ordered(nullptr);
    if (x.base_clock_mhz) o["base_clock_mhz"] = *x.base_clock_mhz;
    if (x.new_clock_mhz) o["new_clock_mhz"] = *x.new_clock_mhz;
    o["ratio"] = x.ratio > 0 ? ordered(x.ratio) : ordered(nullptr);
    o["test"] = x.test;
    o["p"] = x.test == "mann-whitney" ? ordered(x.p) : ordered(nullptr);
    o["detail"] = x.detail;
    o["suspect"] = x.suspect;
    cases.push_back(std::move(o));
  }
  j["cases"] = std::move(cases);
  return j;
}

}  // namespace gpubench::reports
