// The node card of `gpubench evaluate` results (reports/node_card.hpp) on the synthetic
// fixtures of tests/fixtures/evaluate (make_fixtures.py): the slow GPU named as an outlier by
// UUID, % of published where data/reference.json has a row, a dropped item's reason instead of a
// number, the cost arithmetic, cards side by side, no card for other files, and the card first.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "reports/document.hpp"
#include "reports/node_card.hpp"
#include "reports/report.hpp"
#include "reports/results_reader.hpp"
#include "reports/spec_sheet.hpp"

namespace gpubench::reports {
namespace {

const std::filesystem::path kEvaluate = std::filesystem::path(GPUBENCH_FIXTURES_DIR) / "evaluate";
const std::filesystem::path kReports = std::filesystem::path(GPUBENCH_FIXTURES_DIR) / "reports";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const CardFigure* figure(const NodeCard& card, const std::string& row) {
  auto it = std::find_if(card.figures.begin(), card.figures.end(), [&](const CardFigure& f) { return f.row == row; });
  return it == card.figures.end() ? nullptr : &*it;
}

NodeCard card_of(const std::string& file, const ReportOptions& options = {}) {
  return build_node_card(read_results(kEvaluate / file), SpecSheet::builtin(), options);
}

TEST(NodeCard, NamesTheSlowGpuAsOutlierWithItsUuid) {
  const NodeCard card = card_of("h100-node-slow-gpu.json");
  EXPECT_EQ(card.title, "Node card: 8 x NVIDIA H100 80GB HBM3 (evaluate, budget 30m, 27.5 min measured)");
  const CardFigure* slowest = figure(card, "gemm-bf16: slowest GPU");
  ASSERT_NE(slowest, nullptr);
  // cuda:3 ran 12% below its peers (760 x 0.88 = 668.8 TFLOP/s, less its 0.2% jitter).
  ASSERT_TRUE(slowest->value.has_value());
  EXPECT_NEAR(*slowest->value, 667.5, 1.0);
  EXPECT_TRUE(contains(slowest->verdict, "outlier: h100-node-07 GPU 3 (UUID GPU-006866a0-0003-4000-8000-0000005a1703)"))
      << slowest->verdict;
  // The median over the 8 GPUs is not dragged down by it, and is normal.
  const CardFigure* median = figure(card, "gemm-bf16: best case (median over GPUs)");
  ASSERT_NE(median, nullptr);
  EXPECT_NEAR(*median->value, 760, 2);
  EXPECT_EQ(median->verdict, "normal");
  ASSERT_FALSE(card.outliers.empty());
  EXPECT_TRUE(contains(card.outliers.front(), "GPU-006866a0-0003-4000-8000-0000005a1703"));
  // The fp8 GEMM and the triad of every GPU agree: no outlier there.
  EXPECT_EQ(figure(card, "gemm-fp8: slowest GPU")->verdict, "normal");
  EXPECT_EQ(figure(card, "hbm-triad: slowest GPU")->verdict, "normal");
  EXPECT_EQ(card.soak, "passed");
  EXPECT_EQ(card.doctor_warnings, 1);
}

TEST(NodeCard, H200FiguresShowPercentOfPublishedWhereAReferenceRowExists) {
  const NodeCard card = card_of("h200-node.json");
  EXPECT_EQ(card.gpus, 8);
  // data/reference.json: h200-sxm/hbm-triad 4150 GB/s, cublaslt-fp8-8192 1300.6 TFLOP/s,
  // allreduce-8gpu-8g-nvls 479.98 GB/s, nvlink-p2p-uni 396.4 GB/s.
  const CardFigure* triad = figure(card, "hbm-triad: best case (median over GPUs)");
  ASSERT_NE(triad, nullptr);
  ASSERT_TRUE(triad->pct_published.has_value());
  EXPECT_NEAR(*triad->pct_published, 100 * 4100.0 / 4150, 0.3);
  EXPECT_TRUE(contains(triad->published, "4150 GB/s")) << triad->published;
  EXPECT_TRUE(triad->pct_peak.has_value());  // the datasheet's memory bandwidth
  const CardFigure* fp8 = figure(card, "gemm-fp8: best case (median over GPUs)");
  ASSERT_TRUE(fp8 && fp8->pct_published);
  EXPECT_NEAR(*fp8->pct_published, 100 * 1290 * 1.04 / 1300.6, 0.5);
  const CardFigure* ar = figure(card, "all-reduce: all_reduce busbw");
  ASSERT_TRUE(ar && ar->pct_published);
  EXPECT_EQ(ar->metric, "busbw_gbps");
  EXPECT_NEAR(*ar->value, 468 * 1.02, 0.1);  // the largest size (8 GiB), not the smaller ones
  EXPECT_NEAR(*ar->pct_published, 100 * 468 * 1.02 / 479.98, 0.1);
  const CardFigure* peer = figure(card, "peer-copies: best case (median over GPUs)");
  ASSERT_TRUE(peer && peer->pct_published);
  EXPECT_TRUE(contains(peer->published, "396.4 GB/s")) << peer->published;
  // H200 has no published bf16 MAMF: no percentage, not a made-up one.
  const CardFigure* bf16 = figure(card, "gemm-bf16: best case (median over GPUs)");
  ASSERT_NE(bf16, nullptr);
  EXPECT_FALSE(bf16->pct_published.has_value());
  EXPECT_EQ(bf16->verdict, "normal");
  // Training: tokens/s with its MFU (the entry's pct_of_peak).
  const CardFigure* train = figure(card, "train-bf16: best case (median over GPUs)");
  ASSERT_TRUE(train && train->pct_peak);
  EXPECT_EQ(train->peak_label, "MFU");
  EXPECT_NEAR(*train->pct_peak, 41.0, 1e-9);
  EXPECT_TRUE(card.outliers.empty());
}

TEST(NodeCard, ADroppedItemShowsItsReasonNotANumber) {
  const NodeCard card = card_of("h100-node-slow-gpu.json");
  const CardFigure* coll = figure(card, "collectives: busbw");
  ASSERT_NE(coll, nullptr);
  EXPECT_FALSE(coll->value.has_value());
  EXPECT_EQ(coll->verdict, "dropped: priority 12: over the 600 s budget");
  const CardFigure* fp8 = figure(card, "train-fp8: best case (median over GPUs)");
  ASSERT_NE(fp8, nullptr);
  EXPECT_FALSE(fp8->value.has_value());
  EXPECT_EQ(fp8->verdict, "stopped: budget spent");
  ASSERT_EQ(card.dropped.size(), 1u);
  EXPECT_EQ(card.dropped[0].item, "collectives");
  EXPECT_TRUE(card.budget_spent);
  // The CPU run: a skipped part and a dropped depth item, each with its reason.
  const NodeCard cpu = card_of("cpu.json");
  EXPECT_EQ(cpu.title, "Node card: AMD EPYC 9654 96-Core Processor (CPU; evaluate, budget 10m, 8.8 min measured)");
  EXPECT_EQ(figure(cpu, "attention-decode: best case (median over GPUs)")->verdict,
            "dropped: priority 8: over the 600 s budget");
  EXPECT_EQ(figure(cpu, "gemm-fp8: best case (median over GPUs)")->verdict, "skipped: fp8 needs a GPU");
  EXPECT_EQ(cpu.soak, "skipped: soak needs a GPU load");
  // The check's doctor item ran: its findings are the health list, never a "did not run" figure.
  for (const NodeCard* c : {&card, &cpu}) {
    for (const CardFigure& f : c->figures) EXPECT_NE(f.part, "check") << f.label << ": " << f.verdict;
  }
  EXPECT_EQ(cpu.doctor_errors, 0);
  const std::string md = to_markdown(build_report({read_results(kEvaluate / "cpu.json")}, SpecSheet::builtin(), {}).doc);
  EXPECT_TRUE(contains(md, "| depth | attention decode (paged KV) | dropped: priority 8: over the 600 s budget |")) << md;
}

TEST(NodeCard, CostPerMillionTokensByHand) {
  ReportOptions options;
  options.prices.add_assignment("H100=2.50");
  const NodeCard card = card_of("h100-node-slow-gpu.json", options);
  ASSERT_TRUE(card.usd_per_gpu_hour.has_value());
  // Serving: the rate=8 case meets the SLO (TTFT <= 500 ms, TPOT <= 50 ms) for 30 of its 32
  // requests over 4.0 s = 7.5 req/s of goodput, better than rate=32's 8 / 2.0 s = 4 req/s, so
  // its 3000 output tokens/s (tp=1: one GPU) price the tokens:
  //   2.50 USD/h / (3000 tokens/s x 3600 s/h) x 1e6 = 2.50 / 10.8e6 x 1e6 = 0.23148 USD.
  EXPECT_NEAR(*figure(card, "infer-serve: goodput at the SLO")->value, 7.5, 1e-9);
  ASSERT_TRUE(card.serve_tokens_per_s_per_gpu.has_value());
  EXPECT_DOUBLE_EQ(*card.serve_tokens_per_s_per_gpu, 3000);
  ASSERT_TRUE(card.usd_per_m_output_tokens.has_value());
  EXPECT_NEAR(*card.usd_per_m_output_tokens, 0.23148, 1e-5);
  // Training: 400,000 tokens/s of the bf16 step:
  //   2.50 / (400000 x 3600) x 1e6 = 2.50 / 1.44e9 x 1e6 = 0.0017361 USD per million tokens.
  ASSERT_TRUE(card.usd_per_m_train_tokens.has_value());
  EXPECT_NEAR(*card.usd_per_m_train_tokens, 0.0017361, 1e-7);
  // Without a price: a line saying how to add one.
  const std::string md = to_markdown(build_report({read_results(kEvaluate / "h100-node-slow-gpu.json")},
                                                  SpecSheet::builtin(), {}).doc);
  EXPECT_TRUE(contains(md, "--price 'H100=2.50'")) << md;
  ReportOptions priced;
  priced.prices.add_assignment("H100=2.50");
  const Report r = build_report({read_results(kEvaluate / "h100-node-slow-gpu.json")}, SpecSheet::builtin(), priced);
  EXPECT_TRUE(contains(to_markdown(r.doc), "per million output tokens at the SLO: 0.231 USD"));
  EXPECT_TRUE(contains(to_markdown(r.doc), "x 3600) x 1e6"));
  ASSERT_TRUE(r.summary.contains("node_cards"));
  EXPECT_NEAR(r.summary["node_cards"][0]["cost"]["usd_per_million_output_tokens"].get<double>(), 0.23148, 1e-5);
}

TEST(NodeCard, TwoFilesGiveCardsSideBySide) {
  const Report r = build_report({read_results(kEvaluate / "h100-node-slow-gpu.json"), read_results(kEvaluate / "h200-node.json")},
                                SpecSheet::builtin(), {});
  ASSERT_FALSE(r.doc.blocks.empty());
  EXPECT_EQ(r.doc.blocks[0].kind, Block::Kind::heading);
  EXPECT_EQ(r.doc.blocks[0].text, "Node cards: 2 evaluations side by side");
  // The figures table: part, figure, then one column per file.
  auto table = std::find_if(r.doc.blocks.begin(), r.doc.blocks.end(), [](const Block& b) { return b.kind == Block::Kind::table; });
  ASSERT_NE(table, r.doc.blocks.end());
  ASSERT_EQ(table->table.columns.size(), 4u);
  EXPECT_EQ(table->table.columns[2], "#1 NVIDIA H100 80GB HBM3");
  EXPECT_EQ(table->table.columns[3], "#2 NVIDIA H200");
  auto row = std::find_if(table->table.rows.begin(), table->table.rows.end(),
                          [](const auto& r) { return r[1] == "collectives: busbw"; });
  ASSERT_NE(row, table->table.rows.end());
  EXPECT_EQ((*row)[2], "dropped: priority 12: over the 600 s budget");
  EXPECT_EQ((*row)[3], "not in this evaluation");  // the H200 ran its collectives: rows per op instead
  ASSERT_EQ(r.summary["node_cards"].size(), 2u);
  EXPECT_EQ(r.summary["node_cards"][1]["model"], "NVIDIA H200");
  EXPECT_GT(r.summary["node_cards"][1]["figures"].size(), 10u);
}

TEST(NodeCard, FileWithoutEvaluateContextGetsNoCard) {
  const ResultsFile plain = read_results(kReports / "one_run_cpu.json");
  EXPECT_FALSE(is_evaluate_file(plain));
  const Report r = build_report({plain}, SpecSheet::builtin(), {});
  EXPECT_FALSE(contains(to_markdown(r.doc), "Node card"));
  EXPECT_FALSE(r.summary.contains("node_cards"));
  Document doc;
  node_card_section(doc, {plain}, SpecSheet::builtin(), {}, nullptr);
  EXPECT_TRUE(doc.blocks.empty());
}

TEST(NodeCard, IsTheReportsFirstBlock) {
  const Report r = build_report({read_results(kEvaluate / "h100-node-slow-gpu.json")}, SpecSheet::builtin(), {});
  ASSERT_FALSE(r.doc.blocks.empty());
  EXPECT_EQ(r.doc.blocks[0].kind, Block::Kind::heading);
  EXPECT_EQ(r.doc.blocks[0].text, "Node card: 8 x NVIDIA H100 80GB HBM3 (evaluate, budget 30m, 27.5 min measured)");
  const std::string md = to_markdown(r.doc);
  // Before the report's notes and warnings, and the run lead after it.
  const auto card = md.find("## Node card"), notes = md.find("Each case is joined"), lead = md.find("## What the run measured");
  ASSERT_NE(notes, std::string::npos);
  ASSERT_NE(lead, std::string::npos);
  EXPECT_LT(card, notes);
  EXPECT_LT(notes, lead);
  EXPECT_EQ(md.find("## "), card);
}

}  // namespace
}  // namespace gpubench::reports
