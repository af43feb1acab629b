// gpubench doctor: checks the machine (driver and runtime, every GPU's link, clocks, power,
// ECC, MIG, temperature and other processes, profiling permission, libraries, CPU governor,
// locked-memory limit, free disk at the results folder) and says what to fix.
#include <fmt/format.h>

#include <iostream>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/doctor/checks.hpp"
#include "bench/doctor/probe.hpp"

namespace gpubench::app {

int cmd_doctor(const std::vector<std::string>& args) {
  std::string results_dir;
  po::options_description desc(
      "Usage: gpubench doctor [options]\n\nChecks this machine for what makes benchmark results wrong or "
      "unrepeatable and prints each finding with its severity (ok, info, warning, error) and a one-line remedy. "
      "Exit status: 1 when a finding is an error, else 0.\n\nOptions");
  desc.add_options()
      ("json", "print the findings as JSON instead of a table")
      ("results-dir", po::value(&results_dir)->default_value("results"),
       "folder whose free space and write access are checked")
      ("help,h", "show this help");
  po::variables_map vm = parse_or_throw(args, desc);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  const doctor::SystemView view = doctor::probe_system(results_dir);
  const std::vector<doctor::Finding> findings = doctor::run_checks(view);
  if (vm.count("json")) {
    fmt::print("{}\n", doctor::to_json(findings).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{}", doctor::format_text(findings));
  }
  return doctor::exit_code(findings);
}

}  // namespace gpubench::app
