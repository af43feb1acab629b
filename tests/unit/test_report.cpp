// `gpubench report`, `compare` and `history` over the synthetic fixtures in
// tests/fixtures/reports (made by tests/fixtures/make_report_fixtures.py): golden files, the
// numbers behind them, escaping of hostile text, and the option helpers.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/core/errors.hpp"
#include "reports/cases.hpp"
#include "reports/compare.hpp"
#include "reports/escape.hpp"
#include "reports/history.hpp"
#include "reports/outputs.hpp"
#include "reports/report.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gpubench::reports;

const fs::path kFixtures = fs::path(GPUBENCH_FIXTURES_DIR) / "reports";
const fs::path kGolden = fs::path(GPUBENCH_FIXTURES_DIR).parent_path() / "golden";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string line_with(const std::string& text, const std::string& part) {
  const auto at = text.find(part);
  if (at == std::string::npos) return {};
  const auto begin = text.rfind('\n', at) + 1;
  const auto end = text.find('\n', at);
  return text.substr(begin, end - begin);
}

// Golden files: GPUBENCH_UPDATE_GOLDEN=1 rewrites them (review the diff before committing).
void expect_golden(const std::string& name, const std::string& actual) {
  const fs::path path = kGolden / name;
  if (std::getenv("GPUBENCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(slurp(path), actual) << path << " differs; if the change is intended, rerun with GPUBENCH_UPDATE_GOLDEN=1";
}

// The file's name alone, so that golden files do not depend on where the tree is.
ResultsFile fixture(const std::string& name) {
  ResultsFile f = read_results(kFixtures / name);
  f.path = name;
  return f;
}

ReportOptions ab_options() {
  ReportOptions o;
  o.prices.add_assignment("H100=2.50");
  o.prices.add_assignment("A100=1.20");
  o.train_tokens = 1e10;
  return o;
}

Report ab_report(ReportOptions o = ab_options()) {
  return build_report({fixture("machine_a.json"), fixture("machine_b.json")}, SpecSheet::builtin(), o);
}

TEST(Report, GoldenMarkdownAndCsv) {
  const Report r = ab_report();
  expect_golden("report_ab.md", to_markdown(r.doc));
  expect_golden("report_ab.csv", r.csv);
}

TEST(Report, JoinsCasesAcrossFilesAndComputesRatiosAndPeaks) {
  const std::string md = to_markdown(ab_report().doc);
  // 8192^3 bf16 cuBLASLt: 700 TFLOP/s on the H100 (989.5 datasheet: 70.7%; measured ceiling
  // 760: 92.1%; 600 W: 1.17 TFLOP/s per W; 2.50 USD/h: 280), 280 on the A100 (0.400x; 312
  // datasheet: 89.7%). % of published (data/reference.json's MAMF bf16 rows, the ceiling of every
  // shape): 700 / 794.5 = 88.1% on the H100, 280 / 271.2 = 103.2% on the A100.
  EXPECT_EQ(line_with(md, "| 8192 | 8192 | 8192 | bf16 | cublaslt |"),
            "| 8192 | 8192 | 8192 | bf16 | cublaslt | 700 TFLOP/s | 70.7% | 88.1% | 92.1% | 1.17 | 280 | 280 TFLOP/s | "
            "0.400x | 89.7% | 103.2% | 92.1% | 1.17 | 233 |");
  // Scorecard: every suite at 0.4x but memory (2039 * 0.9 / (3350 * 0.9) = 0.609x).
  EXPECT_TRUE(contains(line_with(md, "| NVIDIA A100-SXM4-80GB @ node-b | 0.400x (12)"), "| 0.609x (2) |"));
  // Time to train 1e10 tokens at 168300 tokens/s: 16.5 h, 41 USD at 2.50 USD/h.
  EXPECT_TRUE(contains(md, "| 168300 | 16.5 | 0.688 | 41 |"));
  // Findings.
  EXPECT_TRUE(contains(md, "| gemm | provider | NVIDIA H100 80GB HBM3 @ node-a | cublaslt-tuned (6 of 6) | cublaslt | +4.5% |"));
  EXPECT_TRUE(contains(md, "| gemm | dtype | NVIDIA H100 80GB HBM3 @ node-a | bf16 (4 of 4) | fp32 |"));
  EXPECT_TRUE(contains(md, "| NVIDIA H100 80GB HBM3 @ node-a | 6 | +4.5% | +6.0% |"));
  EXPECT_TRUE(contains(md, "| NVIDIA H100 80GB HBM3 @ node-a | dataload dataset=imagenet-synthetic pinned=true | 4 | 4.0% | 60.0% | 64 |"));
  EXPECT_TRUE(contains(md, "| NVIDIA A100-SXM4-80GB @ node-b | gemm | m=8192 n=8192 k=8192 dtype=fp32 provider=cublaslt-tuned | 1.0 | throttled |"));
  // Environment warnings.
  EXPECT_TRUE(contains(md, "> **Warning:** the runs differ in driver (570.86.15 vs 580.65.06)"));
  EXPECT_TRUE(contains(md, "> **Warning:** run #2 (node-b): 1 case(s) ran throttled."));
}

// One results file: the report leads with what the run says about its device (issue 49), not a
// scorecard of the run against itself (1.00x everywhere).
TEST(Report, OneRunLeadsWithWhatItMeasuredOnACpu) {
  const Report r = build_report({fixture("one_run_cpu.json")}, SpecSheet::builtin(), {});
  const std::string md = to_markdown(r.doc);
  EXPECT_TRUE(contains(md, "## What the run measured")) << md;
  EXPECT_FALSE(contains(md, "## Scorecard")) << md;
  EXPECT_FALSE(contains(md, "1.00x")) << md;
  EXPECT_FALSE(contains(md, "Baseline:")) << md;
  // Counts per suite (a case's repetitions once): gemm 4 ok (one noisy, one suspect: above the
  // measured fp32 ceiling), 1 skipped; memory 4 ok, 1 failed, and its fp32 ceiling suspect (the
  // gemm case beats it); each with its verdict and first reason.
  EXPECT_TRUE(contains(md, "Synthetic CPU @ laptop: 8 cases ok (1 noisy, 2 suspect), 1 failed, 1 skipped. "
                           "Failed cases measured nothing: see Skipped and failed."))
      << md;
  const std::string gemm = line_with(md, "| gemm | 4 |");
  EXPECT_EQ(gemm.rfind("| gemm | 4 | 1 | 1 | 0 | 1 | 1 suspect (", 0), 0u) << md;
  EXPECT_TRUE(contains(gemm, "1 noisy: rerun before acting on it")) << gemm;
  EXPECT_TRUE(contains(line_with(md, "| memory | 4 |"),
                       "| memory | 4 | 0 | 1 | 1 | 0 | 1 failed (verification failed: dot 1.5e7 against 1.6e7); 1 suspect (suspect ceiling: "))
      << md;
  // Headline figures against the measured ceilings; no datasheet knows the CPU and it recorded no
  // peak: said, not an empty cell.
  EXPECT_EQ(line_with(md, "| gemm | TFLOP/s (4 cases) |"),
            "| gemm | TFLOP/s (4 cases) | 0.150 TFLOP/s (suspect) | m=2048 n=2048 k=2048 | 150.0% | no CPU peak recorded |")
      << md;
  EXPECT_EQ(line_with(md, "| memory | GB/s (3 cases) |"),
            "| memory | GB/s (3 cases) | 21.0 GB/s | test=triad size=268435456 | 100.0% | no CPU peak recorded |")
      << md;
  EXPECT_TRUE(contains(md, "| memory bandwidth | 21.0 GB/s | test=triad | no CPU peak recorded | - |")) << md;
  EXPECT_FALSE(contains(md, "% of published")) << "no published figure applies to a CPU";
  // The same lead in HTML, and the counts and verdicts in the JSON summary.
  const std::string html = to_html(r.doc);
  EXPECT_TRUE(contains(html, "What the run measured")) << html;
  EXPECT_TRUE(contains(html, "no CPU peak recorded"));
  EXPECT_FALSE(contains(html, "Scorecard"));
  const auto& gemm_json = r.summary["runs"][0]["suites"]["gemm"];
  EXPECT_EQ(gemm_json["counts"]["ok"], 4);
  EXPECT_EQ(gemm_json["counts"]["noisy"], 1);
  EXPECT_EQ(gemm_json["counts"]["suspect"], 1);
  EXPECT_EQ(gemm_json["counts"]["skipped"], 1);
  EXPECT_EQ(r.summary["runs"][0]["suites"]["memory"]["counts"]["failed"], 1);
  EXPECT_TRUE(contains(gemm_json["verdict"].get<std::string>(), "1 suspect"));

  // A CPU peak recorded at run time (metrics.peak): the % of peak is shown.
  ResultsFile with_peak = fixture("one_run_cpu.json");
  for (ResultEntry& e : with_peak.entries) {
    if (e.suite == "gemm" && e.status == "ok") e.metrics["peak"] = 0.2;
  }
  const std::string md2 = to_markdown(build_report({with_peak}, SpecSheet::builtin(), {}).doc);
  EXPECT_TRUE(contains(line_with(md2, "| gemm | TFLOP/s (4 cases) |"), "| 150.0% | 75.0% |")) << md2;
}

TEST(Report, OneRunOnAGpuLeadsWithCeilingsDatasheetAndPublished) {
  const Report r = build_report({fixture("machine_a.json")}, SpecSheet::builtin(), {});
  const std::string md = to_markdown(r.doc);
  EXPECT_FALSE(contains(md, "## Scorecard")) << md;
  EXPECT_FALSE(contains(md, "1.00x")) << md;
  // 8192^3 bf16 cublaslt-tuned: 721 TFLOP/s (700 x 1.03): 94.9% of the measured 760, 72.9% of the
  // datasheet's 989.5, 90.7% of the published MAMF 794.5.
  const std::string gemm = line_with(md, "| gemm | TFLOP/s (12 cases) |");
  EXPECT_TRUE(contains(gemm, "| 721 TFLOP/s | m=8192 n=8192 k=8192 dtype=bf16 provider=cublaslt-tuned | 94.9% | 72.9% | 90.7% of 794.5 TFLOP/s"))
      << md;
  // The measured ceilings against the datasheet: 3082 of 3350 GB/s, 760 of 989.5 TFLOP/s.
  EXPECT_TRUE(contains(md, "| memory bandwidth | 3082 GB/s | test=triad | 3350 GB/s | 92.0% |")) << md;
  EXPECT_TRUE(contains(md, "| bf16\\_tensor | 760 TFLOP/s | test=mma\\_bf16 | 990 TFLOP/s | 76.8% |")) << md;
  EXPECT_TRUE(contains(md, "NVIDIA H100 80GB HBM3 @ node-a: 24 cases ok (0 noisy, 0 suspect), 0 failed, 1 skipped."))
      << md;
}

TEST(Report, TwoRunsKeepTheRatioScorecard) {
  const std::string md = to_markdown(ab_report().doc);
  EXPECT_TRUE(contains(md, "## Scorecard"));
  EXPECT_FALSE(contains(md, "## What the run measured"));
  EXPECT_TRUE(contains(md, "Baseline: "));
}

TEST(Report, BaselineChoiceAndErrors) {
  ReportOptions o = ab_options();
  o.baseline = "A100";
  const Report r = ab_report(o);
  EXPECT_TRUE(contains(to_markdown(r.doc), "Baseline: NVIDIA A100-SXM4-80GB @ node-b."));
  EXPECT_EQ(r.summary["baseline"], 2);
  EXPECT_NEAR(r.summary["runs"][0]["suites"]["gemm"]["geomean_ratio"].get<double>(), 2.5, 1e-9);
  o.baseline = "#1";
  EXPECT_EQ(ab_report(o).summary["baseline"], 1);
  o.baseline = "V100";
  EXPECT_THROW(ab_report(o), gpubench::UsageError);
  o.baseline = "node";  // both runs
  EXPECT_THROW(ab_report(o), gpubench::UsageError);
  o.baseline = "3";
  EXPECT_THROW(ab_report(o), gpubench::UsageError);
}

TEST(Report, JsonSummaryHasPerfPerDollar) {
  const auto s = ab_report().summary;
  EXPECT_EQ(s["format"], "gpubench-report-summary");
  // A100: 0.4x the work at 1.2/2.5 of the price -> 0.4 * 2.5 / 1.2 = 0.833x perf per dollar on
  // every case but memory.
  const double per_usd = s["runs"][1]["perf_per_usd_ratio"].get<double>();
  EXPECT_GT(per_usd, 0.83);
  EXPECT_LT(per_usd, 0.90);
  EXPECT_EQ(s["runs"][1]["usd_per_hour"], 1.2);
}

TEST(Report, WithoutPricesOrTelemetryTheColumnsAreLeftOut) {
  const Report r = build_report({read_results(fs::path(GPUBENCH_FIXTURES_DIR) / "results_small.json")},
                                SpecSheet::builtin(), {});
  const std::string md = to_markdown(r.doc);
  EXPECT_FALSE(contains(md, "per USD/h"));
  EXPECT_FALSE(contains(md, "per W |"));
  EXPECT_TRUE(contains(md, "No prices given"));
}

TEST(Report, HtmlHasChartsAndNoScript) {
  const std::string html = to_html(ab_report().doc);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(contains(html, "Content-Security-Policy"));
  EXPECT_TRUE(contains(html, "<svg class=\"chart roofline\""));
  EXPECT_TRUE(contains(html, "<svg class=\"chart bars\""));
  EXPECT_FALSE(contains(html, "<script"));
  EXPECT_FALSE(contains(html, "http://") && !contains(html, "xmlns=\"http://www.w3.org/2000/svg\""));
}

// Every piece of text from a hostile results file comes out inert in every format.
TEST(Report, HostileTextIsEscapedEverywhere) {
  ResultsFile evil = fixture("hostile.json");
  const Report r = build_report({evil}, SpecSheet::builtin(), ab_options());
  const std::string html = to_html(r.doc);
  for (const char* bad : {"<script", "</svg><", "<img", "<iframe", "<b>", "onload=", "' onmouseover", "\"><svg"}) {
    // `onload=` may only appear escaped inside text, never as an attribute: the tag that would
    // carry it is escaped.
    if (std::string(bad) == "onload=") continue;
    EXPECT_FALSE(contains(html, bad)) << bad;
  }
  EXPECT_TRUE(contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(contains(html, "&lt;/svg&gt;&lt;script&gt;alert(3)&lt;/script&gt;"));
  EXPECT_TRUE(contains(html, "&#39; onmouseover=&#39;alert(5)"));
  // No link or source attribute exists at all, so javascript: urls can only appear as text.
  EXPECT_FALSE(contains(html, "href="));
  EXPECT_FALSE(contains(html, " src=\""));

  const std::string md = to_markdown(r.doc);
  EXPECT_FALSE(contains(md, "<script"));
  EXPECT_FALSE(contains(md, "<iframe"));
  EXPECT_TRUE(contains(md, "a\\|b c,\"d\" =cmd\\|' /C calc'!A0 \\]\\]&gt; &amp; '"));
  // The row with a pipe inside a value keeps the column count of its neighbour.
  auto cells = [](const std::string& line) {
    long n = 0;
    for (std::size_t i = 0; i < line.size(); ++i) n += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    return n;
  };
  EXPECT_EQ(cells(line_with(md, "| 1024 |")), cells(line_with(md, "| 2048 |")));

  // CSV: the field with a newline, comma and quote is quoted; a formula is defused.
  EXPECT_TRUE(contains(r.csv, "\"a|b\nc,\"\"d\"\" =cmd|' /C calc'!A0 ]]> & '\""));

  // Compare and JUnit with the same names.
  CompareOptions co;
  const Comparison c = compare_results(evil, evil, co);
  const std::string junit = comparison_junit(c, co);
  EXPECT_FALSE(contains(junit, "<script"));
  EXPECT_FALSE(contains(junit, "]]>"));
  EXPECT_TRUE(contains(junit, "&lt;/svg&gt;"));
  const std::string chtml = to_html(comparison_document(c, evil, evil, co));
  EXPECT_FALSE(contains(chtml, "<script"));

  // History charts carry labels too.
  HistoryOptions ho;
  ho.permutations = 100;
  const std::string hhtml = to_html(history_document(build_history({evil, evil}, ho), ho));
  EXPECT_FALSE(contains(hhtml, "<script"));
  EXPECT_FALSE(contains(hhtml, "</svg><"));
}

TEST(ReportEscape, EachFormat) {
  EXPECT_EQ(html_escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  EXPECT_EQ(xml_escape(std::string("a\x01<b>'\"&", 8)), "a&lt;b&gt;&apos;&quot;&amp;");
  EXPECT_EQ(md_escape("a|b\nc*d_e`f[g]"), "a\\|b c\\*d\\_e\\`f\\[g\\]");
  EXPECT_EQ(md_escape(""), "-");
  EXPECT_EQ(md_escape_paragraph("# not a heading"), "\\# not a heading");
  EXPECT_EQ(md_escape_paragraph("1. not a list"), "1\\. not a list");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("=SUM(A1)"), "'=SUM(A1)");
  EXPECT_EQ(csv_field("-1.5"), "-1.5");  // a number stays a number
  EXPECT_EQ(csv_field("@cmd"), "'@cmd");
  // Issue 26: tab and carriage return start formulas too (OWASP), and a dropped control byte
  // in front must not uncover one.
  EXPECT_EQ(csv_field("\tcmd"), "'\tcmd");
  EXPECT_EQ(csv_field("\r=cmd"), "\"'\r=cmd\"");
  EXPECT_EQ(csv_field("\x01=cmd"), "'=cmd");
}

TEST(Compare, GoldenAndVerdicts) {
  const ResultsFile base = fixture("compare_base.json"), next = fixture("compare_new.json");
  CompareOptions o;
  const Comparison c = compare_results(base, next, o);
  expect_golden("compare.md", to_markdown(comparison_document(c, base, next, o)));
  expect_golden("compare.xml", comparison_junit(c, o));
  std::map<std::string, std::string> verdicts;
  for (const auto& x : c.cases) verdicts[x.suite + " " + x.label] = verdict_name(x.verdict);
  EXPECT_EQ(verdicts["gemm m=4096 n=4096 k=4096 dtype=bf16 provider=cublaslt"], "regressed");
  EXPECT_EQ(verdicts["gemm m=8192 n=8192 k=8192 dtype=bf16 provider=cublaslt"], "improved");
  EXPECT_EQ(verdicts["gemm m=4096 n=4096 k=4096 dtype=fp32 provider=cublaslt"], "unchanged");
  EXPECT_EQ(verdicts["gemm m=8192 n=8192 k=8192 dtype=fp32 provider=cublaslt"], "noisy");
  EXPECT_EQ(verdicts["memory test=triad size=1073741824"], "regressed");  // noise overlap: 0.5% noise, -10%
  EXPECT_EQ(verdicts["memory test=copy size=1073741824"], "noisy");       // 8% noise, -6%
  EXPECT_EQ(verdicts["memory test=dot size=1073741824"], "missing");
  EXPECT_EQ(verdicts["memory test=scale size=1073741824"], "new");
  EXPECT_EQ(c.regressions(), 2u);
  for (const auto& x : c.cases) {
    if (x.suite == "gemm") {
      EXPECT_EQ(x.test, "mann-whitney");
    } else if (x.verdict != Verdict::missing && x.verdict != Verdict::added) {
      EXPECT_EQ(x.test, "noise-overlap");
    }
  }
  // A higher threshold turns the 10% changes into unchanged; speed-ups never count.
  o.threshold_pct = 15;
  EXPECT_EQ(compare_results(base, next, o).regressions(), 0u);
  o.threshold_pct = 5;
  EXPECT_EQ(compare_results(next, base, o).regressions(), 1u);  // reversed: the improvement regresses
}

TEST(Compare, FewRepetitionsWarnAndTooFewFallBackToNoiseOverlap) {
  ResultsFile base = fixture("compare_base.json"), next = fixture("compare_new.json");
  // Keep 3 repetitions a side: the exact U test cannot go below p = 0.1 there.
  auto keep = [](ResultsFile& f, std::int64_t n) {
    std::erase_if(f.entries, [&](const ResultEntry& e) { return e.repetition_index && *e.repetition_index >= n; });
  };
  keep(base, 3), keep(next, 3);
  Comparison c = compare_results(base, next, {});
  for (const auto& x : c.cases) {
    if (x.suite == "gemm") {
      EXPECT_EQ(x.test, "noise-overlap") << x.label;
    }
  }
  base = fixture("compare_base.json"), next = fixture("compare_new.json");
  keep(base, 5), keep(next, 5);
  c = compare_results(base, next, {});
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_TRUE(contains(c.warnings.back(), "fewer than 9 repetitions"));
  for (const auto& x : c.cases) {
    if (x.suite == "gemm") {
      EXPECT_EQ(x.test, "mann-whitney") << x.label;
    }
  }
}

TEST(Compare, RefusesDifferentGpuModelsUnlessAllowed) {
  const ResultsFile base = fixture("compare_base.json"), other = fixture("compare_other_gpu.json");
  try {
    compare_results(base, other, {});
    FAIL() << "expected a UsageError";
  } catch (const gpubench::UsageError& e) {
    EXPECT_TRUE(contains(e.what(), "NVIDIA A100-SXM4-80GB")) << e.what();
    EXPECT_TRUE(contains(e.what(), "--allow-different-devices")) << e.what();
  }
  CompareOptions o;
  o.allow_different_devices = true;
  const Comparison c = compare_results(base, other, o);
  EXPECT_FALSE(c.warnings.empty());
}

TEST(History, GoldenAndShift) {
  std::vector<ResultsFile> files;
  for (const auto& p : expand_history_inputs({(kFixtures / "history").string()})) {
    ResultsFile f = read_results(p);
    f.path = p.filename();
    files.push_back(std::move(f));
  }
  HistoryOptions o;
  const History h = build_history(files, o);
  ASSERT_EQ(h.runs.size(), 8u);
  EXPECT_EQ(h.runs.front().date, "2025-06-01T02:00:00Z");  // sorted by date, not file name
  ASSERT_EQ(h.series.size(), 2u);
  ASSERT_EQ(h.series[0].changes.size(), 1u);
  EXPECT_EQ(h.series[0].run[h.series[0].changes[0].index], 4u);  // run 5, 2025-06-05
  EXPECT_TRUE(h.series[1].changes.empty());
  expect_golden("history.md", to_markdown(history_document(h, o)));
  const std::string html = to_html(history_document(h, o));
  EXPECT_TRUE(contains(html, "class=\"mark\""));
  EXPECT_EQ(history_json(h)["series"][0]["changes"][0]["run"], 5);
}

TEST(History, InputErrors) {
  EXPECT_THROW(expand_history_inputs({}), gpubench::UsageError);
  const fs::path empty = fs::temp_directory_path() / "gpubench-history-empty";
  fs::create_directories(empty);
  EXPECT_THROW(expand_history_inputs({empty.string()}), gpubench::UsageError);
  fs::remove_all(empty);
}

TEST(ReportOutputs, FormatsAndPaths) {
  auto t = resolve_outputs("md", "", {"md", "html"});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].path, "");
  t = resolve_outputs("markdown,html", "out/report.md", {"md", "html"});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].path, "out/report.md");
  EXPECT_EQ(t[1].path, "out/report.html");
  EXPECT_THROW(resolve_outputs("md,html", "", {"md", "html"}), gpubench::UsageError);
  EXPECT_THROW(resolve_outputs("pdf", "", {"md", "html"}), gpubench::UsageError);
  EXPECT_THROW(resolve_outputs("md,", "x", {"md", "html"}), gpubench::UsageError);
}

