#pragma once
// A suite is a family of benchmarks (gemm, memory, train, ...): it declares its axes and
// presets and turns one point of those axes on one device into a Case. The harness knows
// suites only through this interface.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "axis.hpp"
#include "case.hpp"
#include "device.hpp"

namespace gpubench {

// One point of a suite's axes, in the order the suite declares them.
class Point {
 public:
  void set(std::string axis, AxisValue value);
  std::int64_t integer(std::string_view axis) const;  // throws std::logic_error if absent
  const std::string& text(std::string_view axis) const;
  // The value, or `fallback` where the point has no such axis (Suite::resolve left it out as
  // meaningless for the point, or a caller built the point by hand with the axes it needs).
  std::string text_or(std::string_view axis, std::string_view fallback) const;
  std::int64_t integer_or(std::string_view axis, std::int64_t fallback) const;
  const std::vector<std::pair<std::string, AxisValue>>& values() const { return values_; }
  std::string label() const;  // "m=1024/n=1024/dtype=fp16"
  nlohmann::ordered_json to_json() const;
  // Whether the user chose this axis's values (--axis) rather than a preset or its default, so
  // a suite can adapt defaults a point's other values make meaningless (gemm: a block-scaled
  // dtype takes the TN layout and the providers that run it) and still honour an explicit ask.
  // The planner marks them; a point built by hand has none given. Not part of label().
  bool given(std::string_view axis) const;
  void set_given(std::vector<std::string> axes) { given_ = std::move(axes); }
  const std::vector<std::string>& given_axes() const { return given_; }

 private:
  const AxisValue& find(std::string_view axis) const;
  std::vector<std::pair<std::string, AxisValue>> values_;
  std::vector<std::string> given_;
};

// Axis values in the --axis syntax, keyed by axis name. A preset gives values for every axis,
// separately for CPU and CUDA devices (the sizes that fit a minute on 2 cores differ from those
// that fill an H100).
struct Preset {
  std::string name;  // quick, standard, full
  std::vector<std::pair<std::string, std::string>> cuda;
  std::vector<std::pair<std::string, std::string>> cpu;
};

class Suite {
 public:
  virtual ~Suite() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual std::vector<AxisSpec> axes() const = 0;
  virtual std::vector<Preset> presets() const = 0;
  // Why this point cannot run on this device (unsupported dtype, too old a GPU), or nullopt.
  virtual std::optional<std::string> unsupported(const DeviceInfo& device, const Point& point) const = 0;
  // Whether this point exists at all for this device. A suite whose axes do not all apply to
  // every benchmark (a size axis that only some of them read) returns false for the
  // combinations that mean nothing; the planner drops them silently instead of listing them as
  // skipped. Default: every point applies.
  virtual bool applies(const DeviceInfo& device, const Point& point) const {
    (void)device;
    (void)point;
    return true;
  }
  // Fills in axes whose values follow from others, before applies(). A suite with named
  // shapes (a `shape` axis whose entry fixes m, n and k) overwrites those axes here so case
  // names and results show the real values; points that become identical are planned once.
  // Throws UsageError for a combination that cannot be resolved. Default: unchanged.
  virtual Point resolve(const DeviceInfo& device, Point point) const {
    (void)device;
    return point;
  }
  // Why none of this suite's points can run on this device in this launch, saying how to run
  // them (CPU collectives outside mpirun/srun, a build without the suite's backend), or
  // nullopt. The planner then plans no case of the suite on that device and records the
  // reason once (NotApplicable), instead of one skipped case per point. Default: nullopt.
  virtual std::optional<std::string> not_applicable(const DeviceInfo& device) const {
    (void)device;
    return std::nullopt;
  }
  // Planning-time size validation (sizes.hpp): throws UsageError naming the axes and the limit
  // when the point's buffers or indices would be too large (products overflow-checked). Called
  // for every planned point, before any case runs. Default: nothing to check.
  virtual void check_sizes(const DeviceInfo& device, const Point& point) const {
    (void)device;
    (void)point;
  }
  // What the plan should say about a supported point beyond its axes (printed by --dry-run and
  // `list`): which instruction or path the case will take on this device. Default: nothing.
  virtual std::optional<std::string> plan_note(const DeviceInfo& device, const Point& point) const {
    (void)device;
    (void)point;
    return std::nullopt;
  }
  // Called only for supported points. Constructing a case allocates nothing large: that is
  // setup()'s job, where an out-of-memory becomes a skipped case.
  virtual std::unique_ptr<Case> make_case(const DeviceInfo& device, const Point& point) const = 0;
  // Versions of the libraries this suite measures, for the results context.
  virtual nlohmann::ordered_json libraries() const { return nlohmann::ordered_json::object(); }
  // A suite-level summary over this suite's finished entries (results-file JSON objects, in
  // run order), written to the results file's top-level `gpubench.summaries.<suite>` after
  // every case of the suite. Empty (the default) writes nothing.
  virtual nlohmann::ordered_json summarize(const std::vector<nlohmann::ordered_json>& entries) const {
    (void)entries;
    return nlohmann::ordered_json::object();
  }
};

}  // namespace gpubench
