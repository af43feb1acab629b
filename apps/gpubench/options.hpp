#pragma once
// Options shared by `run` and `list`: which suites, preset, axis values and devices.
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "bench/core/plan.hpp"

namespace gpubench::app {

namespace po = boost::program_options;

struct SelectionOptions {
  std::vector<std::string> suites;  // comma lists allowed: --suite gemm,memory
  std::string preset = "quick";
  std::vector<std::string> axes;
  std::string device = "all";
};

void add_selection_options(po::options_description& desc, SelectionOptions& opts);

// Parses `args` against `desc`; a parse error becomes a UsageError naming the option.
po::variables_map parse_or_throw(const std::vector<std::string>& args, const po::options_description& desc,
                                 const po::positional_options_description* positional = nullptr);

PlanRequest to_plan_request(const SelectionOptions& opts, const std::string& filter);

std::string join_args(const std::vector<std::string>& args);

// Splits a comma list; UsageError naming `option` for an empty item.
std::vector<std::string> split_list(const std::string& text, const char* option);

}  // namespace gpubench::app
