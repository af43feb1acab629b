// Plausibility rules (see plausibility.hpp and docs/plausibility.md).
#include "reports/plausibility.hpp"

#include <algorithm>
#include <map>
#include <iterator>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "bench/core/device.hpp"

namespace gpubench::plausibility {
namespace {

template <class J>
std::optional<double> positive_number(const J& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->template get<double>();
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

template <class J>
std::string text(const J& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->template get<std::string>() : std::string();
}

std::string rate_text(double v, const std::string& unit) { return fmt::format("{:.4g} {}", v, unit); }

// What the datasheet rule needs besides the figures: the clock each assumes and each device's
// maximum clock. A CUDA device boosting above the assumed clock gets the figure scaled up.
struct ClockContext {
  const ClockLookup& clock;
  const std::map<std::string, double>& max_mhz;  // device id -> maximum SM clock
  double scale(const std::string& device, const std::string& device_name, const std::string& key) const {
    if (!clock || device.rfind("cuda", 0) != 0) return 1;
    auto max = max_mhz.find(device);
    if (max == max_mhz.end()) return 1;
    const std::optional<double> assumed = clock(device_name, key);
    if (!assumed || *assumed <= 0) return 1;
    return std::max(1.0, max->second / *assumed);
  }
};

// "989.5 TFLOP/s" or, where the device boosts above the clock it assumes,
// "989.5 TFLOP/s (1071 TFLOP/s at the device's maximum clock)".
std::string datasheet_text(double datasheet, double scale, const std::string& unit) {
  if (scale <= 1) return rate_text(datasheet, unit);
  return fmt::format("{} ({} at the device's maximum clock)", rate_text(datasheet, unit),
                     rate_text(datasheet * scale, unit));
}

template <class J>
std::optional<Figure> make_figure(const std::string& name, const std::string& suite, const std::string& device,
                                  const std::string& device_name, const J& axes, const J& metrics,
                                  const PeakLookup& datasheet, const ClockContext& clocks) {
  Figure f;
  f.peak_key = text(metrics, "peak_key");
  if (f.peak_key.empty()) return std::nullopt;
  std::optional<double> rate;
  if (f.peak_key == "memory_bandwidth") {
    rate = positive_number(metrics, "gbps");
    f.unit = "GB/s";
  } else {
    // The hardware's own rate where it runs more FLOPs than the model counts (recompute).
    rate = positive_number(metrics, "hardware_tflops");
    if (!rate) rate = positive_number(metrics, "tflops");
    f.unit = text(metrics, "rate_unit");
    if (f.unit.empty()) f.unit = "TFLOP/s";
  }
  if (!rate) return std::nullopt;
  f.rate = *rate;
  f.name = name;
  f.suite = suite;
  f.device = device;
  f.device_name = device_name;
  f.test = text(axes, "test");
  if (axes.is_object()) {
    auto it = axes.find("size");
    if (it != axes.end() && it->is_number_integer()) f.size = it->template get<std::int64_t>();
  }
  f.footprint = positive_number(metrics, "footprint_bytes");
  f.bytes = positive_number(metrics, "bytes");
  f.datasheet = positive_number(metrics, "peak");
  if (!f.datasheet && datasheet && device.rfind("cuda", 0) == 0) f.datasheet = datasheet(device_name, f.peak_key);
  f.clock_scale = clocks.scale(device, device_name, f.peak_key);
  return f;
}

template <class J>
std::vector<Ceiling> make_ceilings(const J& summaries, const PeakLookup& datasheet, const ClockContext& clocks) {
  std::vector<Ceiling> out;
  if (!summaries.is_object()) return out;
  auto mem = summaries.find("memory");
  if (mem == summaries.end() || !mem->is_object()) return out;
  auto devices = mem->find("devices");
  if (devices == mem->end() || !devices->is_object()) return out;
  for (auto d = devices->begin(); d != devices->end(); ++d) {
    if (!d->is_object()) continue;
    const std::string device = d.key(), device_name = text(*d, "device_name");
    auto lookup = [&](const std::string& key) -> std::optional<double> {
      if (!datasheet || device.rfind("cuda", 0) != 0) return std::nullopt;
      return datasheet(device_name, key);
    };
    if (auto bw = d->find("memory_bandwidth"); bw != d->end() && bw->is_object()) {
      if (auto gbps = positive_number(*bw, "gbps")) {
        Ceiling c{device, "memory_bandwidth", "GB/s", text(*bw, "test"), *gbps, lookup("memory_bandwidth"),
                  clocks.scale(device, device_name, "memory_bandwidth"), std::nullopt};
        if (auto s = bw->find("size"); s != bw->end() && s->is_number_integer()) c.size = s->template get<std::int64_t>();
        out.push_back(std::move(c));
      }
    }
    if (auto peaks = d->find("peak"); peaks != d->end() && peaks->is_object()) {
      for (auto p = peaks->begin(); p != peaks->end(); ++p) {
        auto tflops = positive_number(*p, "tflops");
        if (!tflops) continue;
        const std::string unit = p.key().rfind("int", 0) == 0 ? "TOP/s" : "TFLOP/s";
        out.push_back({device, p.key(), unit, text(*p, "test"), *tflops, lookup(p.key()),
                       clocks.scale(device, device_name, p.key()), std::nullopt});
      }
    }
  }
  return out;
}

template <class J>
J* ceiling_object(J& summaries, const Ceiling& c) {
  if (!summaries.is_object()) return nullptr;
  auto mem = summaries.find("memory");
  if (mem == summaries.end()) return nullptr;
  auto devices = mem->find("devices");
  if (devices == mem->end()) return nullptr;
  auto d = devices->find(c.device);
  if (d == devices->end()) return nullptr;
  if (c.key == "memory_bandwidth") {
    auto bw = d->find("memory_bandwidth");
    return bw == d->end() ? nullptr : &*bw;
  }
  auto peaks = d->find("peak");
  if (peaks == d->end()) return nullptr;
  auto p = peaks->find(c.key);
  return p == peaks->end() ? nullptr : &*p;
}

template <class J>
std::vector<std::string> reasons_in(const J& object) {
  std::vector<std::string> out;
  if (!object.is_object()) return out;
  auto it = object.find("suspect");
  if (it == object.end() || !it->is_array()) return out;
  for (const auto& r : *it) {
    if (r.is_string()) out.push_back(r.template get<std::string>());
  }
  return out;
}

template <class J>
void write_reasons(J& object, const std::vector<std::string>& reasons) {
  if (reasons.empty()) {
    object.erase("suspect");
  } else {
    object["suspect"] = reasons;
  }
}

}  // namespace

PeakLookup memoized(PeakLookup lookup) {
  if (!lookup) return lookup;
  auto cache = std::make_shared<std::map<std::pair<std::string, std::string>, std::optional<double>>>();
  return [lookup = std::move(lookup), cache](const std::string& name, const std::string& key) {
    auto [it, added] = cache->try_emplace({name, key});
    if (added) it->second = lookup(name, key);
    return it->second;
  };
}

bool is_own_reason(std::string_view reason) {
  for (std::string_view p : {kAboveDatasheet, kAboveCeiling, kSuspectCeiling, kAboveCpuPeak}) {
    if (reason.substr(0, p.size()) == p) return true;
  }
  return false;
}

std::vector<std::string> merge_reasons(const std::vector<std::string>& existing, const std::vector<std::string>& fresh) {
  std::vector<std::string> out;
  for (const auto& r : existing) {
    if (!is_own_reason(r) && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  for (const auto& r : fresh) {
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

// `visit(id, device)` for each device with an id of a results file's context
// (context.gpubench.devices[]).
template <class J, class Visit>
void for_each_device(const J& context, Visit&& visit) {
  if (!context.is_object()) return;
  auto g = context.find("gpubench");
  if (g == context.end() || !g->is_object()) return;
  auto devices = g->find("devices");
  if (devices == g->end() || !devices->is_array()) return;
  for (const auto& d : *devices) {
    const std::string id = text(d, "id");
    if (!id.empty()) visit(id, d);
  }
}

// A number per device: `pick(device)` for each device with an id, where it gives one.
template <class J, class Pick>
std::map<std::string, double> per_device(const J& context, Pick&& pick) {
  std::map<std::string, double> out;
  for_each_device(context, [&](const std::string& id, const auto& d) {
    if (auto v = pick(d)) out[id] = *v;
  });
  return out;
}

template <class J>
std::map<std::string, double> max_clocks_of(const J& context) {
  return per_device(context, [](const auto& d) { return positive_number(d, "max_sm_clock_mhz"); });
}

std::map<std::string, double> max_sm_clocks(const nlohmann::json& context) { return max_clocks_of(context); }

// A GPU's L2; a CPU's last-level cache.
template <class J>
std::map<std::string, double> l2_sizes_of(const J& context) {
  return per_device(context, [](const auto& d) {
    auto cache = positive_number(d, "l2_bytes");
    return cache ? cache : positive_number(d, "last_level_cache_bytes");
  });
}

std::map<std::string, double> l2_sizes(const nlohmann::json& context) { return l2_sizes_of(context); }

template <class J>
std::map<std::string, std::map<std::string, double>> cpu_peaks_of(const J& context) {
  std::map<std::string, std::map<std::string, double>> out;
  for_each_device(context, [&](const std::string& id, const auto& d) {
    if (id.rfind("cuda", 0) == 0 || !d.is_object()) return;
    auto peaks = d.find("peak_tflops");
    if (peaks == d.end() || !peaks->is_object()) return;
    for (auto p = peaks->begin(); p != peaks->end(); ++p) {
      if (p->is_number() && p->template get<double>() > 0) out[id][p.key()] = p->template get<double>();
    }
  });
  return out;
}

std::map<std::string, std::map<std::string, double>> cpu_peaks(const nlohmann::json& context) {
  return cpu_peaks_of(context);
}

std::optional<double> cpu_peak_of(const std::map<std::string, double>& peaks, const std::string& key) {
  auto it = peaks.find(key);
  if (it == peaks.end() && key == "fp64_tensor") it = peaks.find("fp64");
  if (it == peaks.end()) return std::nullopt;
  return it->second;
}

namespace {
// Rule 4's limit on each CPU figure and ceiling, from the context's peaks.
void attach_cpu_peaks(std::vector<Figure>& figures, std::vector<Ceiling>& ceilings,
                      const std::map<std::string, std::map<std::string, double>>& peaks) {
  for (Figure& f : figures) {
    if (auto d = peaks.find(f.device); d != peaks.end()) f.cpu_peak = cpu_peak_of(d->second, f.peak_key);
  }
  for (Ceiling& c : ceilings) {
    if (auto d = peaks.find(c.device); d != peaks.end()) c.cpu_peak = cpu_peak_of(d->second, c.key);
  }
}
}  // namespace

void mark_cache_resident(std::vector<Figure>& figures, const std::map<std::string, double>& l2) {
  std::map<std::pair<std::string, std::string>, std::int64_t> largest;  // (device, test) -> size
  for (const Figure& f : figures) {
    if (f.suite != "memory" || f.peak_key != "memory_bandwidth" || !f.size) continue;
    auto& l = largest[{f.device, f.test}];
    l = std::max(l, *f.size);
  }
  for (Figure& f : figures) {
    if (f.suite != "memory" || f.peak_key != "memory_bandwidth") continue;
    const auto cache = l2.find(f.device);
    const std::optional<double> working_set = f.footprint ? f.footprint : f.bytes;
    if (cache != l2.end() && working_set) {
      f.judged = !cache_may_serve(*working_set, cache->second);
    } else if (f.size) {
      f.judged = *f.size >= largest[{f.device, f.test}];
    }
  }
}

bool sets_ceiling(const Figure& f, const Ceiling& c) {
  return f.suite == "memory" && f.device == c.device && !c.test.empty() && f.test == c.test &&
         (c.key != "memory_bandwidth" || (f.size && c.size && *f.size == *c.size));
}

Judgement judge(const std::vector<Figure>& figures, const std::vector<Ceiling>& ceilings) {
  Judgement j;
  j.figures.resize(figures.size());
  j.ceilings.resize(ceilings.size());
  auto pct = [](double a, double b) { return fmt::format("{:.1f}%", 100 * a / b); };
  for (std::size_t ci = 0; ci < ceilings.size(); ++ci) {
    const Ceiling& c = ceilings[ci];
    if (c.datasheet && c.rate > *c.datasheet * c.clock_scale * (1 + kDatasheetMargin)) {
      j.ceilings[ci].push_back(fmt::format(
          "{}the {} ceiling {} ({}) is {} of the datasheet's {}{}", kSuspectCeiling, c.key, rate_text(c.rate, c.unit),
          c.test, pct(c.rate, *c.datasheet), datasheet_text(*c.datasheet, c.clock_scale, c.unit),
          c.key == "memory_bandwidth" ? ": a size the caches hold?" : ": a loop the compiler shortened?"));
    }
    if (c.cpu_peak && c.rate > *c.cpu_peak * (1 + kDatasheetMargin)) {
      j.ceilings[ci].push_back(fmt::format("{}the {} ceiling {} ({}) is {} of the CPU's theoretical peak {} (the "
                                           "context's peak_derivation): a loop the compiler shortened?",
                                           kSuspectCeiling, c.key, rate_text(c.rate, c.unit), c.test,
                                           pct(c.rate, *c.cpu_peak), rate_text(*c.cpu_peak, c.unit)));
    }
  }
  for (std::size_t fi = 0; fi < figures.size(); ++fi) {
    const Figure& f = figures[fi];
    if (!f.judged) continue;
    if (f.datasheet && f.rate > *f.datasheet * f.clock_scale * (1 + kDatasheetMargin)) {
      j.figures[fi].push_back(fmt::format("{}{} is {} of the {} datasheet figure {}", kAboveDatasheet,
                                          rate_text(f.rate, f.unit), pct(f.rate, *f.datasheet), f.peak_key,
                                          datasheet_text(*f.datasheet, f.clock_scale, f.unit)));
    }
    if (f.cpu_peak && f.rate > *f.cpu_peak * (1 + kDatasheetMargin)) {
      j.figures[fi].push_back(fmt::format("{}{} is {} of the {} theoretical peak {} of {} (the context's "
                                          "peak_derivation: an upper bound)",
                                          kAboveCpuPeak, rate_text(f.rate, f.unit), pct(f.rate, *f.cpu_peak),
                                          f.peak_key, rate_text(*f.cpu_peak, f.unit), f.device));
    }
    for (std::size_t ci = 0; ci < ceilings.size(); ++ci) {
      const Ceiling& c = ceilings[ci];
      if (c.device != f.device || c.key != f.peak_key || sets_ceiling(f, c)) continue;
      if (c.key == "memory_bandwidth" && f.footprint && c.size && *f.footprint < static_cast<double>(*c.size)) continue;
      if (f.rate <= c.rate * (1 + kCeilingMargin)) continue;
      j.figures[fi].push_back(fmt::format("{}{} is {} of the {} ceiling the memory suite measured on {} ({}, {})",
                                          kAboveCeiling, rate_text(f.rate, f.unit), pct(f.rate, c.rate), c.key,
                                          f.device, c.test, rate_text(c.rate, c.unit)));
      j.ceilings[ci].push_back(fmt::format("{}{} beats it: {} is {} of the {} ceiling {}", kSuspectCeiling, f.name,
                                           rate_text(f.rate, f.unit), pct(f.rate, c.rate), c.key,
                                           rate_text(c.rate, c.unit)));
    }
  }
  // The memory suite entries a suspect ceiling came from carry its reasons too.
  for (std::size_t fi = 0; fi < figures.size(); ++fi) {
    for (std::size_t ci = 0; ci < ceilings.size(); ++ci) {
      if (!sets_ceiling(figures[fi], ceilings[ci])) continue;
      for (const auto& r : j.ceilings[ci]) j.figures[fi].push_back(r);
    }
  }
  return j;
}

void set_ceiling_reasons(nlohmann::json& summaries, const Ceiling& c, const std::vector<std::string>& reasons) {
  if (nlohmann::json* o = ceiling_object(summaries, c)) write_reasons(*o, merge_reasons(reasons_in(*o), reasons));
}

void mark_document(nlohmann::ordered_json& doc, const PeakLookup& datasheet, const ClockLookup& clock) {
  using OJ = nlohmann::ordered_json;
  if (!doc.is_object()) return;
  std::map<std::string, double> max_mhz;
  std::map<std::string, double> l2;
  if (auto context = doc.find("context"); context != doc.end()) {
    max_mhz = max_clocks_of(*context);
    l2 = l2_sizes_of(*context);
  }
  const ClockContext clocks{clock, max_mhz};
  auto benchmarks = doc.find("benchmarks");
  std::vector<Figure> figures;
  std::vector<OJ*> owners;  // the gpubench object of each figure's entry
  std::vector<OJ*> judged_entries;
  if (benchmarks != doc.end() && benchmarks->is_array()) {
    for (OJ& e : *benchmarks) {
      if (!e.is_object() || text(e, "run_type") != "iteration") continue;
      auto g = e.find("gpubench");
      if (g == e.end() || !g->is_object()) continue;
      judged_entries.push_back(&*g);
      if (text(*g, "status") != "ok") continue;
      static const OJ kEmpty = OJ::object();
      auto axes = g->find("axes"), metrics = g->find("metrics");
      auto f = make_figure(text(e, "name"), text(*g, "suite"), text(*g, "device"), text(*g, "device_name"),
                           axes != g->end() ? *axes : kEmpty, metrics != g->end() ? *metrics : kEmpty, datasheet,
                           clocks);
      if (!f) continue;
      figures.push_back(std::move(*f));
      owners.push_back(&*g);
    }
  }
  mark_cache_resident(figures, l2);
  OJ* summaries = nullptr;
  if (auto g = doc.find("gpubench"); g != doc.end() && g->is_object()) {
    if (auto s = g->find("summaries"); s != g->end()) summaries = &*s;
  }
  std::vector<Ceiling> ceilings = summaries ? make_ceilings(*summaries, datasheet, clocks) : std::vector<Ceiling>{};
  if (auto context = doc.find("context"); context != doc.end()) attach_cpu_peaks(figures, ceilings, cpu_peaks_of(*context));
  const Judgement j = judge(figures, ceilings);
  // Entries without a figure lose reasons these rules once gave them (none here now).
  for (OJ* g : judged_entries) {
    const auto existing = reasons_in(*g);
    if (std::any_of(existing.begin(), existing.end(), [](const std::string& r) { return is_own_reason(r); })) {
      write_reasons(*g, merge_reasons(existing, {}));
    }
  }
  for (std::size_t i = 0; i < figures.size(); ++i) write_reasons(*owners[i], merge_reasons(reasons_in(*owners[i]), j.figures[i]));
  for (std::size_t i = 0; i < ceilings.size(); ++i) {
    if (OJ* o = ceiling_object(*summaries, ceilings[i])) write_reasons(*o, merge_reasons(reasons_in(*o), j.ceilings[i]));
  }
}

const std::vector<std::string>* FileSuspects::ceiling(const std::string& device, const std::string& key) const {
  auto d = ceilings.find(device);
  if (d == ceilings.end()) return nullptr;
  auto k = d->second.find(key);
  return k == d->second.end() ? nullptr : &k->second;
}

FileSuspects judge_file(const reports::ResultsFile& file, const PeakLookup& datasheet, const ClockLookup& clock) {
  FileSuspects out;
  const std::map<std::string, double> max_mhz = max_clocks_of(file.context);
  const ClockContext clocks{clock, max_mhz};
  std::vector<Figure> figures;
  std::vector<std::size_t> owners;
  for (std::size_t i = 0; i < file.entries.size(); ++i) {
    const reports::ResultEntry& e = file.entries[i];
    if (e.run_type != "iteration") continue;
    if (!e.suspect.empty()) out.entries[i] = merge_reasons(e.suspect, {});  // other rules' reasons stay
    if (e.status != "ok") continue;
    auto f = make_figure(e.name, e.suite, e.device, e.device_name, e.axes, e.metrics, datasheet, clocks);
    if (!f) continue;
    figures.push_back(std::move(*f));
    owners.push_back(i);
  }
  mark_cache_resident(figures, l2_sizes_of(file.context));
  std::vector<Ceiling> ceilings = make_ceilings(file.summaries, datasheet, clocks);
  attach_cpu_peaks(figures, ceilings, cpu_peaks_of(file.context));
  const Judgement j = judge(figures, ceilings);
  for (std::size_t k = 0; k < figures.size(); ++k) {
    const std::size_t i = owners[k];
    std::vector<std::string> r = merge_reasons(file.entries[i].suspect, j.figures[k]);
    if (r.empty()) {
      out.entries.erase(i);
    } else {
      out.entries[i] = std::move(r);
    }
  }
  for (auto it = out.entries.begin(); it != out.entries.end();) it = it->second.empty() ? out.entries.erase(it) : std::next(it);
  for (std::size_t k = 0; k < ceilings.size(); ++k) {
    const nlohmann::json* o = ceiling_object(file.summaries, ceilings[k]);
    std::vector<std::string> r = merge_reasons(o ? reasons_in(*o) : std::vector<std::string>{}, j.ceilings[k]);
    if (!r.empty()) out.ceilings[ceilings[k].device][ceilings[k].key] = std::move(r);
  }
  return out;
}

}  // namespace gpubench::plausibility
