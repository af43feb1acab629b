// `gpubench serving`: curves and serve cases from results files, the projection, validation and
// the Pareto frontier over batch limits (reports/serving.hpp, docs/serving.md).
#include "reports/serving.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"

namespace gpubench::reports::serving {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

// Axes that size a step or shape the trace and the batch limit: every other axis (dtype,
// kv_page, graphs, tp, layers, threads, ...) is part of the configuration, so curves and serve
// cases combine only within one. kv_budget is the serve case's limit (its details carry it).
const std::set<std::string> kNotConfig = {"phase", "batch", "prompt_len", "context_len", "rate",
                                          "requests", "output_len", "max_batch", "kv_budget"};

std::optional<double> axis_number(const ResultEntry& e, const char* name) {
  auto it = e.axes.find(name);
  if (it == e.axes.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    try {
      std::size_t used = 0;
      const std::string s = it->get<std::string>();
      const double v = std::stod(s, &used);
      if (used == s.size()) return v;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

std::string axis_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string device_of(const ResultEntry& e) { return e.device_name.empty() ? e.device : e.device_name; }

std::string key_of(const ResultsFile& f, const ResultEntry& e) {
  std::string key = device_of(e);
  if (!e.device_name.empty() && e.device != e.device_name) key += " (" + e.device + ")";
  if (!f.host().empty()) key += " | " + f.host();
  std::string axes;
  for (const std::string& name : e.axis_names) {
    if (kNotConfig.count(name)) continue;
    auto it = e.axes.find(name);
    if (it == e.axes.end()) continue;
    axes += (axes.empty() ? "" : " ") + name + "=" + axis_text(*it);
  }
  return axes.empty() ? key : key + " | " + axes;
}

bool usable(const ResultEntry& e) {
  return e.suite == "infer" && e.status == "ok" && e.run_type != "aggregate";
}

// Linear through (x0, y0) and (x1, y1) at x.
double line(double x0, double y0, double x1, double y1, double x) {
  if (x1 == x0) return y0;
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

// Piecewise linear over sorted (xs, ys); beyond the range linear from the two end points with a
// slope of at least 0 (more work never takes less time; a noisy pair must not make it so), below
// the range never under proportional scaling from the first point (time per unit of work does not
// fall as the work shrinks). One point: proportional or constant.
double interpolate(const std::vector<double>& xs, const std::vector<double>& ys, double x, bool proportional_one,
                   bool* extrapolated) {
  const std::size_t n = xs.size();
  if (n == 1) {
    if (x != xs[0] && extrapolated) *extrapolated = true;
    return proportional_one && xs[0] > 0 ? ys[0] * x / xs[0] : ys[0];
  }
  if (x < xs[0]) {
    if (extrapolated) *extrapolated = true;
    const double slope = std::max(0.0, (ys[1] - ys[0]) / (xs[1] - xs[0]));
    const double floor = xs[0] > 0 ? ys[0] * std::max(0.0, x) / xs[0] : 0.0;
    return std::max(floor, ys[0] + slope * (x - xs[0]));
  }
  if (x > xs[n - 1]) {
    if (extrapolated) *extrapolated = true;
    const double slope = std::max(0.0, (ys[n - 1] - ys[n - 2]) / (xs[n - 1] - xs[n - 2]));
    return ys[n - 1] + slope * (x - xs[n - 1]);
  }
  const std::size_t hi = static_cast<std::size_t>(std::lower_bound(xs.begin(), xs.end(), x) - xs.begin());
  if (xs[hi] == x) return ys[hi];
  return line(xs[hi - 1], ys[hi - 1], xs[hi], ys[hi], x);
}

ki::Percentiles percentiles_from(const json& j) {
  ki::Percentiles p;
  p.mean = number_at(j, {"mean"}).value_or(0) / 1e3;
  p.p50 = number_at(j, {"p50"}).value_or(0) / 1e3;
  p.p90 = number_at(j, {"p90"}).value_or(0) / 1e3;
  p.p99 = number_at(j, {"p99"}).value_or(0) / 1e3;
  p.count = static_cast<std::int64_t>(number_at(j, {"count"}).value_or(0));
  return p;
}

std::string rate_text(double rate) { return fmt::format("{:g}", rate); }

bool same_rate(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// A measured serve case's trace and limits (gpubench.details.serve), or a reason it has none.
std::optional<ServeCase> read_serve(const ResultsFile& f, const ResultEntry& e) {
  const json* serve = nullptr;
  if (auto it = e.details.find("serve"); it != e.details.end() && it->is_object()) serve = &*it;
  if (!serve) return std::nullopt;
  ServeCase c;
  c.entry = &e;
  c.key = key_of(f, e);
  const auto num = [&](std::initializer_list<const char*> path) { return number_at(*serve, path); };
  const auto rate = num({"trace", "rate"}), requests = num({"trace", "requests"}), prompt = num({"trace", "prompt_len"}),
             output = num({"trace", "output_len"}), ratio = num({"trace", "range_ratio"}), seed = num({"trace", "seed"}),
             max_batch = num({"limits", "max_batch"});
  if (!rate || !requests || !prompt || !output || !ratio || !seed || !max_batch) return std::nullopt;
  c.trace.rate = *rate;
  c.trace.requests = static_cast<int>(std::lround(*requests));
  c.trace.prompt_len = static_cast<int>(std::lround(*prompt));
  c.trace.output_len = static_cast<int>(std::lround(*output));
  c.trace.range_ratio = *ratio;
  c.trace.seed = static_cast<std::uint64_t>(std::llround(*seed));
  if (ki::trace_error(c.trace)) return std::nullopt;
  c.limits.max_batch = static_cast<int>(std::lround(*max_batch));
  c.limits.kv_budget_tokens = static_cast<std::int64_t>(num({"limits", "kv_budget_tokens"}).value_or(0));
  c.limits.max_prefill_tokens = static_cast<std::int64_t>(num({"limits", "max_prefill_tokens"}).value_or(0));
  if (c.limits.max_batch < 1 || c.limits.kv_budget_tokens < 0 || c.limits.max_prefill_tokens < 0) return std::nullopt;
  const json& s = (*serve)["summary"];
  if (!s.is_object()) return std::nullopt;
  for (const char* m : {"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"}) {
    if (!s.contains(m) || !s[m].is_object()) return std::nullopt;
  }
  c.measured.ttft_s = percentiles_from(s["ttft_ms"]);
  c.measured.tpot_s = percentiles_from(s["tpot_ms"]);
  c.measured.itl_s = percentiles_from(s["itl_ms"]);
  c.measured.e2el_s = percentiles_from(s["e2el_ms"]);
  c.measured.requests_per_s = number_at(s, {"requests_per_s"}).value_or(0);
  c.measured.output_tokens_per_s = number_at(s, {"output_tokens_per_s"}).value_or(0);
  c.measured.output_tokens_per_s_per_user = number_at(s, {"output_tokens_per_s_per_user"}).value_or(0);
  c.measured.goodput_rps = number_at(s, {"goodput_rps"}).value_or(0);
  c.measured.duration_s = number_at(s, {"duration_s"}).value_or(0);
  c.measured.completed = static_cast<std::int64_t>(number_at(s, {"completed"}).value_or(0));
  return c;
}

struct Run {
  ki::ServeTrace trace;
  ki::ServeSummary summary;
  std::int64_t extrapolated_prefills = 0, extrapolated_decodes = 0;
};

constexpr double kMaxSimulatedTokens = 2e8;

Run simulate(const StepCurves& curves, const ki::TraceSpec& spec, const ki::Limits& limits, const ki::Slo& slo) {
  ki::ManualClock clock;
  CurveRunner runner(curves, clock);
  Run r;
  try {
    r.trace = ki::serve(ki::make_trace(spec), limits, runner, clock);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  r.summary = ki::summarize(r.trace, slo);
  r.extrapolated_prefills = runner.extrapolated_prefills;
  r.extrapolated_decodes = runner.extrapolated_decodes;
  return r;
}

// The batch limits of the Pareto sweep: 1, 2, 4, ... up to the largest measured decode batch
// (and that batch itself).
std::vector<int> batch_limits(int largest) {
  std::vector<int> out;
  for (int b = 1; b <= largest; b *= 2) out.push_back(b);
  if (out.empty() || out.back() != largest) out.push_back(std::max(1, largest));
  return out;
}

// On the frontier: no other batch limit is at least as good on both figures and better on one;
// of limits with the same figures (a limit the trace never reaches) only the smallest.
void mark_frontier(std::vector<ParetoPoint>& points) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    ParetoPoint& p = points[i];
    p.frontier = true;
    for (std::size_t k = 0; k < points.size() && p.frontier; ++k) {
      const ParetoPoint& q = points[k];
      const bool same = q.output_tokens_per_s == p.output_tokens_per_s &&
                        q.output_tokens_per_s_per_user == p.output_tokens_per_s_per_user;
      const bool dominates = q.output_tokens_per_s >= p.output_tokens_per_s &&
                             q.output_tokens_per_s_per_user >= p.output_tokens_per_s_per_user && !same;
      if (dominates || (same && k < i)) p.frontier = false;
    }
  }
}

std::vector<ValidationRow> compare(const ServeCase& c, const Config& cfg, const ki::ServeSummary& projected) {
  std::vector<ValidationRow> rows;
  const std::pair<const char*, const ki::Percentiles*> measured[] = {
      {"ttft_ms", &c.measured.ttft_s}, {"tpot_ms", &c.measured.tpot_s}, {"itl_ms", &c.measured.itl_s}, {"e2el_ms", &c.measured.e2el_s}};
  const ki::Percentiles* proj[] = {&projected.ttft_s, &projected.tpot_s, &projected.itl_s, &projected.e2el_s};
  for (std::size_t m = 0; m < 4; ++m) {
    const ki::Percentiles& a = *measured[m].second;
    const ki::Percentiles& b = *proj[m];
    const std::pair<const char*, double> pairs[] = {{"p50", a.p50}, {"p90", a.p90}, {"p99", a.p99}};
    const double projected_values[] = {b.p50, b.p90, b.p99};
    for (std::size_t k = 0; k < 3; ++k) {
      ValidationRow row;
      row.key = cfg.key;
      row.device = cfg.device;
      row.model = cfg.model;
      row.case_name = c.entry->name;
      row.rate = c.trace.rate;
      row.trace = fmt::format("{} x {}/{} tokens", c.trace.requests, c.trace.prompt_len, c.trace.output_len);
      row.metric = measured[m].first;
      row.percentile = pairs[k].first;
      row.measured = pairs[k].second * 1e3;
      row.projected = projected_values[k] * 1e3;
      if (row.measured > 0) row.error_pct = 100 * (row.projected - row.measured) / row.measured;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace

double StepCurves::prefill_s(double batch, double prompt_len, bool* extrapolated) const {
  if (prefill.empty()) throw std::logic_error("serving: no prefill curve");
  // Along prompt_len within each measured batch, then across the batches (as decode_s).
  std::vector<double> batches, at_batch;
  std::size_t i = 0;
  while (i < prefill.size()) {
    std::vector<double> xs, ys;
    const double b = prefill[i].batch;
    for (; i < prefill.size() && prefill[i].batch == b; ++i) xs.push_back(prefill[i].prompt_len), ys.push_back(prefill[i].seconds);
    batches.push_back(b);
    at_batch.push_back(interpolate(xs, ys, prompt_len, true, extrapolated));
  }
  return interpolate(batches, at_batch, batch, true, extrapolated);
}

double StepCurves::decode_s(double batch, double context, bool* extrapolated) const {
  if (decode.empty()) throw std::logic_error("serving: no decode curve");
  // Along context within each measured batch, then across the batches.
  std::vector<double> batches, at_batch;
  std::size_t i = 0;
  while (i < decode.size()) {
    std::vector<double> xs, ys;
    const double b = decode[i].batch;
    for (; i < decode.size() && decode[i].batch == b; ++i) xs.push_back(decode[i].context), ys.push_back(decode[i].seconds);
    batches.push_back(b);
    at_batch.push_back(interpolate(xs, ys, context, false, extrapolated));
  }
  return interpolate(batches, at_batch, batch, false, extrapolated);
}

int StepCurves::largest_decode_batch() const {
  double b = 1;
  for (const DecodePoint& p : decode) b = std::max(b, p.batch);
  return static_cast<int>(b);
}

void CurveRunner::prefill(const std::vector<const ki::Request*>& admitted) {
  double tokens = 0;
  for (const ki::Request* r : admitted) tokens += r->prompt_len;
  bool out = false;
  const double batch = static_cast<double>(admitted.size());
  clock_.advance(curves_.prefill_s(batch, tokens / batch, &out));
  extrapolated_prefills += out;
}

void CurveRunner::decode(const std::vector<const ki::Request*>& running, const std::vector<std::int64_t>& context) {
  double sum = 0;
  for (std::int64_t c : context) sum += static_cast<double>(c);
  bool out = false;
  clock_.advance(curves_.decode_s(static_cast<double>(running.size()), sum / static_cast<double>(context.size()), &out));
  extrapolated_decodes += out;
}

std::vector<Config> configs(const std::vector<ResultsFile>& files, std::vector<std::string>* notes) {
  struct Acc {
    Config cfg;
    std::map<std::pair<double, double>, std::pair<double, int>> prefill;   // (batch, prompt_len) -> (sum s, n)
    std::map<std::pair<double, double>, std::pair<double, int>> decode;    // (batch, context) -> (sum s, n)
  };
  std::map<std::string, Acc> by_key;
  std::vector<std::string> order;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (!usable(e) || !e.real_time_s || !(*e.real_time_s > 0) || !std::isfinite(*e.real_time_s)) continue;
      const std::string phase = e.axes.contains("phase") ? axis_text(e.axes["phase"]) : "";
      if (phase != "prefill" && phase != "decode") continue;
      const auto batch = axis_number(e, "batch");
      const auto len = axis_number(e, phase == "prefill" ? "prompt_len" : "context_len");
      if (!batch || !len || *batch < 1 || *len < 0) continue;
      const std::string key = key_of(f, e);
      auto [it, fresh] = by_key.try_emplace(key);
      if (fresh) {
        order.push_back(key);
        it->second.cfg.key = key;
        it->second.cfg.device = device_of(e);
        it->second.cfg.host = f.host();
        it->second.cfg.model = e.axes.contains("model") ? axis_text(e.axes["model"]) : "";
      }
      auto& slot = phase == "prefill" ? it->second.prefill[{*batch, *len}] : it->second.decode[{*batch, *len}];
      slot.first += *e.real_time_s;
      slot.second += 1;
    }
  }
  std::vector<Config> out;
  for (const std::string& key : order) {
    Acc& a = by_key[key];
    if (a.prefill.empty() || a.decode.empty()) {
      if (notes) {
        notes->push_back(fmt::format("{}: only {} entries, no projection (it needs phase=prefill and phase=decode)", key,
                                     a.prefill.empty() ? "decode" : "prefill"));
      }
      continue;
    }
    for (const auto& [bl, s] : a.prefill) a.cfg.curves.prefill.push_back({bl.first, bl.second, s.first / s.second});
    for (const auto& [bc, s] : a.decode) a.cfg.curves.decode.push_back({bc.first, bc.second, s.first / s.second});
    out.push_back(std::move(a.cfg));
  }
  return out;
}

std::vector<ServeCase> serve_cases(const std::vector<ResultsFile>& files, std::vector<std::string>* notes) {
  std::vector<ServeCase> out;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (!usable(e) || !e.axes.contains("phase") || axis_text(e.axes["phase"]) != "serve") continue;
      if (auto c = read_serve(f, e)) {
        out.push_back(std::move(*c));
      } else if (notes) {
        notes->push_back(fmt::format("serve case {} in {}: gpubench.details.serve lacks a valid trace, limits or "
                                     "summary: not used", e.name, f.path.filename().string()));
      }
    }
  }
  return out;
}

ServingResult project(const std::vector<ResultsFile>& files, const ServingOptions& o) {
  ServingResult r;
  r.slo = o.slo;
  if (o.rates.empty()) throw UsageError("no --rate given");
  for (double rate : o.rates) {
    if (!(rate > 0) || !std::isfinite(rate)) throw UsageError(fmt::format("--rate: {} is not > 0", rate_text(rate)));
  }
  std::vector<Config> cfgs = configs(files, &r.notes);
  if (cfgs.empty()) {
    bool prefill = false, decode = false;
    for (const ResultsFile& f : files) {
      for (const ResultEntry& e : f.entries) {
        if (!usable(e) || !e.axes.contains("phase")) continue;
        prefill = prefill || axis_text(e.axes["phase"]) == "prefill";
        decode = decode || axis_text(e.axes["phase"]) == "decode";
      }
    }
    throw UsageError(fmt::format(
        "the files hold no {} of the infer suite with status ok for one configuration (run `gpubench run "
        "--suite infer` with phase=prefill,decode)",
        !prefill && !decode ? "phase=prefill and phase=decode entries" : !prefill ? "phase=prefill entries" : !decode ? "phase=decode entries" : "prefill and decode entries"));
  }
  const std::vector<ServeCase> cases = serve_cases(files, &r.notes);

  // The projected trace: the options, else the files' one serve trace spec, else the defaults.
  // The trace spec and the limits apart: serve cases at several batch limits over one trace
  // still give the trace.
  std::set<std::tuple<int, int, int, double>> specs;
  std::set<std::tuple<int, std::int64_t, std::int64_t>> limit_sets;
  for (const ServeCase& c : cases) {
    specs.insert({c.trace.prompt_len, c.trace.output_len, c.trace.requests, c.trace.range_ratio});
    limit_sets.insert({c.limits.max_batch, c.limits.kv_budget_tokens, c.limits.max_prefill_tokens});
  }
  ki::TraceSpec base;
  ki::Limits limits;
  base.prompt_len = 128, base.output_len = 32, base.requests = 64, limits.max_batch = 16;
  auto why_not = [](std::size_t n, const char* what) {
    return n == 0 ? std::string("no serve case in the files") : fmt::format("several serve {} in the files", what);
  };
  if (specs.size() == 1) {
    std::tie(base.prompt_len, base.output_len, base.requests, base.range_ratio) = *specs.begin();
    r.notes.push_back(fmt::format("the trace not given on the command line is the files' serve case's: prompt_len {}, "
                                  "output_len {}, requests {}, range_ratio {:g}",
                                  base.prompt_len, base.output_len, base.requests, base.range_ratio));
  } else {
    r.notes.push_back(why_not(specs.size(), "trace specs") + ": the trace not given on the command line is the "
                      "default (prompt_len 128, output_len 32, requests 64, range_ratio 0.5)");
  }
  if (limit_sets.size() == 1) {
    std::tie(limits.max_batch, limits.kv_budget_tokens, limits.max_prefill_tokens) = *limit_sets.begin();
    r.notes.push_back(fmt::format("limits not given on the command line are the files' serve case's: max_batch {}, "
                                  "kv_budget_tokens {}, max_prefill_tokens {}",
                                  limits.max_batch, limits.kv_budget_tokens, limits.max_prefill_tokens));
  } else {
    r.notes.push_back(why_not(limit_sets.size(), "limits") + ": limits not given on the command line are the "
                      "default (max_batch 16, no KV budget, no prefill-token limit)");
  }
  if (o.prompt_len) base.prompt_len = *o.prompt_len;
  if (o.output_len) base.output_len = *o.output_len;
  if (o.requests) base.requests = *o.requests;
  if (o.max_batch) limits.max_batch = *o.max_batch;
  base.seed = o.seed;

  // The work to simulate: every (rate, configuration) runs the trace once, once per batch limit of
  // the Pareto sweep and once per matching serve case; each run visits every output token. At
  // about 4 million tokens a second (measured on the build VM), more than kMaxSimulatedTokens in
  // all would take minutes: refused before anything runs, naming the knobs.
  {
    const double per_run = static_cast<double>(base.requests) * base.output_len * (1 + base.range_ratio);
    double total = 0;
    for (const Config& cfg : cfgs) total += per_run * static_cast<double>(1 + batch_limits(cfg.curves.largest_decode_batch()).size());
    total *= static_cast<double>(o.rates.size());
    if (total > kMaxSimulatedTokens) {
      throw UsageError(fmt::format("serving: {} requests of up to {:.0f} output tokens at {} rate(s) over {} configuration(s) "
                                   "and the Pareto sweep mean about {:.3g} tokens to simulate, more than {:.0e}: lower "
                                   "--requests, --output-len or the number of rates",
                                   base.requests, base.output_len * (1 + base.range_ratio), o.rates.size(), cfgs.size(),
                                   total, kMaxSimulatedTokens));
    }
  }
  std::int64_t extra_prefill = 0, extra_decode = 0;
  std::set<std::string> batch_notes;
  for (double rate : o.rates) {
    for (const Config& cfg : cfgs) {
      ki::TraceSpec spec = base;
      spec.rate = rate;
      if (auto e = ki::trace_error(spec)) throw UsageError("the trace: " + *e);
      Point p;
      p.key = cfg.key, p.device = cfg.device, p.host = cfg.host, p.model = cfg.model, p.rate = rate;
      p.trace = spec;
      p.limits = limits;
      const Run run = simulate(cfg.curves, spec, limits, o.slo);
      p.summary = run.summary;
      p.prefill_steps = run.trace.prefill_steps, p.decode_steps = run.trace.decode_steps;
      p.largest_batch = run.trace.largest_batch;
      extra_prefill += run.extrapolated_prefills, extra_decode += run.extrapolated_decodes;
      const int largest = cfg.curves.largest_decode_batch();
      if (run.trace.largest_batch > largest) {
        batch_notes.insert(fmt::format("{}: batches of up to {} decoded at rate {}, beyond the largest measured decode "
                                       "batch {} (extrapolated)", cfg.key, run.trace.largest_batch, rate_text(rate), largest));
      }
      for (int mb : batch_limits(largest)) {
        ki::Limits l = limits;
        l.max_batch = mb;
        const Run sweep = simulate(cfg.curves, spec, l, o.slo);
        p.pareto.push_back({mb, sweep.summary.output_tokens_per_s, sweep.summary.output_tokens_per_s_per_user, false});
      }
      mark_frontier(p.pareto);
      for (const ServeCase& c : cases) {
        if (c.key != cfg.key || !same_rate(c.trace.rate, rate)) continue;
        const Run same = simulate(cfg.curves, c.trace, c.limits, o.slo);
        std::vector<ValidationRow> rows = compare(c, cfg, same.summary);
        p.validation.insert(p.validation.end(), rows.begin(), rows.end());
        r.validation.insert(r.validation.end(), rows.begin(), rows.end());
      }
      r.points.push_back(std::move(p));
    }
  }
  for (const ServeCase& c : cases) {
    bool matched = false, config = false;
    for (const Config& cfg : cfgs) config = config || cfg.key == c.key;
    for (double rate : o.rates) matched = matched || same_rate(rate, c.trace.rate);
    if (!config) r.notes.push_back(fmt::format("serve case {} has no prefill and decode curves of its configuration: not validated", c.entry->name));
    else if (!matched) r.notes.push_back(fmt::format("serve case {} (rate {}) is at none of the projected rates: not validated", c.entry->name, rate_text(c.trace.rate)));
  }
  if (extra_prefill > 0) {
    r.notes.push_back(fmt::format("{} prefill steps fell outside the measured (batch, prompt_len) range and were "
                                  "extrapolated (linearly from the two outermost points, or proportionally when one was "
                                  "measured)", extra_prefill));
  }
  if (extra_decode > 0) {
    r.notes.push_back(fmt::format("{} decode steps fell outside the measured (batch, context_len) grid and were "
                                  "extrapolated (linearly from the two outermost points, or held constant along an axis with one measured value)", extra_decode));
  }
  r.notes.insert(r.notes.end(), batch_notes.begin(), batch_notes.end());
  r.assumptions = {
      "the scheduler is the infer suite's (kernels/infer/scheduler.hpp): first come first served, prefills first, one "
      "prefill step for the requests admitted together, then decode steps of every running request (continuous batching)",
      "a request's whole KV cache (prompt + output tokens) is reserved at admission: no preemption",
      "a prefill step's time is bilinear in its batch (the prompts admitted together) and their mean length over the "
      "measured (batch, prompt_len) grid",
      "a decode step's time is bilinear in its batch and its requests' mean context length over the measured "
      "(batch, context_len) grid",
      "step times are the measured means (repetitions averaged); no scheduling overhead, sampling or detokenization "
      "between steps; arrivals are Poisson, lengths uniform in [L (1 - r), L (1 + r)] (vLLM's random dataset)",
      "TTFT, TPOT, ITL, E2EL with vLLM's definitions (benchmarks/benchmark_serving.py); percentiles by linear "
      "interpolation (numpy's default)"};
  return r;
}

namespace {

ojson percentiles_json(const ki::Percentiles& p) {
  return {{"mean", p.mean * 1e3}, {"p50", p.p50 * 1e3}, {"p90", p.p90 * 1e3}, {"p99", p.p99 * 1e3}, {"count", p.count}};
}

ojson optional_ms(const std::optional<double>& s) { return s ? ojson(*s * 1e3) : ojson(nullptr); }

ojson row_json(const ValidationRow& v) {
  return {{"key", v.key},           {"device", v.device},     {"model", v.model},
          {"case", v.case_name},    {"rate", v.rate},         {"trace", v.trace},       {"metric", v.metric},
          {"percentile", v.percentile}, {"measured", v.measured}, {"projected", v.projected},
          {"error_pct", v.error_pct ? ojson(*v.error_pct) : ojson(nullptr)}};
}

std::string ms(double seconds) { return sig3(seconds * 1e3); }

}  // namespace

nlohmann::ordered_json to_json(const ServingResult& r) {
  ojson out;
  out["model"] = "the infer suite's scheduler over the seeded trace, each step's time read from the measured prefill "
                 "and decode curves (docs/serving.md)";
  out["slo"] = {{"ttft_ms", optional_ms(r.slo.ttft_s)},
                {"tpot_ms", optional_ms(r.slo.tpot_s)},
                {"itl_ms", optional_ms(r.slo.itl_s)},
                {"e2el_ms", optional_ms(r.slo.e2el_s)}};
  out["assumptions"] = r.assumptions;
  out["notes"] = r.notes;
  auto& points = out["points"] = ojson::array();
  for (const Point& p : r.points) {
    ojson j;
    j["rate"] = p.rate;
    j["device"] = p.device;
    j["host"] = p.host;
    j["model"] = p.model;
    j["key"] = p.key;
    j["trace"] = {{"rate", p.trace.rate},           {"requests", p.trace.requests},       {"prompt_len", p.trace.prompt_len},
                  {"output_len", p.trace.output_len}, {"range_ratio", p.trace.range_ratio}, {"seed", p.trace.seed}};
    j["limits"] = {{"max_batch", p.limits.max_batch},
                   {"kv_budget_tokens", p.limits.kv_budget_tokens},
                   {"max_prefill_tokens", p.limits.max_prefill_tokens}};
    j["ttft_ms"] = percentiles_json(p.summary.ttft_s);
    j["tpot_ms"] = percentiles_json(p.summary.tpot_s);
    j["itl_ms"] = percentiles_json(p.summary.itl_s);
    j["e2el_ms"] = percentiles_json(p.summary.e2el_s);
    j["requests_per_s"] = p.summary.requests_per_s;
    j["output_tokens_per_s"] = p.summary.output_tokens_per_s;
    j["output_tokens_per_s_per_user"] = p.summary.output_tokens_per_s_per_user;
    j["goodput_rps"] = p.summary.goodput_rps;
    j["good"] = p.summary.good;
    j["completed"] = p.summary.completed;
    j["duration_s"] = p.summary.duration_s;
    j["steps"] = {{"prefill", p.prefill_steps}, {"decode", p.decode_steps}, {"largest_batch", p.largest_batch}};
    auto& pareto = j["pareto"] = ojson::array();
    for (const ParetoPoint& q : p.pareto) {
      pareto.push_back({{"max_batch", q.max_batch},
                        {"output_tokens_per_s", q.output_tokens_per_s},
                        {"output_tokens_per_s_per_user", q.output_tokens_per_s_per_user},
                        {"frontier", q.frontier}});
    }
    auto& validation = j["validation"] = ojson::array();
    for (const ValidationRow& v : p.validation) validation.push_back(row_json(v));
    points.push_back(std::move(j));
  }
  auto& validation = out["validation"] = ojson::array();
  for (const ValidationRow& v : r.validation) validation.push_back(row_json(v));
  return out;
}

Document to_document(const ServingResult& r) {
  Document doc;
  doc.title = "gpubench serving";
  doc.paragraph("Serving projected from measured step times: the infer suite's continuous-batching scheduler runs over "
                "the seeded request trace, each prefill and decode step taking the time read from the measured "
                "prefill and decode curves of the same configuration (docs/serving.md). Latencies with vLLM's "
                "definitions; percentiles in milliseconds.");
  std::vector<std::string> slo;
  if (r.slo.ttft_s) slo.push_back("TTFT <= " + format_duration(*r.slo.ttft_s));
  if (r.slo.tpot_s) slo.push_back("TPOT <= " + format_duration(*r.slo.tpot_s));
  if (r.slo.itl_s) slo.push_back("ITL <= " + format_duration(*r.slo.itl_s));
  if (r.slo.e2el_s) slo.push_back("E2EL <= " + format_duration(*r.slo.e2el_s));
  std::string joined;
  for (const std::string& s : slo) joined += (joined.empty() ? "" : ", ") + s;
  doc.paragraph(slo.empty() ? "No SLO given: goodput counts every request." : "Goodput counts requests meeting " + joined + ".");
  doc.heading("Projection per rate", 3);
  Table t;
  t.add_column("rate (req/s)", true);
  t.add_column("configuration");
  for (const char* c : {"TTFT p50", "TTFT p90", "TTFT p99", "TPOT p50", "TPOT p90", "TPOT p99", "ITL p99", "E2EL p50",
                        "E2EL p99", "req/s", "tok/s", "tok/s per user", "goodput (req/s)"}) {
    t.add_column(c, true);
  }
  for (const Point& p : r.points) {
    const ki::ServeSummary& s = p.summary;
    t.rows.push_back({rate_text(p.rate), p.key, ms(s.ttft_s.p50), ms(s.ttft_s.p90), ms(s.ttft_s.p99), ms(s.tpot_s.p50),
                      ms(s.tpot_s.p90), ms(s.tpot_s.p99), ms(s.itl_s.p99), ms(s.e2el_s.p50), ms(s.e2el_s.p99),
                      sig3(s.requests_per_s), sig3(s.output_tokens_per_s), sig3(s.output_tokens_per_s_per_user),
                      sig3(s.goodput_rps)});
  }
  doc.table(std::move(t));
  doc.heading("Validation", 3);
  if (r.validation.empty()) {
    doc.paragraph("No phase=serve case of a projected configuration and rate is in the files, so nothing validates the "
                  "projection.");
  } else {
    Table v;
    v.add_column("configuration");
    v.add_column("rate (req/s)", true);
    v.add_column("trace (requests x prompt/output)");
    v.add_column("metric");
    v.add_column("percentile");
    v.add_column("measured (ms)", true);
    v.add_column("projected (ms)", true);
    v.add_column("error", true);
    for (const ValidationRow& row : r.validation) {
      v.rows.push_back({row.device + " " + row.model, rate_text(row.rate), row.trace, row.metric, row.percentile, sig3(row.measured),
                        sig3(row.projected), row.error_pct ? percent_change(*row.error_pct) : "-"});
    }
    doc.table(std::move(v));
  }
  doc.heading("Pareto frontier: tokens/s per device vs per user over batch limits", 3);
  Table pt;
  pt.add_column("rate (req/s)", true);
  pt.add_column("configuration");
  pt.add_column("max_batch", true);
  pt.add_column("tok/s", true);
  pt.add_column("tok/s per user", true);
  pt.add_column("on the frontier");
  for (const Point& p : r.points) {
    ScatterChart chart;
    chart.title = fmt::format("{} req/s: {} {} ({})", rate_text(p.rate), p.device, p.model, p.host);  // the table has the whole key
    chart.x_title = "output tokens/s per user";
    chart.y_title = "output tokens/s per device";
    chart.legend = {"Pareto frontier"};
    std::vector<std::pair<double, std::size_t>> frontier;
    for (const ParetoPoint& q : p.pareto) {
      pt.rows.push_back({rate_text(p.rate), p.key, std::to_string(q.max_batch), sig3(q.output_tokens_per_s),
                         sig3(q.output_tokens_per_s_per_user), q.frontier ? "yes" : ""});
      if (q.frontier) frontier.push_back({q.output_tokens_per_s_per_user, chart.points.size()});
      chart.points.push_back({"max_batch " + std::to_string(q.max_batch), q.output_tokens_per_s_per_user,
                              q.output_tokens_per_s, q.frontier ? 1 : 0});
    }
    std::sort(frontier.begin(), frontier.end());
    for (const auto& f : frontier) chart.frontier.push_back(f.second);
    doc.chart(std::move(chart));
  }
  doc.table(std::move(pt));
  doc.assumptions_and_notes(r.assumptions, r.notes);
  return doc;
}

}  // namespace gpubench::reports::serving
