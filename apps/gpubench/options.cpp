#include "apps/gpubench/options.hpp"

#include <fmt/format.h>

#include "bench/core/errors.hpp"

namespace gpubench::app {

void add_selection_options(po::options_description& desc, SelectionOptions& o) {
  desc.add_options()
      ("suite,s", po::value(&o.suites)->composing(), "suite(s) to run, repeatable or comma-separated (default: all)")
      ("preset,p", po::value(&o.preset)->default_value("quick"), "axis values preset: quick, standard, full")
      ("axis,a", po::value(&o.axes)->composing(),
       "override an axis: NAME=VALUES; VALUES is a comma list of values, ranges start:stop:step, "
       "geometric ranges start:stop:xFACTOR, names (dtype=bf16,fp16), or @OTHER to copy axis OTHER")
      ("device,d", po::value(&o.device)->default_value("all"), "devices: all, cuda, cuda:N, cpu (comma-separated)");
}

po::variables_map parse_or_throw(const std::vector<std::string>& args, const po::options_description& desc,
                                 const po::positional_options_description* positional) {
  po::variables_map vm;
  try {
    po::command_line_parser parser(args);
    parser.options(desc);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

std::vector<std::string> split_list(const std::string& text, const char* option) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError(fmt::format("{} '{}': empty item", option, text));
    out.push_back(std::move(item));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

PlanRequest to_plan_request(const SelectionOptions& o, const std::string& filter) {
  PlanRequest r;
  for (const std::string& item : o.suites) {
    for (std::string& name : split_list(item, "--suite")) r.suites.push_back(std::move(name));
  }
  r.preset = o.preset;
  r.axis_overrides = o.axes;
  r.filter = filter;
  return r;
}

std::string join_args(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

}  // namespace gpubench::app
