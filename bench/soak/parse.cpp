// The soak's option values (runner.hpp: parse_duration; loads.hpp: parse_load; rules.hpp:
// default_warmup_s): plain parsing, apart from the loop, so `gpubench soak`'s option parser
// (apps/gpubench/parse_soak.cpp) and its fuzzer need none of the soak machinery.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"
#include "bench/soak/loads.hpp"
#include "bench/soak/rules.hpp"
#include "bench/soak/runner.hpp"

namespace gpubench::soak {

double parse_duration(const std::string& text, const char* option) {
  // A number in the command line's one syntax (bench/core/numbers.hpp) and an optional unit.
  std::string number = text, unit;
  for (const char* u : {"ms", "s", "m", "h"}) {
    const std::string_view suffix(u);
    if (number.size() > suffix.size() && number.compare(number.size() - suffix.size(), suffix.size(), suffix) == 0) {
      unit = u;
      number.resize(number.size() - suffix.size());
      break;
    }
  }
  const std::optional<double> n = read_real(number);
  if (!n) {
    throw UsageError(fmt::format("{} '{}': expected a number of seconds, or one with a unit ms, s, m or h (30s, 10m, 2h)",
                                 option, text));
  }
  double v = *n;
  if (unit == "ms") v /= 1000;
  else if (unit == "m") v *= 60;
  else if (unit == "h") v *= 3600;
  if (!std::isfinite(v) || !(v > 0)) throw UsageError(fmt::format("{} '{}': must be above 0", option, text));
  return v;
}

std::vector<std::string> parse_load(const std::string& text) {
  if (text == "gemm" || text == "memory" || text == "train") return {text};
  if (text == "mixed") return {"gemm", "memory", "train"};
  throw UsageError(fmt::format("--load '{}': expected gemm, memory, train or mixed", text));
}

double default_warmup_s(double duration_s) { return std::min(60.0, 0.1 * duration_s); }

}  // namespace gpubench::soak
