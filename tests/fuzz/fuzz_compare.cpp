// libFuzzer target: `gpubench compare` over two results files (reports/compare.hpp).
//
// Input: two results files' contents separated by the first NUL byte (the second is empty
// without one). Each is read with read_results_text; UsageError is the expected rejection of a
// bad file or of different GPU models. Accepted pairs are compared (with and without
// --allow-different-devices) and rendered as Markdown, HTML, JUnit and JSON; any other
// exception, a crash, a hang or a sanitizer report is a finding. Every verdict must be one of
// the documented six, and the regression count must match the verdicts.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "bench/core/errors.hpp"
#include "reports/compare.hpp"
#include "reports/results_reader.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpubench::reports;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const auto nul = all.find('\0');
  const std::string_view a = all.substr(0, nul), b = nul == std::string_view::npos ? std::string_view() : all.substr(nul + 1);
  ResultsFile base, next;
  try {
    base = read_results_text(a, "base.json");
    next = read_results_text(b, "new.json");
  } catch (const gpubench::UsageError&) {
    return 0;
  }
  for (bool allow : {false, true}) {
    CompareOptions options;
    options.allow_different_devices = allow;
    Comparison c;
    try {
      c = compare_results(base, next, options);
    } catch (const gpubench::UsageError&) {
      require(!allow);
      continue;
    }
    std::size_t regressed = 0;
    for (const auto& x : c.cases) {
      const std::string_view v = verdict_name(x.verdict);
      require(v == "improved" || v == "regressed" || v == "unchanged" || v == "noisy" || v == "missing" || v == "new");
      regressed += v == "regressed";
    }
    require(regressed == c.regressions());
    (void)to_markdown(comparison_document(c, base, next, options));
    (void)to_html(comparison_document(c, base, next, options));
    (void)comparison_junit(c, options);
    (void)comparison_json(c, options).dump();
  }
  return 0;
}
