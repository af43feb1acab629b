// The report's low-precision section (reports/low_precision_section.hpp).
#include "reports/low_precision_section.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reports/cases.hpp"

namespace gpubench::reports {
namespace {

constexpr const char* kFp8Gemm = "fp8-e4m3";  // the forward GEMMs' dtype in fp8 recipes
constexpr const char* kBf16Gemm = "bf16";
constexpr const char* kFp8Step = "fp8";
constexpr const char* kBf16Step = "bf16-amp";

bool usable(const ResultEntry& e) { return e.run_type == "iteration" && e.status == "ok"; }

// Sums of bf16 and fp8 times over the GEMMs measured in both, for one device, provider and model.
struct GemmGroup {
  std::string device, device_id, provider, model;  // device_id: file|device
  int pairs = 0;
  double bf16_s = 0, fp8_s = 0;
  double speedup() const { return fp8_s > 0 ? bf16_s / fp8_s : 0; }
};

// Two cases that differ only in their precision axis: the bf16 one and the fp8 one.
struct Pair {
  const ResultEntry* bf16 = nullptr;
  const ResultEntry* fp8 = nullptr;
  void put(bool is_fp8, const ResultEntry& e) { (is_fp8 ? fp8 : bf16) = &e; }
  bool complete() const { return bf16 != nullptr && fp8 != nullptr; }
};

struct StepRow {
  std::string device, device_id, what;
  Pair pair;
};

// A block-scaled GEMM (mxfp8, nvfp4) with its two figures: the GEMM alone and with the
// quantisation of its inputs from bf16 (gemm_blockscaled_cublaslt.cpp's metrics).
struct BlockScaledRow {
  std::string device, dtype, what;
  double tflops, with_quantize_tflops, overhead_pct;
};

}  // namespace

void low_precision_section(Document& doc, const std::vector<ResultsFile>& files) {
  const bool several = files.size() > 1;
  // Groups of paired GEMMs (key: file|device|provider|model) and the pairs (key: file|device|the
  // other axes), each pair with its group's key; the steps likewise.
  std::map<std::string, GemmGroup> groups;
  std::vector<std::string> group_order;
  std::map<std::string, std::pair<std::string, Pair>> gemm_pairs;
  std::map<std::string, StepRow> steps;
  std::vector<std::string> step_order;
  std::vector<BlockScaledRow> block_scaled;
  for (const ResultsFile& f : files) {
    for (const ResultEntry& e : f.entries) {
      if (!usable(e)) continue;
      const std::string device_id = f.path.string() + "|" + e.device;
      if (e.suite == "gemm") {
        const std::string dtype = axis_text(e, "dtype");
        if (dtype == "mxfp8" || dtype == "nvfp4") {
          const auto tflops = number_at(e.metrics, {"tflops"});
          const auto with_q = number_at(e.metrics, {"tflops_with_quantize"});
          const auto overhead = number_at(e.metrics, {"quantize_overhead_pct"});
          if (tflops && with_q && overhead) {
            block_scaled.push_back({device_label(f, e, several), dtype, axes_label(e, "dtype"), *tflops, *with_q, *overhead});
          }
          continue;
        }
        if ((dtype != kFp8Gemm && dtype != kBf16Gemm) || !e.real_time_s || *e.real_time_s <= 0) continue;
        const std::string model = axis_text(e, "model");
        const std::string group = device_id + "|" + axis_text(e, "provider") + "|" + model;
        if (!groups.count(group)) {
          group_order.push_back(group);
          groups[group] = {device_label(f, e, several), device_id, axis_text(e, "provider"),
                           model.empty() || model == "none" ? "m, n, k shapes" : model};
        }
        auto& [pair_group, pair] = gemm_pairs[device_id + "|" + axes_label(e, "dtype")];
        pair_group = group;
        pair.put(dtype == kFp8Gemm, e);
      } else if (e.suite == "train") {
        const std::string precision = axis_text(e, "precision");
        if (precision != kFp8Step && precision != kBf16Step) continue;
        const std::string what = axes_label(e, "precision");
        const std::string key = device_id + "|" + what;
        if (!steps.count(key)) {
          step_order.push_back(key);
          steps[key] = {device_label(f, e, several), device_id, what, {}};
        }
        steps[key].pair.put(precision == kFp8Step, e);
      }
    }
  }
  // Per device: every paired GEMM's times, for the Amdahl bound of its steps.
  std::map<std::string, GemmGroup> per_device;
  for (const auto& [key, grouped] : gemm_pairs) {
    const auto& [group_key, pair] = grouped;
    if (!pair.complete()) continue;
    GemmGroup& g = groups[group_key];
    for (GemmGroup* sum : {&g, &per_device[g.device_id]}) {
      ++sum->pairs;
      sum->bf16_s += *pair.bf16->real_time_s;
      sum->fp8_s += *pair.fp8->real_time_s;
    }
  }
  struct StepFigures {
    const StepRow* row;
    double bf16_tps, fp8_tps;
    std::optional<double> gemm_fraction;  // the bf16 step's dense GEMM share
  };
  std::vector<StepFigures> step_rows;
  for (const std::string& key : step_order) {
    const StepRow& s = steps[key];
    if (!s.pair.complete()) continue;
    const auto b = number_at(s.pair.bf16->metrics, {"tokens_per_s"});
    const auto f = number_at(s.pair.fp8->metrics, {"tokens_per_s"});
    if (!b || !f || *b <= 0 || *f <= 0) continue;
    step_rows.push_back({&s, *b, *f, number_at(s.pair.bf16->details, {"step_split", "dense_gemm_fraction"})});
  }
  const bool any_gemm = !per_device.empty();
  if (!any_gemm && step_rows.empty() && block_scaled.empty()) return;

  doc.heading("Low precision: fp8 against bf16");
  doc.paragraph("What fp8 buys where both were measured on one device. GEMM-only: the same GEMMs in fp8-e4m3 and bf16 "
                "(every other axis equal), the sum of bf16 times over the sum of fp8 times. Step: train cases that "
                "differ only in precision=bf16-amp|fp8, tokens/s. Not sped up: the bf16 step's share outside its dense "
                "GEMMs (attention, norms, optimizer, communication), which fp8 leaves as it is; the bound is the step "
                "speed-up Amdahl's law allows from it and the device's GEMM-only speed-up, 1 / ((1 - f) + f / s). "
                "Block-scaled GEMMs (mxfp8, nvfp4): the GEMM alone against the GEMM with the quantisation of both "
                "inputs from bf16, and that quantisation's extra time as % of the GEMM.");
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
    for (const StepFigures& s : step_rows) {
      std::string share, gemm, bound;
      if (s.gemm_fraction) share = decimal(100 * (1 - *s.gemm_fraction), 1) + "%";
      if (auto it = per_device.find(s.row->device_id); it != per_device.end() && it->second.speedup() > 0) {
        const double speedup = it->second.speedup();
        gemm = decimal(speedup, 2) + "x";
        if (s.gemm_fraction) {
          const double f = *s.gemm_fraction;
          bound = decimal(1 / ((1 - f) + f / speedup), 2) + "x";
        }
      }
      t.rows.push_back({s.row->device, s.row->what, sig3(s.bf16_tps), sig3(s.fp8_tps),
                        decimal(s.fp8_tps / s.bf16_tps, 2) + "x", share, gemm, bound});
    }
    doc.table(std::move(t));
  }
  if (!block_scaled.empty()) {
    doc.heading("Block-scaled GEMMs: quantisation overhead", 3);
    Table t;
    for (const char* c : {"device", "dtype", "case"}) t.add_column(c);
    t.add_column("GEMM-only TFLOP/s", true);
    t.add_column("with quantisation TFLOP/s", true);
    t.add_column("quantisation overhead", true);
    for (const BlockScaledRow& r : block_scaled) {
      t.rows.push_back({r.device, r.dtype, r.what, sig3(r.tflops), sig3(r.with_quantize_tflops), decimal(r.overhead_pct, 1) + "%"});
    }
    doc.table(std::move(t));
  }
}

}  // namespace gpubench::reports
