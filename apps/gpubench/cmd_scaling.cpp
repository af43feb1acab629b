// gpubench scaling: data-parallel projection to N GPUs from measured train timelines and
// collectives curves (reports/scaling.hpp, docs/scaling.md). Needs no CUDA device.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/report_output.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "reports/scaling.hpp"

namespace gpubench::app {

namespace {

// Larger than any machine built (the biggest clusters hold ~1e5 GPUs), small enough that every
// product in the model stays exact in a double.
constexpr long long kMaxGpus = 1 << 24;

std::vector<int> parse_gpus(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : split_list(text, "--gpus")) {
    out.push_back(static_cast<int>(parse_integer(item, "--gpus", 1, kMaxGpus)));
  }
  return out;
}

std::vector<reports::scaling::Dp> parse_modes(const std::string& text) {
  std::vector<reports::scaling::Dp> out;
  for (const std::string& item : split_list(text, "--dp")) {
    if (item == "ddp") out.push_back(reports::scaling::Dp::ddp);
    else if (item == "zero1") out.push_back(reports::scaling::Dp::zero1);
    else throw UsageError(fmt::format("--dp: '{}' is not ddp or zero1", item));
  }
  return out;
}

}  // namespace

ScalingCli parse_scaling_options(const std::vector<std::string>& args) {
  ScalingCli o;
  std::string output, gpus = "8,64,512,4096", modes, train_case;
  po::options_description desc(
      "Usage: gpubench scaling [options] RESULTS.json...\n\nProjects the data-parallel training step to N GPUs from "
      "the train suite's gradient-bucket timeline measured on one device and the collectives suite's measured "
      "all-reduce / reduce-scatter / all-gather curves (and the same between nodes when measured): step time, scaling "
      "efficiency, tokens/s and time and cost to train, with the model's assumptions, and beside every data-parallel "
      "case that was measured the projection at its rank count and the error (docs/scaling.md).\n\nOptions");
  desc.add_options()
      ("gpus", po::value(&gpus)->default_value(gpus), "comma list of GPU counts to project to")
      ("gpus-per-node", po::value<long long>(), "GPUs per node (default: the ranks per node of the inter-node curve; "
                                                "without one, every GPU is assumed on the measured intra-node network)")
      ("inter-node-gbps", po::value<double>(), "bus bandwidth per GPU between nodes in GB/s (decimal; 400 Gb/s "
                                               "InfiniBand NDR per GPU = 50), replacing a measured inter-node curve")
      ("inter-node-latency-us", po::value<double>(), "latency of one ring step between nodes in microseconds (with "
                                                     "--inter-node-gbps; default 0)")
      ("dp", po::value(&modes), "comma list of ddp, zero1 (default: the modes measured in the files, else ddp)")
      ("prices", po::value(&o.prices_file), "price file {\"prices_usd_per_hour\": {NAME: USD}} (see data/prices.example.json)")
      ("price", po::value(&o.price_assignments)->composing(), "NAME=USD_PER_HOUR per GPU for devices whose name contains NAME (repeatable)")
      ("train-tokens", po::value<double>(), "workload for time and cost to train, in tokens")
      ("train-samples", po::value<double>(), "workload for time and cost to train, in samples")
      ("train-filter", po::value(&o.model.train_filter), "only train cases whose axes contain this text (e.g. model=mlp)")
      ("train-case", po::value(&train_case), "the same as --train-filter (report's name)")
      ("out", po::value(&o.out), "output path (stdout when absent); with several formats each gets its extension, in place of an ending that is a format's own (.json .md .html .csv .prom .txt .xml), else appended")
      ("output,o", po::value(&output), "the same as --out")
      ("format,f", po::value(&o.format)->default_value(o.format), "comma list of: md (markdown, the default), html, json")
      ("help,h", "show this help");
  po::variables_map vm = parse_with_inputs(args, desc, o.files);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  if ((vm.count("out") && o.out.empty()) || (vm.count("output") && output.empty())) {
    throw UsageError("--out: empty path");
  }
  merge_output_alias(o.out, output);
  if (!train_case.empty()) {
    if (!o.model.train_filter.empty() && o.model.train_filter != train_case) {
      throw UsageError("--train-filter and --train-case: give one");
    }
    o.model.train_filter = train_case;
  }
  o.model.gpus = parse_gpus(gpus);
  if (vm.count("gpus-per-node")) {
    o.model.gpus_per_node = static_cast<int>(in_range(vm["gpus-per-node"].as<long long>(), "--gpus-per-node", 1, 1024));
  }
  if (vm.count("inter-node-gbps")) {
    o.model.inter_node_gbps = in_range(vm["inter-node-gbps"].as<double>(), "--inter-node-gbps", 0, 1e5);
  }
  if (vm.count("inter-node-latency-us")) {
    if (!vm.count("inter-node-gbps")) throw UsageError("--inter-node-latency-us: needs --inter-node-gbps");
    o.model.inter_node_latency_us =
        in_range(vm["inter-node-latency-us"].as<double>(), "--inter-node-latency-us", 0, 1e6, true);
  }
  if (vm.count("dp")) o.model.modes = parse_modes(modes);
  if (vm.count("train-tokens")) o.model.train_tokens = in_range(vm["train-tokens"].as<double>(), "--train-tokens", 0, 1e18);
  if (vm.count("train-samples")) o.model.train_samples = in_range(vm["train-samples"].as<double>(), "--train-samples", 0, 1e18);
  if (o.model.train_tokens && o.model.train_samples) throw UsageError("--train-tokens and --train-samples: give one workload");
  o.outputs = reports::resolve_outputs(o.format, o.out, {"md", "html", "json"});
  reports::PriceList check;
  for (const auto& p : o.price_assignments) check.add_assignment(p);  // fails early on a bad one
  if (o.files.empty()) throw UsageError("scaling: no results file given (usage: gpubench scaling RESULTS.json...)");
  return o;
}

int cmd_scaling(const std::vector<std::string>& args) {
  ScalingCli o = parse_scaling_options(args);
  if (o.help) return print_help(o.help_text);
  std::vector<NamedPath> inputs = named_inputs(o.files);
  if (!o.prices_file.empty()) inputs.push_back({o.prices_file, "--prices"});
  check_outputs(o.outputs, inputs);
  o.model.prices = reports::PriceList::from_options(o.prices_file, o.price_assignments);
  const std::vector<reports::ResultsFile> loaded =
      reports::read_results_files(std::vector<std::filesystem::path>(o.files.begin(), o.files.end()));
  print_read_warnings("scaling", loaded);
  const reports::scaling::ScalingResult r = reports::scaling::project(loaded, o.model);
  write_outputs(o.outputs, reports::scaling::to_document(r), reports::scaling::to_json(r));
  return 0;
}

}  // namespace gpubench::app