// The output-name rule (docs/report-compare-history.md#output-names): only a format's own
// extension is replaced; a version, a date or a locale at the end of a name is kept whole.
TEST(ReportOutputs, OnlyAFormatsOwnExtensionIsReplaced) {
  for (const char* ext : {".json", ".md", ".html", ".csv", ".prom", ".txt", ".xml", ".JSON", ".Md"}) {
    EXPECT_TRUE(is_format_extension(ext)) << ext;
    EXPECT_EQ(derived_output_path(std::string("out/r") + ext, ".html"), "out/r.html") << ext;
  }
  for (const char* ext : {".2", ".UTF-8", ".v1", ".05", ".gz", ".htm", ".jsonl", "", "."}) {
    EXPECT_FALSE(is_format_extension(ext)) << ext;
  }
  EXPECT_EQ(derived_output_path("p.v1.2", ".md"), "p.v1.2.md");
  EXPECT_EQ(derived_output_path("rep_de_DE.UTF-8", ".csv"), "rep_de_DE.UTF-8.csv");
  EXPECT_EQ(derived_output_path("runs/2026.01.05", ".report.json"), "runs/2026.01.05.report.json");
  EXPECT_EQ(derived_output_path("results", ".md"), "results.md");
  EXPECT_EQ(derived_output_path("r.json", ".report.json"), "r.report.json");
  EXPECT_EQ(derived_output_path("v1.2/r", ".md"), "v1.2/r.md") << "a dot in a folder's name is no extension";
  EXPECT_EQ(derived_output_path("v1.2/r.json", ".md"), "v1.2/r.md");
  EXPECT_EQ(derived_output_path(".json", ".md"), ".json.md") << "a hidden file's whole name is its stem";
  EXPECT_EQ(derived_output_path("r.tar.gz", ".md"), "r.tar.gz.md");
  EXPECT_EQ(output_stem("a/b.c.json"), "a/b.c");
  EXPECT_EQ(output_stem("a/b.c"), "a/b.c");

  auto t = resolve_outputs("md,html,csv", "rep_de_DE.UTF-8", {"md", "html", "csv"});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].path, "rep_de_DE.UTF-8.md");
  EXPECT_EQ(t[1].path, "rep_de_DE.UTF-8.html");
  EXPECT_EQ(t[2].path, "rep_de_DE.UTF-8.csv");
  t = resolve_outputs("md,junit,openmetrics", "out/x.txt", {"md", "junit", "openmetrics"});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].path, "out/x.md");
  EXPECT_EQ(t[1].path, "out/x.xml");
  EXPECT_EQ(t[2].path, "out/x.prom");
  t = resolve_outputs("md", "p.v1.2", {"md"});
  EXPECT_EQ(t[0].path, "p.v1.2") << "one format goes to the path itself";
}

