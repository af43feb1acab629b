#include "apps/gpubench/options.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include <algorithm>

#include "apps/gpubench/dry_run.hpp"
#include "bench/core/cuda_portable.hpp"
#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "gpubench/version.hpp"

namespace gpubench::app {

void add_selection_options(po::options_description& desc, SelectionOptions& o) {
  desc.add_options()
      ("suite,s", po::value(&o.suites)->composing(), "suite(s) to run, repeatable or comma-separated (default: all)")
      ("preset,p", po::value(&o.preset)->default_value(o.preset), "axis values preset: quick, standard, full")
      ("axis,a", po::value(&o.axes)->composing(),
       "override an axis: NAME=VALUES; VALUES is a comma list of values, ranges start:stop:step, "
       "geometric ranges start:stop:xFACTOR, names (dtype=bf16,fp16), or @OTHER to copy axis OTHER")
      ("device,d", po::value(&o.device)->default_value(o.device), "devices: all, cuda, cuda:N, cpu (comma-separated)")
      ("assume", po::value(&o.assume),
       "plan against this GPU model of the spec sheet (a key such as h200-sxm, a unique prefix: h200, or a device "
       "name: 'NVIDIA H200') as cuda:0; MODEL:N for a node of N such GPUs that are peers of each other "
       "instead of the devices here; run and tune need --dry-run with it");
}

namespace {

// Boost.Program_options builds an error message by replacing each %placeholder% of its template
// until none is left, so an argument that itself contains one (`--min-time %value%`) made what()
// loop forever (found by tests/fuzz/fuzz_cli). The substituted texts get '%' swapped out for
// the message and back afterwards. (Reads the substitutions through a member pointer formed in a
// derived class: they are protected.)
struct PoErrorAccess : po::error_with_option_name {
  static auto substitutions() { return &PoErrorAccess::m_substitutions; }
};

std::string message_of(po::error& e) {
  auto* named = dynamic_cast<po::error_with_option_name*>(&e);
  if (!named) return e.what();
  constexpr char kStandIn = '\x1a';  // ASCII SUB: not in any message template
  for (auto& [key, value] : named->*PoErrorAccess::substitutions()) std::replace(value.begin(), value.end(), '%', kStandIn);
  std::string message = named->what();
  std::replace(message.begin(), message.end(), kStandIn, '%');
  return message;
}

// Throws UsageError naming the positional word after the first `allowed` ones, if any.
void refuse_stray_words(const po::parsed_options& parsed, unsigned allowed) {
  unsigned seen = 0;
  for (const po::option& opt : parsed.options) {
    if (opt.position_key < 0 && !opt.string_key.empty()) continue;
    if (seen++ < allowed) continue;
    const std::string word = opt.original_tokens.empty() ? std::string() : opt.original_tokens.front();
    throw UsageError(fmt::format("unexpected argument '{}' (options start with -)", word));
  }
}

}  // namespace

namespace {

template <class T>
bool holds(const po::value_semantic* s) {
  return dynamic_cast<const po::typed_value<T>*>(s) != nullptr;
}

// Boost reads a numeric option with lexical_cast, which takes what the command line's one number
// syntax refuses (' 8'; '-1' for an unsigned, which wraps to 2^64-1): every numeric option's text
// is checked against that syntax (bench/core/numbers.hpp) before Boost converts it, so every
// command refuses the same texts with the same line.
void check_number_tokens(const po::parsed_options& parsed) {
  for (const po::option& o : parsed.options) {
    if (o.unregistered || o.position_key >= 0 || parsed.description == nullptr) continue;
    const po::option_description* d = parsed.description->find_nothrow(o.string_key, false);
    if (d == nullptr) continue;
    const po::value_semantic* s = d->semantic().get();
    const bool real = holds<double>(s) || holds<float>(s);
    const bool whole = holds<int>(s) || holds<long>(s) || holds<long long>(s);
    const bool count = holds<unsigned>(s) || holds<unsigned long>(s) || holds<unsigned long long>(s);
    for (const std::string& v : o.value) {
      const std::string name = "--" + o.string_key;
      if (real && !read_real(v)) throw UsageError(fmt::format("{} '{}': expected a number", name, v));
      if (whole && !read_integer(v)) throw UsageError(fmt::format("{} '{}': expected a whole number", name, v));
      if (count) {
        const std::optional<long long> n = read_integer(v);
        if (!n || *n < 0) throw UsageError(fmt::format("{} '{}': expected a whole number of at least 0", name, v));
      }
    }
  }
}

}  // namespace

po::variables_map parse_or_throw(const std::vector<std::string>& args, const po::options_description& desc,
                                 const po::positional_options_description* positional) {
  po::variables_map vm;
  try {
    po::command_line_parser parser(args);
    parser.options(desc);
    if (positional) parser.positional(*positional);
    const po::parsed_options parsed = parser.run();
    // Without a positional description Boost keeps stray words and store() drops them, so
    // `run --suite memory gemm` would run memory alone: a word no option takes is refused.
    if (!positional) refuse_stray_words(parsed, 0);
    check_number_tokens(parsed);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (po::too_many_positional_options_error&) {
    // Name the first word beyond those the command takes.
    refuse_stray_words(po::command_line_parser(args).options(desc).run(), positional->max_total_count());
    throw UsageError("unexpected argument (options start with -)");
  } catch (po::error& e) {
    throw UsageError(message_of(e));
  }
  return vm;
}

double in_range(double value, const char* option, double lo, double hi, bool lo_inclusive) {
  const bool low_ok = lo_inclusive ? value >= lo : value > lo;
  if (!(low_ok && value <= hi)) {  // NaN fails both
    throw UsageError(fmt::format("{} {}: expected a number {} {:g} and at most {:g}", option, value,
                                 lo_inclusive ? "of at least" : "above", lo, hi));
  }
  return value;
}

long long in_range(long long value, const char* option, long long lo, long long hi) {
  if (value < lo || value > hi) throw UsageError(fmt::format("{} {}: expected {} to {}", option, value, lo, hi));
  return value;
}

po::variables_map parse_with_inputs(const std::vector<std::string>& args, const po::options_description& desc,
                                    std::vector<std::string>& positional) {
  po::options_description hidden;
  hidden.add_options()("inputs", po::value(&positional)->composing());
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("inputs", -1);
  po::variables_map vm = parse_or_throw(args, all, &pos);
  for (const std::string& p : positional) {
    if (p.empty()) throw UsageError("an input file name is empty (\"\")");
  }
  return vm;
}

void merge_output_alias(std::string& out, const std::string& output) {
  if (output.empty()) return;
  if (!out.empty() && out != output) throw UsageError("--out and --output name different files");
  out = output;
}

bool take_help(const po::variables_map& vm, const po::options_description& desc, bool& help, std::string& text) {
  if (!vm.count("help")) return false;
  help = true;
  text = help_text(desc);
  return true;
}

std::string help_text(const po::options_description& desc) {
  std::ostringstream text;
  text << desc;
  return text.str();
}

int print_help(const std::string& text) {
  std::cout << text << "\n";
  return 0;
}

std::vector<std::string> split_list(const std::string& text, const char* option) { return parse_list(text, option); }

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

DeviceInventory inventory_for(const SelectionOptions& o, const reports::SpecSheet& specs) {
  if (o.assume.empty()) {
    DeviceInventory inv = discover_devices();
    // The runtime does not say how many video engines a GPU has: the spec sheet does.
    for (DeviceInfo& d : inv.cuda) {
      if (const reports::GpuSpec* spec = specs.find(d.name)) {
        d.nvenc_engines = spec->nvenc;
        d.nvdec_engines = spec->nvdec;
      }
    }
    return inv;
  }
  AssumedNode node = assumed_inventory(o.assume, specs);
  // Suites that ask the runtime how many GPUs there are (peer copies, collectives) see the node.
  if (node.gpus > 0) assume_cuda_devices(node.gpus);
  DeviceInventory inv = std::move(node.inventory);
  if (!kBuiltWithCuda) {  // planning needs no GPU code, but this binary could not run the plan
    std::cerr << fmt::format("gpubench: --assume {}: this gpubench is {}: the plan is what a build with CUDA would run\n",
                             o.assume, kNotBuiltWithCuda);
  }
  return inv;
}

std::string join_args(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// An SLO's targets are at most a day.
constexpr double kMaxSloSeconds = 86400;

// "ttft=450ms,tpot=40ms": each key once, each value a number with a unit (us, ms, s).
reports::serving::ki::Slo parse_slo(const std::string& text) {
  reports::serving::ki::Slo slo;
  for (const std::string& item : split_list(text, "--slo")) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("--slo '{}': expected KEY=VALUE with a unit (ttft=450ms)", item));
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    std::optional<double>* slot = key == "ttft" ? &slo.ttft_s : key == "tpot" ? &slo.tpot_s : key == "itl" ? &slo.itl_s
                                  : key == "e2el" ? &slo.e2el_s : nullptr;
    if (!slot) throw UsageError(fmt::format("--slo '{}': unknown key '{}' (ttft, tpot, itl, e2el)", item, key));
    if (slot->has_value()) throw UsageError(fmt::format("--slo: '{}' is given twice", key));
    double scale = 0;
    std::string number;
    if (value.ends_with("us")) scale = 1e-6, number = value.substr(0, value.size() - 2);
    else if (value.ends_with("ms")) scale = 1e-3, number = value.substr(0, value.size() - 2);
    else if (value.ends_with("s")) scale = 1, number = value.substr(0, value.size() - 1);
    else throw UsageError(fmt::format("--slo '{}': the value needs a unit (us, ms or s), e.g. {}=450ms", item, key));
    const std::optional<double> v = read_real(number);
    if (!v) throw UsageError(fmt::format("--slo '{}': '{}' is not a number", item, number));
    const std::string option = "--slo " + key;
    *slot = in_range(*v * scale, option.c_str(), 0, kMaxSloSeconds);
  }
  return slo;
}


}  // namespace gpubench::app
