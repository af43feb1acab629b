// gpubench tune dataload and tune storage: options only (parse_tune.cpp); the searches live in
// bench/tune/dataload_tune.cpp and bench/tune/storage_tune.cpp.
#include "apps/gpubench/commands.hpp"
#include "apps/gpubench/options.hpp"
#include "bench/tune/dataload_tune.hpp"
#include "bench/tune/storage_tune.hpp"

namespace gpubench::app {

int cmd_tune_dataload(const std::vector<std::string>& args) {
  const TuneDataloadCli cli = parse_tune_dataload_options(args);
  if (cli.help) return print_help(cli.help_text);
  return tune::tune_dataload(cli.options);
}

int cmd_tune_storage(const std::vector<std::string>& args) {
  const TuneStorageCli cli = parse_tune_storage_options(args);
  if (cli.help) return print_help(cli.help_text);
  return tune::tune_storage(cli.options);
}

}  // namespace gpubench::app
