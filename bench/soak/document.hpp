#pragma once
// A soak in the results file (docs/results-format.md, docs/soak.md): the top-level
// `gpubench.soak` object (settings, the cases each device ran, the series, the verdict,
// `interrupted` when so) and one ordinary results entry per device and load, so report,
// compare and history read a soak like any run.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/soak/rules.hpp"
#include "bench/soak/runner.hpp"

namespace gpubench::soak {

struct Settings {
  std::string load;  // as given: gemm, memory, train, mixed
  double duration_s = 0, interval_s = 0, verify_every_s = 0;
  Thresholds thresholds;
};

struct Interruption {
  int signal = 0;
  double at_s = 0;  // seconds into the soak
};

nlohmann::ordered_json section(const Settings& settings, const std::vector<LoadInfo>& loads,
                               const std::vector<Sample>& series, const std::string& xid_status, double elapsed_s,
                               const std::optional<Verdict>& verdict, const std::optional<Interruption>& interrupted);

// One entry per (device, load) that timed work: the mean seconds per run over the judged
// samples (all of them when none was judged), their spread as the noise, the rates against the
// datasheet peak. A device whose answer was wrong, or that timed nothing, gets a failed entry
// without a time.
std::vector<nlohmann::ordered_json> summary_entries(const Settings& settings, const std::vector<LoadInfo>& loads,
                                                    const std::vector<Sample>& series, const PeakLookup& peak);

}  // namespace gpubench::soak
