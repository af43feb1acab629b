// End-to-end: `gpubench report`, `compare` and `history` through the real binary on the
// synthetic fixtures (tests/fixtures/reports): formats and paths, CI exit codes, input errors,
// and the HTML report rendered by headless Chromium (skipped when chromium is not installed;
// CI installs it, scripts/lib.sh GPUBENCH_TEST_PACKAGES).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

const fs::path kFixtures = fs::path(GPUBENCH_FIXTURES_DIR);
const fs::path kReports = kFixtures / "reports";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

using ReportCli = CliTest;

TEST_F(ReportCli, WritesEveryFormatNextToOutPath) {
  const fs::path out = dir / "r" / "report.md";
  Output r = gpubench(fmt::format("report {} {} --format md,html,csv,json --out {} --price H100=2.5 --train-tokens 1e9",
                                  (kReports / "machine_a.json").string(), (kReports / "machine_b.json").string(),
                                  out.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* ext : {".md", ".html", ".csv", ".json"}) {
    EXPECT_TRUE(fs::exists(dir / "r" / (std::string("report") + ext))) << ext;
  }
  EXPECT_TRUE(contains(slurp(dir / "r" / "report.md"), "## Time and cost to train"));
  EXPECT_EQ(slurp(dir / "r" / "report.html").rfind("<!DOCTYPE html>", 0), 0u);
  const auto summary = nlohmann::json::parse(slurp(dir / "r" / "report.json"));
  EXPECT_EQ(summary["runs"].size(), 2u);
  // CSV: a header and one row per case and device (24 completed cases on each of 2 devices).
  const std::string csv = slurp(dir / "r" / "report.csv");
  EXPECT_EQ(count(csv, "\r\n"), 1u + 2 * 24);
}

// The output-name rule (docs/report-compare-history.md#output-names) in every command that
// derives a path: a name whose end is no format's extension keeps it, and gets each format's
// appended; a format's own extension is replaced.
TEST_F(ReportCli, OutputNamesKeepAnEndThatIsNoFormatsExtension) {
  const std::string a = (kReports / "machine_a.json").string(), b = (kReports / "machine_b.json").string();
  const std::string scaling = (kFixtures / "scaling" / "cpu_dp.json").string();
  const std::string serving = (kFixtures / "serving" / "infer_cpu.json").string();
  struct Case {
    std::string args, out;
    std::vector<std::string> written;
  };
  const std::vector<Case> cases = {
      {"report " + a + " --format md,html,csv", "rep_de_DE.UTF-8",
       {"rep_de_DE.UTF-8.md", "rep_de_DE.UTF-8.html", "rep_de_DE.UTF-8.csv"}},
      {"report " + a + " --format md,json,openmetrics", "r.v2.json", {"r.v2.md", "r.v2.json", "r.v2.prom"}},
      {fmt::format("compare {} {} --format md,junit", (kReports / "compare_base.json").string(),
                   (kReports / "compare_new.json").string()),
       "cmp.2026.01.05",
       {"cmp.2026.01.05.md", "cmp.2026.01.05.xml"}},
      {"history " + a + " " + b + " --format md,html", "h.TXT", {"h.md", "h.html"}},
      {"scaling " + scaling + " --format md,json", "s.v1", {"s.v1.md", "s.v1.json"}},
      {"serving " + serving + " --rate 1 --format md,json", "sv.final.html", {"sv.final.md", "sv.final.json"}},
  };
  for (const Case& c : cases) {
    const fs::path folder = dir / fmt::format("c{}", &c - cases.data());
    fs::create_directories(folder);
    const Output r = gpubench(fmt::format("{} --out {}", c.args, (folder / c.out).string()));
    ASSERT_LE(r.code, 1) << c.args << ": " << r.err;
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(folder)) found.push_back(e.path().filename().string());
    std::sort(found.begin(), found.end());
    std::vector<std::string> expected = c.written;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(found, expected) << c.args << " --out " << c.out;
  }
}

