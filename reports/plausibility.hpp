#pragma once
// Plausibility: which measured figures cannot be believed (docs/plausibility.md). Plain C++
// over results JSON, shared by `gpubench run` (which marks the results file as it is written)
// and the reports (which judge again, with the spec sheet they are given).
//
// Rules, per device:
// 1. A figure above its datasheet peak by more than kDatasheetMargin is suspect. Where the spec
//    sheet states the clock a figure assumes (peak_clock_mhz) and the device's maximum SM clock is
//    higher (context.gpubench.devices[].max_sm_clock_mhz), the peak is first scaled to that
//    maximum clock: an H100 SXM at 1980 MHz delivers 989.5 x 1980 / 1830 = 1071 TFLOP/s bf16.
// 2. A figure above the ceiling the memory suite measured for its peak key by more than
//    kCeilingMargin is suspect, and so is that ceiling (the summary's ceiling object and the
//    memory suite entries that set it): one of the two is wrong.
// 3. A ceiling above its datasheet peak (scaled as in 1) by more than kDatasheetMargin is suspect.
// 4. A CPU figure or ceiling above the CPU's theoretical peak for its key, recorded in the file's
//    context (context.gpubench.devices[].peak_tflops, derived at run time by bench/core/cpu_peak:
//    an upper bound), by more than kDatasheetMargin is suspect. A file without it: no such rule.
// A figure is an `ok` iteration entry's headline rate for its metrics.peak_key: hardware_tflops
// (else tflops) for FLOP keys, gbps for memory_bandwidth. Memory-bandwidth figures of the
// memory suite whose working set (metrics.footprint_bytes, else the bytes one run moves) is less
// than twice the device's L2 (context.gpubench.devices[].l2_bytes; a CPU's
// last_level_cache_bytes) may be served by the caches
// and are not judged: a correct H200 moves 5.2 TB/s through triad at 8 MiB per array, 24 MiB in
// its 60 MiB L2, above its 4.8 TB/s HBM (2026-12-04). Where the L2 or the bytes are unknown, a
// figure below the largest size measured for its test on that device is not judged (the
// memory_bandwidth ceiling is the largest size's). The verdict of a figure with a known L2 does
// not depend on which other sizes ran, so the console's rows (judged as each case ends) and the
// finished results file agree.
//
// Reasons are one-line strings in `gpubench.suspect` (an array; absent when none). Judging again
// replaces the reasons these rules wrote (they start with the prefixes below) and keeps any
// other reason already there.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/results_reader.hpp"