TEST(ReportPrices, AssignmentsAndFiles) {
  PriceList p;
  p.add_assignment("H100=2.5");
  p.add_assignment("H100 80GB HBM3=3");
  EXPECT_EQ(p.find("NVIDIA H100 80GB HBM3"), 3.0);  // the longest match wins
  EXPECT_EQ(p.find("nvidia h100 pcie"), 2.5);       // case-insensitive
  EXPECT_FALSE(p.find("NVIDIA A100").has_value());
  EXPECT_THROW(p.add_assignment("H100"), gpubench::UsageError);
  EXPECT_THROW(p.add_assignment("H100=free"), gpubench::UsageError);
  EXPECT_THROW(p.add_assignment("H100=-1"), gpubench::UsageError);
  const PriceList example = PriceList::from_file(fs::path(GPUBENCH_FIXTURES_DIR).parent_path().parent_path() /
                                                 "data" / "prices.example.json");
  EXPECT_FALSE(example.prices.empty());
  EXPECT_THROW(PriceList::from_file(kFixtures / "machine_a.json"), gpubench::UsageError);
}

TEST(ReportCases, HeadlineMetricAndIdentity) {
  ResultEntry e;
  e.suite = "train";
  e.metrics = {{"tflops", 10.0}, {"tokens_per_s", 5000.0}};
  EXPECT_EQ(entry_perf(e)->metric, "tokens_per_s");
  e.metrics["primary"] = "tflops";
  EXPECT_EQ(entry_perf(e)->metric, "tflops");
  e.metrics = nlohmann::json::object();
  e.real_time_s = 0.5;
  EXPECT_EQ(entry_perf(e)->metric, "runs_per_s");
  EXPECT_DOUBLE_EQ(entry_perf(e)->value, 2.0);
  // The device axis and key order do not change a case's identity.
  ResultEntry a, b;
  a.suite = b.suite = "s";
  a.axes = {{"n", 1}, {"dtype", "bf16"}, {"device", "cuda:0"}};
  b.axes = {{"dtype", "bf16"}, {"n", 1}};
  EXPECT_EQ(case_identity(a), case_identity(b));
  b.axes["n"] = 2;
  EXPECT_NE(case_identity(a), case_identity(b));
}

}  // namespace