TEST_F(ReportCli, UsageAndInputErrorsExit2WithOneLine) {
  const std::string a = (kReports / "machine_a.json").string();
  fs::path truncated = dir / "truncated.json";
  {
    const std::string text = slurp(kReports / "machine_a.json");
    std::ofstream(truncated) << text.substr(0, text.size() / 2);
  }
  fs::path old_schema = dir / "old.json";
  {
    std::string text = slurp(kReports / "machine_a.json");
    text.replace(text.find("\"schema_version\": 1"), 19, "\"schema_version\": 0");
    std::ofstream(old_schema) << text;
  }
  fs::create_directories(dir / "empty");
  fs::path foreign = dir / "foreign.json";
  std::ofstream(foreign) << R"({"name": "some other tool", "values": [1, 2, 3]})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"report " + truncated.string(), "truncated.json: not valid JSON"},
      {"report " + old_schema.string(), "schema_version 0 is not supported"},
      {"report " + foreign.string(), "not a gpubench results file"},
      {"report --format pdf " + a, "--format"},
      {"report --format md,html " + a, "several formats need --out"},
      {"report --baseline V100 " + a, "--baseline 'V100' matches no run"},
      {"report --price H100 " + a, "NAME=USD_PER_HOUR"},
      {"report --prices " + a + " " + a, "not a price file"},
      {"report --train-tokens -5 " + a, "--train-tokens"},
      {"compare " + a, "expected two results files"},
      {"compare " + a + " " + truncated.string(), "not valid JSON"},
      {"compare --threshold -1 " + a + " " + a, "--threshold"},
      {"compare " + (kReports / "compare_base.json").string() + " " + (kReports / "compare_other_gpu.json").string(),
       "--allow-different-devices"},
      {"history", "no results files or directory given"},
      {"history " + (dir / "empty").string(), "no .json results files"},
      {"history --permutations 5 " + a, "--permutations"},
  };
  for (const auto& [args, message] : cases) {
    Output r = gpubench(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, message)) << args << "\n" << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << args << "\n" << r.err;
  }
}

TEST_F(ReportCli, CompareExitCodesAndJunit) {
  const std::string base = (kReports / "compare_base.json").string(), next = (kReports / "compare_new.json").string();
  const fs::path junit = dir / "junit.xml";
  Output r = gpubench(fmt::format("compare {} {} --junit {}", base, next, junit.string()));
  EXPECT_EQ(r.code, 1) << r.err;  // two regressions
  EXPECT_TRUE(contains(r.out, "## Regressions"));
  EXPECT_TRUE(contains(r.err, "2 case(s) regressed"));
  const std::string xml = slurp(junit);
  EXPECT_TRUE(contains(xml, "failures=\"2\""));
  EXPECT_EQ(count(xml, "<failure "), 2u);

  // Same file on both sides: nothing regressed.
  r = gpubench(fmt::format("compare {} {}", base, base));
  EXPECT_EQ(r.code, 0) << r.err;
  // A 15% threshold: the 10% changes are within it.
  r = gpubench(fmt::format("compare --threshold 15 {} {}", base, next));
  EXPECT_EQ(r.code, 0) << r.err;
  // Different GPU models when allowed: compared, with the reason as a warning.
  r = gpubench(fmt::format("compare --allow-different-devices {} {} -f json", base,
                           (kReports / "compare_other_gpu.json").string()));
  EXPECT_NE(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "not a regression"));
  const auto parsed = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded()) << r.out;
}

TEST_F(ReportCli, HistoryNamesTheRunThatShifted) {
  Output r = gpubench("history " + (kReports / "history").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "| 5 (")) << r.out;  // run 5 is the first at the new level
  EXPECT_TRUE(contains(r.out, "| 2025-06-05T02:00:00Z |"));
}

// Issue 30's speed-up section on its fixture (tests/fixtures/make_report_fixtures.py: fp8 GEMMs
// 1.75x bf16's, the fp8 step 1.28x, 62% of the bf16 step in dense GEMMs).
TEST_F(ReportCli, LowPrecisionSectionPutsTheGemmSpeedUpBesideTheStepSpeedUp) {
  const Output r = gpubench("report " + (kReports / "low_precision.json").string() + " -f md");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto at = r.out.find("## Low precision: fp8 against bf16");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string section = r.out.substr(at, r.out.find("\n## ", at + 1) - at);
  // The model's four GEMMs are paired (the bf16-only mnk GEMM is not), 1.75x.
  EXPECT_TRUE(contains(section, "| llama-7b | 4 |")) << section;
  EXPECT_TRUE(contains(section, "| 1.75x |")) << section;
  EXPECT_FALSE(contains(section, "m, n, k shapes")) << section;
  // The step: 1.28x, 38.0% outside the dense GEMMs, bound 1 / (0.38 + 0.62 / 1.75) = 1.36x.
  EXPECT_TRUE(contains(section, "| 1.28x | 38.0% | 1.75x | 1.36x |")) << section;
}