namespace gpubench::plausibility {

inline constexpr double kDatasheetMargin = 0.03;  // "more than a few %": boost-clock and rounding slack
inline constexpr double kCeilingMargin = 0.05;    // two measurements of the same limit: noise slack

inline constexpr std::string_view kAboveDatasheet = "above the datasheet peak: ";
inline constexpr std::string_view kAboveCeiling = "above the measured ceiling: ";
inline constexpr std::string_view kSuspectCeiling = "suspect ceiling: ";
inline constexpr std::string_view kAboveCpuPeak = "above the CPU's theoretical peak: ";

// Whether `reason` is one these rules write (and judging again replaces).
bool is_own_reason(std::string_view reason);

// The datasheet figure (TFLOP/s, TOP/s or GB/s) for a GPU model and peak key; nullopt when the
// spec sheet has none. Consulted for CUDA devices only, where an entry has no metrics.peak.
using PeakLookup = std::function<std::optional<double>(const std::string& device_name, const std::string& peak_key)>;
// `lookup` answering each (device name, key) once: the spec sheet matches names with regexes,
// and a results file is judged again after every case.
PeakLookup memoized(PeakLookup lookup);
// The SM clock (MHz) a datasheet figure assumes, per GPU model and peak key (the spec sheet's
// peak_clock_mhz); nullopt where the sheet does not say: the figure is then taken to hold at any
// clock the device reaches (no allowance).
using ClockLookup = PeakLookup;

// One judged figure.
struct Figure {
  std::string name;  // the case name, for the ceiling's reason
  std::string suite, device, device_name, test;
  std::string peak_key, unit;  // "bf16_tensor", "TFLOP/s"
  double rate = 0;             // mean rate over the case's samples
  std::optional<double> datasheet;
  // The datasheet figure's scale at the device's maximum clock (max clock / the clock the figure
  // assumes; 1 when either is unknown or the device cannot boost above it).
  double clock_scale = 1;
  std::optional<std::int64_t> size;  // axes.size, when the case has one
  // metrics.footprint_bytes: the memory the case's buffers occupy. A memory-bandwidth figure of
  // another suite (an attention decode) whose buffers are smaller than one array of the memory
  // suite's DRAM ceiling may be served by the caches: that ceiling does not bound it.
  std::optional<double> footprint;
  std::optional<double> bytes;       // metrics.bytes: what one run moves
  bool judged = true;                // false: a memory-bandwidth figure the caches may hold
  std::optional<double> cpu_peak;    // a CPU's theoretical peak for peak_key (rule 4), from the context
};

// One measured ceiling of summaries.memory.devices.<device>.
struct Ceiling {
  std::string device, key, unit, test;  // key: a peak label (fp32, bf16_tensor) or memory_bandwidth
  double rate = 0;
  std::optional<double> datasheet;
  double clock_scale = 1;  // as Figure::clock_scale
  std::optional<std::int64_t> size;  // memory_bandwidth: the size it was measured at
  std::optional<double> cpu_peak;    // as Figure::cpu_peak
};

struct Judgement {
  std::vector<std::vector<std::string>> figures;   // reasons per figure, in the order given
  std::vector<std::vector<std::string>> ceilings;  // reasons per ceiling
};

// The rules over every figure and ceiling of one results file.
Judgement judge(const std::vector<Figure>& figures, const std::vector<Ceiling>& ceilings);

// `existing` without the reasons of these rules, then `fresh` (no duplicates).
std::vector<std::string> merge_reasons(const std::vector<std::string>& existing, const std::vector<std::string>& fresh);

// Judges a whole results document in place (docs/results-format.md): every `ok` iteration
// entry's gpubench.suspect and every ceiling's `suspect` in gpubench.summaries.memory. Fields
// are written only where there is a reason, and removed where the last one went away.
// `clock` gives the clock each datasheet figure assumes (empty: none known).
void mark_document(nlohmann::ordered_json& doc, const PeakLookup& datasheet, const ClockLookup& clock = {});

// The maximum SM clock (MHz) of each device of a results file's context (device id -> MHz).
std::map<std::string, double> max_sm_clocks(const nlohmann::json& context);
// Each CPU device's theoretical peaks from a results file's context (device id -> peak key ->
// TFLOP/s: context.gpubench.devices[].peak_tflops).
std::map<std::string, std::map<std::string, double>> cpu_peaks(const nlohmann::json& context);
// The peak of `key` among `peaks` (one device's): the key itself; a CPU's fp64 for fp64_tensor
// (the key of a double GEMM, which a CPU runs on its vector units).
std::optional<double> cpu_peak_of(const std::map<std::string, double>& peaks, const std::string& key);
// The cache in front of each device's memory (device id -> bytes): a GPU's l2_bytes, a CPU's
// last_level_cache_bytes, from a results file's context.
std::map<std::string, double> l2_sizes(const nlohmann::json& context);
// Marks the judged figures' cache residency (see the rules above): call once all are known.
// `l2`: device id -> L2 bytes (l2_sizes).
void mark_cache_resident(std::vector<Figure>& figures, const std::map<std::string, double>& l2 = {});
// Writes `reasons` as the `suspect` array of the ceiling `c` in `summaries` (removes it when empty).
void set_ceiling_reasons(nlohmann::json& summaries, const Ceiling& c, const std::vector<std::string>& reasons);
// Whether a memory-suite entry (its test and size) is where ceiling `c` came from.
bool sets_ceiling(const Figure& f, const Ceiling& c);

// A results file as the reports read it, judged: per entry (by index in file.entries) the
// reasons it carries in the file merged with the rules' fresh verdict, and per device and
// ceiling key the ceiling's reasons. Entries and ceilings without a reason are absent.
struct FileSuspects {
  std::map<std::size_t, std::vector<std::string>> entries;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> ceilings;  // device -> key -> reasons
  const std::vector<std::string>* of(std::size_t entry) const {
    auto it = entries.find(entry);
    return it == entries.end() ? nullptr : &it->second;
  }
  const std::vector<std::string>* ceiling(const std::string& device, const std::string& key) const;
};
FileSuspects judge_file(const reports::ResultsFile& file, const PeakLookup& datasheet, const ClockLookup& clock = {});

}  // namespace gpubench::plausibility