namespace {

// A dataload pipeline entry as the suite writes it: the stall share under details.
nlohmann::json pipeline_entry(int workers, double stall_share) {
  const double step_s = 0.01;
  return {{"name", "dataload/stage=pipeline/workers=" + std::to_string(workers) + "/cpu"},
          {"run_name", "dataload/stage=pipeline/workers=" + std::to_string(workers) + "/cpu"},
          {"run_type", "iteration"}, {"repetitions", 1}, {"repetition_index", 0}, {"iterations", 10},
          {"real_time", step_s * 1e3}, {"cpu_time", step_s * 1e3}, {"time_unit", "ms"},
          {"gpubench",
           {{"suite", "dataload"}, {"device", "cpu"}, {"device_name", "test CPU"}, {"status", "ok"},
            {"axes", {{"stage", "pipeline"}, {"workers", workers}}},
            {"metrics", {{"items", 8}, {"items_unit", "samples"}, {"items_per_s", 800}, {"samples_per_s", 800}}},
            {"details", {{"data_stall_share", stall_share}}},
            {"measurement", {{"samples", 5}, {"mean_s", step_s}, {"median_s", step_s}, {"noise_pct", 1.0}, {"noisy", false}}}}}};
}

}  // namespace

// The stall finding reads the dataload suite's details.data_stall_share (as a %).
TEST(Report, DataStallFindingReadsTheDataloadDetails) {
  nlohmann::json doc = {{"context", {{"host_name", "loader-test"}, {"gpubench", {{"schema_version", 1}}}}},
                        {"benchmarks", {pipeline_entry(1, 0.40), pipeline_entry(2, 0.02)}}};
  const ResultsFile f = read_results_text(doc.dump(), "synthetic-dataload.json");
  const Report r = build_report({f}, SpecSheet::builtin(), {});
  const std::string md = to_markdown(r.doc);
  ASSERT_TRUE(contains(md, "Data stall and CPU cores per GPU")) << md;
  const std::string row = line_with(md, "| dataload stage=pipeline |");
  EXPECT_TRUE(contains(row, "| 2 |")) << row;  // 2 workers keep the stall at or below 5%
}
