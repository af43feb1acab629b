// gpubench: GPU benchmark and profiling suite. main() only dispatches to a subcommand and
// turns exceptions into one line on stderr and an exit code.
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/stdio.hpp"
#include "bench/core/errors.hpp"

namespace {

constexpr const char* kUsage = R"(Usage: gpubench COMMAND [options]

Commands:
  run       run benchmark suites and write a results file
  list      list the cases a run would execute (--axes: suites, axes and presets)
  report    report results files side by side (Markdown, HTML, CSV, JSON)
  compare   regression verdicts between two results files (exit 1 on a regression)
  history   per-case series over many runs with change points
  doctor    check the machine (driver, GPUs, libraries, host, disk) and say what to fix
  version   print version, build and library versions
  tune      search cuBLASLt algorithms per GEMM shape (tune gemm); a training setup (tune train), a data loader (tune dataload) or how many GPUs storage feeds (tune storage)
  datagen   write a synthetic dataset for the dataload suite
  scaling   project data-parallel training to N GPUs from measured timelines and collectives
  serving   project serving latencies (TTFT, TPOT, ITL, goodput) from measured prefill and decode steps
  soak      sustained load with a time series and a pass/fail verdict (burn-in)
  evaluate  a node's whole evaluation within a time budget, reported as a node card

`gpubench COMMAND --help` describes each command's options.
)";

struct Command {
  const char* name;
  int (*fn)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"run", gpubench::app::cmd_run},
    {"list", gpubench::app::cmd_list},
    {"report", gpubench::app::cmd_report},
    {"compare", gpubench::app::cmd_compare},
    {"history", gpubench::app::cmd_history},
    {"doctor", gpubench::app::cmd_doctor},
    {"version", gpubench::app::cmd_version},
    {"tune", gpubench::app::cmd_tune},
    {"datagen", gpubench::app::cmd_datagen},
    {"scaling", gpubench::app::cmd_scaling},
    {"serving", gpubench::app::cmd_serving},
    {"soak", gpubench::app::cmd_soak},
    {"evaluate", gpubench::app::cmd_evaluate},
};

}  // namespace

namespace {

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "{}", kUsage);
    return 2;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    fmt::print("{}", kUsage);
    return 0;
  }
  if (command == "--version") return gpubench::app::cmd_version({});
  const std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (command != c.name) continue;
    try {
      return c.fn(args);
    } catch (const gpubench::UsageError& e) {
      fmt::print(stderr, "gpubench {}: {}\n", command, e.what());
      return 2;
    } catch (const std::system_error& e) {
      // The reader of stdout went away (`gpubench list | head -1` with SIGPIPE ignored, so
      // fmt::print throws EPIPE): a quiet end, 128 + SIGPIPE, as the default SIGPIPE gives.
      if (e.code().value() == EPIPE) return 141;
      fmt::print(stderr, "gpubench {}: error: {}\n", command, e.what());
      return 1;
    } catch (const std::exception& e) {
      fmt::print(stderr, "gpubench {}: error: {}\n", command, e.what());
      return 1;
    } catch (...) {
      fmt::print(stderr, "gpubench {}: error: an unknown exception\n", command);
      return 1;
    }
  }
  fmt::print(stderr,
             "gpubench: unknown command '{}' (commands: run, list, report, compare, history, tune, datagen, scaling, serving, soak, evaluate, doctor, version; see gpubench --help)\n",
             command);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  gpubench::app::guard_standard_streams();
  return gpubench::app::finish_standard_streams(dispatch(argc, argv));
}
