#pragma once
// The results file's context: Google Benchmark's own context fields plus what is needed to
// compare machines (gpubench build, CPU, every device, driver/runtime and library versions).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device.hpp"
#include "measure.hpp"
#include "suite.hpp"

namespace gpubench {

struct RunDescription {
  std::string command_line;
  std::string preset;
  std::vector<std::string> suites;
  MeasureOptions measure;
};

nlohmann::ordered_json device_to_json(const DeviceInfo& d);

nlohmann::ordered_json capture_context(const DeviceInventory& inventory, const std::vector<DeviceInfo>& devices,
                               const std::vector<const Suite*>& suites, const RunDescription& run);

std::string host_name();

}  // namespace gpubench
