// The dataload summary: per device, each stage's rate against its worker count (per-core rate,
// scaling efficiency, where it saturates), DS-Analyzer's stall split for every pipeline
// configuration measured three ways, and the CPU cores a consumer needs. Shape documented in
// docs/results-format.md (`summaries.dataload`).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "bench/suites/dataload/dataload.hpp"
#include "bench/suites/dataload/stall.hpp"

namespace gpubench::suites::dataload {
namespace {

using Json = nlohmann::ordered_json;

double number(const Json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

// The point's label without some axes: "stage=read/order=random/..." .
std::string key_without(const Json& axes, std::initializer_list<const char*> drop) {
  std::string k;
  for (const auto& item : axes.items()) {
    const std::string name = item.key();
    const Json& value = item.value();
    if (std::find_if(drop.begin(), drop.end(), [&](const char* d) { return name == d; }) != drop.end()) continue;
    k += (k.empty() ? "" : "/") + name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return k;
}

// The key of a preparation stage's per-core rate: decode reads only the scale.
std::string prep_key(const std::string& stage, const Json& axes) {
  if (stage == "decode") return fmt::format("decode/scale={}", axes.value("scale", 1));
  return fmt::format("{}/scale={}/dtype={}", stage, axes.value("scale", 1), axes.value("dtype", ""));
}

struct Rate {
  std::int64_t workers;
  double samples_per_s;
};

Json scaling_json(std::vector<Rate> rates) {
  std::sort(rates.begin(), rates.end(), [](const Rate& a, const Rate& b) { return a.workers < b.workers; });
  Json j;
  double best = 0, one = 0;
  std::int64_t best_workers = 0;
  for (const Rate& r : rates) {
    if (r.samples_per_s > best) {
      best = r.samples_per_s;
      best_workers = r.workers;
    }
    if (r.workers == 1) one = r.samples_per_s;
  }
  j["best_samples_per_s"] = best;
  j["best_workers"] = best_workers;
  if (one > 0) j["per_core_samples_per_s"] = one;
  Json points = Json::array();
  for (const Rate& r : rates) {
    Json p{{"workers", r.workers}, {"samples_per_s", r.samples_per_s}};
    if (one > 0) p["efficiency"] = r.samples_per_s / (one * static_cast<double>(r.workers));
    points.push_back(std::move(p));
  }
  j["scaling"] = std::move(points);
  // Where more workers stop paying: the fewest that reach 95% of the best rate.
  for (const Rate& r : rates) {
    if (r.samples_per_s >= 0.95 * best) {
      j["saturates_at_workers"] = r.workers;
      break;
    }
  }
  return j;
}

}  // namespace

Json summarize(const std::vector<Json>& entries) {
  // device -> stage key (without workers) -> rates
  std::map<std::string, std::map<std::string, std::vector<Rate>>> rates;
  // device -> per-core CPU preparation rate at 1 worker, keyed by "decode_augment/scale=S/dtype=D"
  // (augmentation on the CPU) and "decode/scale=S" (on the GPU: the workers only decode)
  std::map<std::string, std::map<std::string, double>> prep_per_core;
  // device -> pipeline key (without io) -> io -> entry
  std::map<std::string, std::map<std::string, std::map<std::string, const Json*>>> pipelines;
  std::map<std::string, std::string> names;
  for (const Json& e : entries) {
    if (e.value("run_type", "") != "iteration") continue;
    const Json& g = e["gpubench"];
    if (g.value("status", "") != "ok" || !g.contains("metrics")) continue;
    const std::string dev = g.value("device", "");
    names[dev] = g.value("device_name", "");
    const Json& axes = g["axes"];
    const double rate = number(g["metrics"], "items_per_s");
    const std::string stage = axes.value("stage", "");
    rates[dev][key_without(axes, {"workers"})].push_back({axes.value("workers", std::int64_t{1}), rate});
    if (axes.value("workers", 0) == 1 && (stage == "decode_augment" || stage == "decode")) {
      prep_per_core[dev][prep_key(stage, axes)] = rate;
    }
    if (stage == "pipeline") pipelines[dev][key_without(axes, {"io"})][axes.value("io", "")] = &e;
  }
  if (rates.empty()) return Json::object();

  Json devices = Json::object();
  for (const auto& [dev, by_key] : rates) {
    Json d{{"device_name", names[dev]}};
    Json stages_json = Json::object();
    for (const auto& [key, r] : by_key) stages_json[key] = scaling_json(r);
    d["stages"] = std::move(stages_json);
    Json pipes = Json::array();
    for (const auto& [key, runs] : pipelines[dev]) {
      Json p{{"config", key}};
      Json per_io = Json::object();
      for (const auto& [io, entry] : runs) {
        const Json& det = (*entry)["gpubench"].value("details", Json::object());
        per_io[io] = {{"samples_per_s", number((*entry)["gpubench"]["metrics"], "items_per_s")},
                      {"step_s", number((*entry)["gpubench"]["measurement"], "mean_s")},
                      {"data_stall_share", number(det, "data_stall_share")}};
      }
      p["runs"] = per_io;
      if (runs.count("memory") && runs.count("cached") && runs.count("cold")) {
        const DsSplit s = ds_analyzer_split(number(per_io["memory"], "step_s"), number(per_io["cached"], "step_s"),
                                            number(per_io["cold"], "step_s"));
        p["ds_analyzer"] = {{"method", "Mohan et al., VLDB 2021: step time differences of synthetic, cached and cold runs"},
                            {"prep_stall_s", s.prep_stall_s},
                            {"fetch_stall_s", s.fetch_stall_s},
                            {"prep_stall_share", s.prep_share},
                            {"fetch_stall_share", s.fetch_share},
                            {"compute_share", s.compute_share}};
      }
      // What the consumer can take: the synthetic run's rate (no data waits), else its nominal
      // rate batch / step time.
      const Json& axes = runs.begin()->second->at("gpubench").at("axes");
      const double step_s = static_cast<double>(axes.value("step_us", std::int64_t{0})) * 1e-6;
      double demand = runs.count("memory") ? number(per_io["memory"], "samples_per_s") : 0;
      if (demand <= 0 && step_s > 0) demand = static_cast<double>(axes.value("batch", 1)) / step_s;
      // The workers' CPU work per sample: decode and augment, or decode alone when the GPU
      // augments; its rate per core, measured on the cpu device (the workers' host).
      const std::string prep = prep_key(axes.value("aug", "cpu") == "gpu" ? "decode" : "decode_augment", axes);
      double per_core = 0;
      for (const auto& [pdev, m] : prep_per_core) {
        if (auto it = m.find(prep); it != m.end()) per_core = it->second;
      }
      if (demand > 0) {
        p["consumer_samples_per_s"] = demand;
        if (per_core > 0) {
          p["per_core_samples_per_s"] = per_core;
          p["cores_needed"] = demand / per_core;
          p["cores_needed_note"] = fmt::format(
              "cores needed to keep this consumer fed at {:.0f} samples/s, from the per-core rate {:.0f} samples/s "
              "of {}; reads and collation not included",
              demand, per_core, prep);
        } else {
          p["cores_needed_note"] = fmt::format("no {} case at workers=1: per-core rate unknown", prep);
        }
      }
      pipes.push_back(std::move(p));
    }
    if (!pipes.empty()) d["pipelines"] = std::move(pipes);
    devices[dev] = std::move(d);
  }
  return {{"units", "samples/s; seconds"}, {"devices", std::move(devices)}};
}

}  // namespace gpubench::suites::dataload
