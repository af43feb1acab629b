// The report's low-precision section (reports/low_precision_section.hpp).
#include "reports/low_precision_section.hpp"

#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {
namespace {

constexpr const char* kFp8Gemm = "fp8-e4m3";  // the forward GEMMs' dtype in fp8 recipes
constexpr const char* kBf16Gemm = "bf16";
constexpr const char* kFp8Step = "fp8";
constexpr const char* kBf16Step = "bf16-amp";

// Every axis but `except`, as "a=1 b=2": the key that pairs two cases differing only there.
std::string other_axes(const ResultEntry& e, const char* except) {
  std::string out;
  for (const std::string& axis : e.axis_names) {
    if (axis != except) out += axis + "=" + axis_text(e, axis) + " ";
  }
  return out;
}

bool usable(const ResultEntry& e) { return e.run_type == "iteration" && e.status == "ok"; }

// Sums of bf16 and fp8 times over the GEMMs measured in both, for one device, provider and model.
struct GemmGroup {
  std::string device, provider, model;
  int pairs = 0;
  double bf16_s = 0, fp8_s = 0;
  double speedup() const { return fp8_s > 0 ? bf16_s / fp8_s : 0; }
};

struct StepPair {
  std::string device, device_id, what;  // device_id: file|device, the key of its GEMM speed-up
  double bf16_tps = 0, fp8_tps = 0;
  std::optional<double> gemm_fraction;  // the bf16 step's dense GEMM share
};

}  // namespace