// Issue 30 item 4: block-scaled GEMMs (synthetic B200 fixture) show the GEMM-only and the
// with-quantisation TFLOP/s and the quantisation's overhead as % of the GEMM; an entry without
// the second figure is left out. Markdown and HTML render the section (CSV and JSON hold cases).
TEST_F(ReportCli, LowPrecisionSectionShowsBlockScaledQuantisationOverhead) {
  const Output r = gpubench("report " + (kReports / "block_scaled.json").string() + " -f md");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto at = r.out.find("### Block-scaled GEMMs: quantisation overhead");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string table = r.out.substr(at, r.out.find("\n#", at + 1) - at);
  EXPECT_TRUE(contains(table, "| GEMM-only TFLOP/s | with quantisation TFLOP/s | quantisation overhead |")) << table;
  EXPECT_TRUE(contains(table, "| mxfp8 |")) << table;
  EXPECT_TRUE(contains(table, "| 3000 | 2000 | 50.0% |")) << table;
  EXPECT_TRUE(contains(table, "| nvfp4 |")) << table;
  EXPECT_TRUE(contains(table, "| 6000 | 4000 | 50.0% |")) << table;
  EXPECT_FALSE(contains(table, "m=1024")) << table;  // no second figure: not a row
  EXPECT_FALSE(contains(r.out, "### GEMM-only speed-up")) << r.out;  // no fp8/bf16 pair in this file
  const Output html = gpubench("report " + (kReports / "block_scaled.json").string() + " -f html");
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_TRUE(contains(html.out, "Block-scaled GEMMs: quantisation overhead")) << html.out.substr(0, 2000);
}

TEST_F(ReportCli, TenThousandCasesWork) {
  // 10,000 cases in one file (the perf benchmark times this; here it must simply work).
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(slurp(kReports / "machine_a.json"));
  nlohmann::ordered_json proto = doc["benchmarks"][0];
  doc["benchmarks"] = nlohmann::ordered_json::array();
  for (int i = 0; i < 10000; ++i) {
    proto["gpubench"]["axes"]["m"] = 16 + i;
    doc["benchmarks"].push_back(proto);
  }
  const fs::path big = dir / "big.json";
  std::ofstream(big) << doc.dump();
  Output r = gpubench(fmt::format("report {} -f csv -o {}", big.string(), (dir / "big.csv").string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count(slurp(dir / "big.csv"), "\r\n"), 10001u);
}

// The HTML report in a real browser: renders without console errors, runs no script (the
// hostile fixture tries), and shows its charts.
TEST_F(ReportCli, HtmlRendersInHeadlessChromium) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; CI installs it)";
  }
  struct Page {
    std::string args;
  };
  const std::vector<Page> pages = {
      {fmt::format("report {} {} --price H100=2.5 --train-tokens 1e9", (kReports / "machine_a.json").string(),
                   (kReports / "machine_b.json").string())},
      {"report " + (kReports / "hostile.json").string()},
      {"report " + (kReports / "one_run_cpu.json").string()},  // one run: the lead, no scorecard
      {"history " + (kReports / "history").string()},
      {fmt::format("compare {} {}", (kReports / "compare_base.json").string(), (kReports / "compare_new.json").string())},
  };
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const fs::path html = dir / fmt::format("page{}.html", i);
    Output r = gpubench(fmt::format("{} -f html -o {}", pages[i].args, html.string()));
    ASSERT_LE(r.code, 1) << r.err;
    const std::string expected_charts = std::to_string(count(slurp(html), "<svg class=\"chart"));
    Output dom = sh(fmt::format("timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr "
                                "--v=0 --user-data-dir={} --dump-dom file://{}",
                                (dir / "chromium").string(), html.string()));
    ASSERT_EQ(dom.code, 0) << dom.err;
    // Console messages (errors, CSP refusals) are logged as "CONSOLE"; scripts must not exist.
    EXPECT_FALSE(contains(dom.err, "CONSOLE")) << pages[i].args << "\n" << dom.err;
    EXPECT_FALSE(contains(dom.err, "Refused to")) << dom.err;
    EXPECT_EQ(count(dom.out, "<script"), 0u) << pages[i].args;
    EXPECT_EQ(count(dom.out, "<img"), 0u) << pages[i].args;
    EXPECT_EQ(count(dom.out, "<iframe"), 0u) << pages[i].args;
    // Every chart the file holds is an element of the rendered page, with drawn content.
    EXPECT_EQ(std::to_string(count(dom.out, "<svg class=\"chart")), expected_charts) << pages[i].args;
    if (i == 2) {  // the one-run lead, rendered: its heading and the CPU's missing peak said, not blank
      EXPECT_TRUE(contains(dom.out, "What the run measured")) << dom.out.substr(0, 2000);
      EXPECT_TRUE(contains(dom.out, "no CPU peak recorded"));
      EXPECT_FALSE(contains(dom.out, "Scorecard"));
    }
    if (i != 1) {
      EXPECT_GT(count(dom.out, "<svg class=\"chart"), 0u) << pages[i].args;
    }
  }
}

}  // namespace
}  // namespace gpubench::e2e
