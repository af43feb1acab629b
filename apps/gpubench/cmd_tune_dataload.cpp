// gpubench tune dataload: options only (parse_tune.cpp); the search lives in
// bench/tune/dataload_tune.cpp.
#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/tune/dataload_tune.hpp"

namespace gpubench::app {

int cmd_tune_dataload(const std::vector<std::string>& args) {
  const TuneDataloadCli cli = parse_tune_dataload_options(args);
  if (cli.help) return print_help(cli.help_text);
  return tune::tune_dataload(cli.options);
}

}  // namespace gpubench::app