void low_precision_section(Document& doc, const std::vector<ResultsFile>& files) {
  const bool several = files.size() > 1;
  // GEMMs: file|device|every axis but dtype -> dtype -> time.
  std::map<std::string, std::map<std::string, const ResultEntry*>> gemm_pairs;
  std::map<std::string, std::string> gemm_group_of;  // pair key -> group key
  std::map<std::string, GemmGroup> groups;
  std::vector<std::string> group_order;
  // Steps: file|device|every axis but precision -> precision -> entry.
  std::map<std::string, std::map<std::string, const ResultEntry*>> step_pairs;
  std::map<std::string, StepPair> steps;
  std::vector<std::string> step_order;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (!usable(e)) continue;
      if (e.suite == "gemm") {
        const std::string dtype = axis_text(e, "dtype");
        if ((dtype != kFp8Gemm && dtype != kBf16Gemm) || !e.real_time_s || *e.real_time_s <= 0) continue;
        const std::string key = f.path.string() + "|" + e.device + "|" + other_axes(e, "dtype");
        gemm_pairs[key][dtype] = &e;
        const std::string model = axis_text(e, "model");
        const std::string group = f.path.string() + "|" + e.device + "|" + axis_text(e, "provider") + "|" + model;
        gemm_group_of[key] = group;
        if (!groups.count(group)) {
          group_order.push_back(group);
          groups[group] = {device_label(f, e, several), axis_text(e, "provider"),
                           model.empty() || model == "none" ? "m, n, k shapes" : model};
        }
      } else if (e.suite == "train") {
        const std::string precision = axis_text(e, "precision");
        if (precision != kFp8Step && precision != kBf16Step) continue;
        const std::string rest = other_axes(e, "precision");
        const std::string key = f.path.string() + "|" + e.device + "|" + rest;
        step_pairs[key][precision] = &e;
        if (!steps.count(key)) {
          step_order.push_back(key);
          steps[key] = {device_label(f, e, several), f.path.string() + "|" + e.device,
                        rest.empty() ? rest : rest.substr(0, rest.size() - 1)};
        }
      }
    }
  }
  for (const auto& [key, by] : gemm_pairs) {
    if (by.size() != 2) continue;
    GemmGroup& g = groups[gemm_group_of[key]];
    ++g.pairs;
    g.bf16_s += *by.at(kBf16Gemm)->real_time_s;
    g.fp8_s += *by.at(kFp8Gemm)->real_time_s;
  }
  // Per device (file|device): every paired GEMM's times, for the Amdahl bound of its steps.
  std::map<std::string, GemmGroup> per_device;
  for (const std::string& key : group_order) {
    const GemmGroup& g = groups[key];
    if (g.pairs == 0) continue;
    GemmGroup& d = per_device[key.substr(0, key.find('|', key.find('|') + 1))];
    d.pairs += g.pairs;
    d.bf16_s += g.bf16_s;
    d.fp8_s += g.fp8_s;
  }
  std::vector<StepPair> step_rows;
  for (const std::string& key : step_order) {
    const auto& by = step_pairs[key];
    if (by.size() != 2) continue;
    StepPair s = steps[key];
    const auto b = number_at(by.at(kBf16Step)->metrics, {"tokens_per_s"});
    const auto f = number_at(by.at(kFp8Step)->metrics, {"tokens_per_s"});
    if (!b || !f || *b <= 0 || *f <= 0) continue;
    s.bf16_tps = *b;
    s.fp8_tps = *f;
    s.gemm_fraction = number_at(by.at(kBf16Step)->details, {"step_split", "dense_gemm_fraction"});
    step_rows.push_back(std::move(s));
  }
  bool any_gemm = false;
  for (const auto& [key, g] : groups) any_gemm = any_gemm || g.pairs > 0;
  if (!any_gemm && step_rows.empty()) return;

  doc.heading("Low precision: fp8 against bf16");
  doc.paragraph("What fp8 buys where both were measured on one device. GEMM-only: the same GEMMs in fp8-e4m3 and bf16 "
                "(every other axis equal), the sum of bf16 times over the sum of fp8 times. Step: train cases that "
                "differ only in precision=bf16-amp|fp8, tokens/s. Not sped up: the bf16 step's share outside its dense "
                "GEMMs (attention, norms, optimizer, communication), which fp8 leaves as it is; the bound is the step "
                "speed-up Amdahl's law allows from it and the device's GEMM-only speed-up, 1 / ((1 - f) + f / s).");
  if (any_gemm) {
    doc.heading("GEMM-only speed-up", 3);
    Table t;
    for (const char* c : {"device", "provider", "model"}) t.add_column(c);
    t.add_column("GEMMs", true);
    t.add_column("bf16 ms", true);
    t.add_column("fp8 ms", true);
    t.add_column("speed-up", true);
    for (const std::string& key : group_order) {
      const GemmGroup& g = groups[key];
      if (g.pairs == 0) continue;
      t.rows.push_back({g.device, g.provider, g.model, std::to_string(g.pairs), sig3(1e3 * g.bf16_s), sig3(1e3 * g.fp8_s),
                        decimal(g.speedup(), 2) + "x"});
    }
    doc.table(std::move(t));
  }
  if (!step_rows.empty()) {
    doc.heading("Training-step speed-up", 3);
    Table t;
    for (const char* c : {"device", "case"}) t.add_column(c);
    t.add_column("bf16-amp tokens/s", true);
    t.add_column("fp8 tokens/s", true);
    t.add_column("step speed-up", true);
    t.add_column("not sped up", true);
    t.add_column("GEMM-only speed-up", true);
    t.add_column("bound", true);
    for (const StepPair& s : step_rows) {
      std::string share, gemm, bound;
      if (s.gemm_fraction) share = decimal(100 * (1 - *s.gemm_fraction), 1) + "%";
      if (auto it = per_device.find(s.device_id); it != per_device.end() && it->second.speedup() > 0) {
        const double speedup = it->second.speedup();
        gemm = decimal(speedup, 2) + "x";
        if (s.gemm_fraction) {
          const double f = *s.gemm_fraction;
          bound = decimal(1 / ((1 - f) + f / speedup), 2) + "x";
        }
      }
      t.rows.push_back({s.device, s.what, sig3(s.bf16_tps), sig3(s.fp8_tps), decimal(s.fp8_tps / s.bf16_tps, 2) + "x",
                        share, gemm, bound});
    }
    doc.table(std::move(t));
  }
}

}  // namespace gpubench::reports
