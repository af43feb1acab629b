#pragma once
// `gpubench soak`'s options, parsed and checked before anything runs (parse_soak.cpp; the
// fuzzer tests/fuzz/fuzz_cli drives it as it does `run`'s).
#include <string>
#include <vector>

#include "bench/core/power_control.hpp"
#include "bench/soak/document.hpp"

namespace gpubench::app {

struct SoakOptions {
  bool help = false;
  std::string help_text;
  std::string device, out, spec_sheet;
  bool out_given = false;
  soak::Settings settings;
  std::vector<std::string> loads;  // soak::parse_load of --load
  std::vector<PowerStep> steps;    // --power-limits or --lock-clocks; empty: no sweep
  double rank_timeout_s = 300;
  bool quiet = false;
};
// Throws UsageError naming the option for a bad value; --help fills help_text and stops there.
SoakOptions parse_soak_options(const std::vector<std::string>& args);

}  // namespace gpubench::app
