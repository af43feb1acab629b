// libFuzzer target: the results reader (reports/results_reader.hpp) and the Markdown report
// that consumes what it accepts (`gpubench report`).
//
// Input: the contents of one results file, given to read_results_text (read_results reads the
// file and calls it). UsageError is the expected rejection of a bad file; any other exception,
// a crash, a hang or a sanitizer report is a finding. An accepted file is rendered with
// render_markdown against the built-in spec sheet, which must not throw either.
#include <cstdint>
#include <string_view>

#include "bench/core/errors.hpp"
#include "reports/markdown.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpubench::reports;
  static const SpecSheet specs = SpecSheet::builtin();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ResultsFile file;
  try {
    file = read_results_text(text, "fuzz.json");
  } catch (const gpubench::UsageError&) {
    return 0;
  }
  (void)file.host();
  (void)render_markdown({file}, specs);
  return 0;
}
