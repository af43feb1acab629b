// gpubench serving: the serving loop projected from the infer suite's measured prefill and decode
// curves, validated against measured serve cases (reports/serving.hpp, docs/serving.md). Needs no
// CUDA device.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "apps/gpubench/report_output.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "reports/serving.hpp"

namespace gpubench::app {

namespace {

// Rates above a million requests per second are no serving workload (and a trace of them would
// span less than a microsecond).
constexpr double kMaxRate = 1e6;
// A latency target of more than a day is no target.

std::vector<double> parse_rates(const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : split_list(text, "--rate")) {
    const double v = parse_real(item, "--rate", "a number of requests per second");
    out.push_back(in_range(v, "--rate", 0, kMaxRate));
  }
  return out;
}

}  // namespace

ServingCli parse_serving_options(const std::vector<std::string>& args) {
  ServingCli o;
  std::string output, rates, slo;
  po::options_description desc(
      "Usage: gpubench serving RESULTS.json... --rate R1,R2,... [options]\n\nProjects a serving engine's latencies "
      "from the infer suite's measured prefill and decode step times: the suite's continuous-batching scheduler runs "
      "over a seeded Poisson trace, each step taking the time read from the measured curves. Per rate: TTFT, TPOT, ITL "
      "and E2EL at p50/p90/p99, requests/s, output tokens/s per device and per user, goodput under the SLOs, and the "
      "tokens/s-per-device vs tokens/s-per-user frontier over batch limits; beside every measured phase=serve case of "
      "the same configuration and rate, the projection of its own trace and the error per percentile "
      "(docs/serving.md).\n\nOptions");
  desc.add_options()
      ("rate", po::value(&rates), "comma list of request rates to project, requests per second (> 0)")
      ("slo", po::value(&slo), "latency targets for goodput, e.g. ttft=450ms,tpot=40ms (keys ttft, tpot, itl, e2el; "
                               "units us, ms, s)")
      ("prompt-len", po::value<long long>(), "mean prompt tokens of the trace (default: the files' serve case, else 128)")
      ("output-len", po::value<long long>(), "mean output tokens of the trace (default: the files' serve case, else 32)")
      ("max-batch", po::value<long long>(), "requests decoding at once (default: the files' serve case, else 16)")
      ("requests", po::value<long long>(), "requests in the trace (default: the files' serve case, else 64)")
      ("seed", po::value<long long>(), "seed of the trace (default 1)")
      ("out", po::value(&o.out), "output path (stdout when absent); with several formats each gets its extension, in place of an ending that is a format's own (.json .md .html .csv .prom .txt .xml), else appended")
      ("output,o", po::value(&output), "the same as --out")
      ("format,f", po::value(&o.format)->default_value(o.format), "comma list of: md (markdown, the default), html, json")
      ("help,h", "show this help");
  po::variables_map vm = parse_with_inputs(args, desc, o.files);
  if (take_help(vm, desc, o.help, o.help_text)) return o;
  if ((vm.count("out") && o.out.empty()) || (vm.count("output") && output.empty())) throw UsageError("--out: empty path");
  merge_output_alias(o.out, output);
  if (!vm.count("rate")) throw UsageError("--rate is required (e.g. --rate 1,4)");
  o.model.rates = parse_rates(rates);
  if (vm.count("slo")) o.model.slo = parse_slo(slo);
  auto int_option = [&](const char* name, long long lo, long long hi) -> std::optional<int> {
    if (!vm.count(name)) return std::nullopt;
    const std::string option = std::string("--") + name;
    return static_cast<int>(in_range(vm[name].as<long long>(), option.c_str(), lo, hi));
  };
  o.model.prompt_len = int_option("prompt-len", 1, 1 << 20);
  o.model.output_len = int_option("output-len", 1, 1 << 20);
  o.model.max_batch = int_option("max-batch", 1, 4096);
  o.model.requests = int_option("requests", 1, 1 << 20);
  if (vm.count("seed")) o.model.seed = static_cast<std::uint64_t>(in_range(vm["seed"].as<long long>(), "--seed", 0, (1LL << 62)));
  o.outputs = reports::resolve_outputs(o.format, o.out, {"md", "html", "json"});
  if (o.files.empty()) throw UsageError("no results file given (usage: gpubench serving RESULTS.json... --rate R1,R2)");
  return o;
}

int cmd_serving(const std::vector<std::string>& args) {
  ServingCli o = parse_serving_options(args);
  if (o.help) return print_help(o.help_text);
  check_outputs(o.outputs, named_inputs(o.files));
  const std::vector<reports::ResultsFile> loaded =
      reports::read_results_files(std::vector<std::filesystem::path>(o.files.begin(), o.files.end()));
  print_read_warnings("serving", loaded);
  const reports::serving::ServingResult r = reports::serving::project(loaded, o.model);
  write_outputs(o.outputs, reports::serving::to_document(r), reports::serving::to_json(r));
  return 0;
}

}  // namespace gpubench::app
