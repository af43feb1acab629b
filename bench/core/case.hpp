#pragma once
// A case is one benchmark at one point of its suite's axes on one device. The harness drives
// it: setup() -> verify() -> warm-up runs -> timed batches of run().
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <nlohmann/json.hpp>

#include "timer.hpp"

namespace gpubench {

// What one run() does, for the rates: FLOP and bytes moved (0 when not meaningful), and which
// datasheet figure a rate is compared with ("fp32", "bf16_tensor", "memory_bandwidth"; empty
// when none applies).
// With flops, `bytes` is the minimal traffic (each operand read or written once): arithmetic
// intensity is flops / bytes and bytes / time the achieved bandwidth.
struct Metrics {
  double flops = 0;
  double bytes = 0;
  std::string peak_key;
  // Work items per run (tokens, samples) for an items-per-second rate: `items_per_s` and
  // `<items_unit>_per_s` in the results file and a `<items_unit>/s` counter. 0: none.
  double items = 0;
  std::string items_unit{};
  // FLOPs the hardware runs when more than `flops` (the model's: activation recompute reruns
  // forward work): adds hardware_tflops and, against the peak, hfu_pct. 0: same as flops.
  double hardware_flops = 0;
  bool integer_ops = false;      // `flops` counts integer operations: rates are TOP/s
  double footprint_bytes = 0;    // memory the case's buffers occupy (0: not reported)
  // Case-specific fields (an algorithm's name, a tuning gain, peak_memory_bytes,
  // forward_fraction, ...) copied as they are into gpubench.metrics.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

struct Verification {
  bool passed = false;
  std::int64_t checked = 0;   // entries compared with the reference
  double max_error = 0;       // largest |error| / tolerance seen: 1.0 is the limit
  std::string method;         // how the answer was checked, for the results file
  std::string detail;         // on failure: the first bad entry, its value and the expected one
  // Entries that differ from the exact answer, for cases whose inputs make the answer exact
  // (written as `wrong` when set; summed over ranks in a multi-process run).
  std::optional<std::int64_t> wrong;
};

// How the harness takes a case's samples and which statistic is its headline (the time per run
// that real_time, the rates and Case::annotate report). The default: back-to-back samples of
// --batch-time each, headline the mean of every timed run. Cases whose runs are short and
// easily disturbed across processes (MPI collectives on shared cores) ask for short windows,
// the ranks aligned by an untimed barrier before each one (as OSU's osu_allreduce aligns every
// call), and the median over windows, which a preempted window does not move.
//
// Per-iteration timing (nccl-tests' -I) times every run alone: each sample is one run, and the
// results add the percentiles of those single-run times (measurement.per_iteration).
struct SamplingPolicy {
  enum class Headline { Mean, Median };
  Headline headline = Headline::Mean;
  double window_s = 0;   // > 0: samples last at most this long (caps --batch-time)
  bool barrier = false;  // with a team: every rank meets at a barrier before each sample
  bool per_iteration = false;  // every sample is one run (window_s is then moot)
  // The run is a whole experiment (a serving trace of many requests): no warm-up, one timed
  // run, whatever --min-time and --min-samples say.
  bool single_run = false;
};

class Case {
 public:
  virtual ~Case() = default;
  // Allocate and fill inputs. May throw CaseSkipped (e.g. out of memory).
  virtual void setup() = 0;
  // Run the work once and check its answer against a reference.
  virtual Verification verify() = 0;
  // Enqueue (GPU) or perform (CPU) one run of the work being measured.
  virtual void run() = 0;
  virtual Metrics metrics() const = 0;
  // Case-specific results beyond the time (a pipeline's stall split, queue depths), written to
  // the entry's `gpubench.details`. Called once after timing; `measured_runs` is how many of
  // the latest run() calls were timed (the earlier ones were warm-up). Empty: nothing written.
  virtual nlohmann::ordered_json details(std::int64_t measured_runs) {
    (void)measured_runs;
    return nlohmann::ordered_json::object();
  }

  // How this case is timed and flushed; provided by HostCase and CudaCase.
  virtual std::unique_ptr<Timer> make_timer() = 0;
  // Evicts the caches the work reads from (cold mode), outside the timed region.
  virtual void flush_cache() = 0;
  // Waits for everything the case has queued.
  virtual void synchronize() = 0;

  // How samples are taken and summarized (see SamplingPolicy); default: mean of back-to-back samples.
  virtual SamplingPolicy sampling() const { return {}; }

  // Adds the case's own figures to its results entry's `gpubench` object (after the harness's
  // fields), given the headline seconds per run (see SamplingPolicy; the mean over ranks in a
  // multi-process run). Called on the process that writes the results; default: nothing.
  virtual void annotate(nlohmann::ordered_json& gpubench, double seconds_per_run) const {
    (void)gpubench;
    (void)seconds_per_run;
  }
};

// Writes over a buffer larger than the last-level cache (HostCase's cold flush).
void flush_host_caches();

// Base for CPU cases: host steady-clock timing; the cold flush writes over a buffer larger
// than the last-level cache.
class HostCase : public Case {
 public:
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<HostTimer>(); }
  void flush_cache() override { flush_host_caches(); }
  void synchronize() override {}
};

}  // namespace gpubench
