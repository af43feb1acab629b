#pragma once
// `gpubench serving`: the serving loop projected from the infer suite's measured prefill and
// decode step times. The scheduler of the suite's phase=serve case (kernels/infer/scheduler.hpp)
// runs over the same seeded trace on a manual clock that each step advances by the time read
// from the measured curves; a measured serve case of the same configuration and rate validates
// the projection percentile by percentile (docs/serving.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/infer/scheduler.hpp"
#include "reports/document.hpp"
#include "reports/results_reader.hpp"

namespace gpubench::reports::serving {

namespace ki = kernels::infer;

struct ServingOptions {
  std::vector<double> rates;  // requests per second, each > 0
  ki::Slo slo;
  // The projected trace and batch limit; unset: the files' serve case when they hold exactly
  // one trace spec, else 128 / 32 / 16 / 64.
  std::optional<int> prompt_len, output_len, max_batch, requests;
  std::uint64_t seed = 1;
};

// Measured step times of one configuration (model, dtype, device, host, ...).
struct StepCurves {
  struct PrefillPoint {
    double batch = 0, prompt_len = 0, seconds = 0;  // batch prompts of prompt_len tokens in one step
  };
  struct DecodePoint {
    double batch = 0, context = 0, seconds = 0;
  };
  std::vector<PrefillPoint> prefill;  // sorted by (batch, prompt_len), repetitions averaged
  std::vector<DecodePoint> decode;    // sorted by (batch, context), repetitions averaged
  // Seconds of one prefill step of `batch` prompts of mean length `prompt_len`: bilinear over the
  // measured (batch, prompt_len) grid (per measured batch along prompt_len, then across batches),
  // so both the products' cost (per token, cheaper in larger steps) and attention's (quadratic in
  // a prompt's length) follow what was measured. Piecewise linear within the range; beyond it
  // linear from the two outermost points (slope at least 0, never below proportional scaling from
  // the first point); proportional along an axis with one measured value. `extrapolated` is set
  // when outside the range.
  double prefill_s(double batch, double prompt_len, bool* extrapolated = nullptr) const;
  // Seconds of one decode step of `batch` sequences of mean context `context`: bilinear over the
  // measured (batch, context) grid (per measured batch along context, then across batches),
  // linear beyond it as prefill_s, constant along an axis with one measured value.
  double decode_s(double batch, double context, bool* extrapolated = nullptr) const;
  int largest_decode_batch() const;
};

// A manual-clock runner over the curves: what `gpubench serving` drives the scheduler with.
class CurveRunner final : public ki::StepRunner {
 public:
  CurveRunner(const StepCurves& curves, ki::ManualClock& clock) : curves_(curves), clock_(clock) {}
  void prefill(const std::vector<const ki::Request*>& admitted) override;
  void decode(const std::vector<const ki::Request*>& running, const std::vector<std::int64_t>& context) override;
  std::int64_t extrapolated_prefills = 0, extrapolated_decodes = 0;

 private:
  const StepCurves& curves_;
  ki::ManualClock& clock_;
};

// One configuration: the axes that are not the step's size or the trace's, and the device.
struct Config {
  std::string key;     // "device | host | axis=value ..." (unique)
  std::string device;  // device_name, else the device id
  std::string host, model;
  StepCurves curves;
};

struct ServeCase {
  const ResultEntry* entry = nullptr;
  std::string key;
  ki::TraceSpec trace;
  ki::Limits limits;
  ki::ServeSummary measured;  // only the percentiles, rates and counts that the file holds
};

struct ParetoPoint {
  int max_batch = 0;
  double output_tokens_per_s = 0, output_tokens_per_s_per_user = 0;
  bool frontier = false;
};

struct ValidationRow {
  std::string key, device, model, case_name;
  double rate = 0;
  std::string trace;       // the serve case's trace: "12 x 128/16 tokens" (requests x mean prompt/output)
  std::string metric;      // ttft_ms, tpot_ms, itl_ms, e2el_ms
  std::string percentile;  // p50, p90, p99
  double measured = 0, projected = 0;
  std::optional<double> error_pct;  // 100 (projected - measured) / measured; none when measured is 0
};

struct Point {
  std::string key, device, host, model;
  double rate = 0;
  ki::TraceSpec trace;
  ki::Limits limits;
  ki::ServeSummary summary;
  std::int64_t prefill_steps = 0, decode_steps = 0;
  int largest_batch = 0;
  std::vector<ParetoPoint> pareto;
  std::vector<ValidationRow> validation;
};

struct ServingResult {
  std::vector<Point> points;  // by rate, then configuration
  std::vector<ValidationRow> validation;
  std::vector<std::string> assumptions, notes;
  ki::Slo slo;
};

// The configurations with both prefill and decode curves, and the serve cases, of the files.
std::vector<Config> configs(const std::vector<ResultsFile>& files, std::vector<std::string>* notes = nullptr);
// Serve cases without a readable gpubench.details.serve are left out, with a note.
std::vector<ServeCase> serve_cases(const std::vector<ResultsFile>& files, std::vector<std::string>* notes = nullptr);

// Throws UsageError with one line when no configuration has both curves, or a rate is bad.
ServingResult project(const std::vector<ResultsFile>& files, const ServingOptions& options);

nlohmann::ordered_json to_json(const ServingResult& r);
Document to_document(const ServingResult& r);

}  // namespace gpubench::reports::serving
