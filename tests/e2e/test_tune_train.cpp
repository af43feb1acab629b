// `gpubench tune train` end to end on the CPU: a short search of the mlp, its results file
// (every configuration an entry, gpubench.tuning), the report's Tuning report section in
// Markdown and in headless Chromium, and the usage errors (exit 2, one line).
#include <nlohmann/json.hpp>

#include <set>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

using nlohmann::json;

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

struct TuneTrain : CliTest {};

TEST_F(TuneTrain, CpuMlpSearchRecommendsAMeasuredConfiguration) {
  const fs::path out = dir / "T.json";
  // Global batch 16: micro-batches 1, 2, 4, 8, 16 (accumulation 16 .. 1); an 8 s budget.
  Output r = gpubench(fmt::format("tune train --device cpu --model mlp --global-batch 16 --budget 8 --seed 3 --out {}",
                                  out.string()));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "Tuning report")) << r.out;
  EXPECT_TRUE(contains(r.out, "speed-up vs default")) << r.out;
  const json doc = json::parse(slurp(out));
  const json& t = doc["gpubench"]["tuning"];
  EXPECT_EQ(t["target"], "train");
  EXPECT_EQ(t["objective"], "samples_per_s");
  EXPECT_EQ(t["knobs"], json({"precision", "micro_batch", "accum", "recompute"}));
  EXPECT_EQ(t["budget_s"], 8.0);
  EXPECT_EQ(t["seed"], 3);
  EXPECT_EQ(t["fixed"]["global_batch"], 16);
  EXPECT_EQ(t["configurations"]["candidates"], 5);
  const json& rec = t["recommended"];
  const json& def = t["default"];
  ASSERT_TRUE(rec.is_object());
  ASSERT_TRUE(def.is_object());
  EXPECT_EQ(rec["precision"], "fp32");
  EXPECT_EQ(rec["recompute"], "none");
  EXPECT_EQ(rec["micro_batch"].get<int>() * rec["accum"].get<int>(), 16);
  EXPECT_GT(rec["samples_per_s"].get<double>(), 0);
  EXPECT_GE(rec["noise_pct"].get<double>(), 0);
  EXPECT_GT(rec["memory_bytes"].get<double>(), 0);
  EXPECT_TRUE(contains(rec["command"].get<std::string>(), "gpubench run --suite train")) << rec["command"];
  // The default is the quick preset's micro-batch 4 (accumulation 4 for 16).
  EXPECT_EQ(def["micro_batch"], 4);
  EXPECT_EQ(def["accum"], 4);
  EXPECT_GT(def["samples_per_s"].get<double>(), 0);
  ASSERT_TRUE(t["speedup_vs_default"].is_number());
  EXPECT_NEAR(t["speedup_vs_default"].get<double>(),
              rec["samples_per_s"].get<double>() / def["samples_per_s"].get<double>(), 1e-9);
  // The search kept to its budget: within it, or over by at most its first measurement (which
  // always runs); the final confirmation came after it.
  double first_cost = 0, longest = 0;
  for (const json& e : t["search"]) {
    if (e["stage"] == "final") continue;
    if (first_cost == 0) first_cost = e["cost_s"].get<double>();
    longest = std::max(longest, e["cost_s"].get<double>());
  }
  EXPECT_LE(t["search_s"].get<double>(), 8.0 + longest);
  EXPECT_GE(t["wall_s"].get<double>(), t["search_s"].get<double>() + t["final_s"].get<double>() - 1e-6);
  // Every configuration tried is one entry; names are unique (compare pairs them); the final ones
  // say their role; every ok entry was verified.
  std::set<std::string> names;
  bool found_rec = false, found_def = false;
  for (const json& b : doc["benchmarks"]) {
    EXPECT_TRUE(names.insert(b["name"].get<std::string>()).second) << b["name"];
    ASSERT_TRUE(b["gpubench"].contains("tune")) << b["name"];
    if (b["gpubench"]["status"] == "ok") {
      EXPECT_EQ(b["gpubench"]["verification"]["passed"], true);
    }
    const std::string role = b["gpubench"]["tune"].value("role", "");
    if (b["name"] == rec["case"]) {
      found_rec = true;
      EXPECT_EQ(b["gpubench"]["tune"]["stage"], "final");
      EXPECT_EQ(role.rfind("recommended", 0), 0u);
    }
    if (b["name"] == def["case"]) found_def = true;
  }
  EXPECT_TRUE(found_rec);
  EXPECT_TRUE(found_def);
  // The recommended configuration never failed in the search.
  for (const json& e : t["search"]) {
    if (e["micro_batch"] == rec["micro_batch"]) {
      EXPECT_EQ(e["status"], "ok") << e.dump();
    }
  }

  // compare reads it (the same file against itself: nothing regressed).
  Output c = gpubench(fmt::format("compare {} {}", out.string(), out.string()));
  EXPECT_EQ(c.code, 0) << c.out << c.err;

  // The report's Tuning report section, Markdown.
  Output md = gpubench(fmt::format("report {} -f md", out.string()));
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_TRUE(contains(md.out, "## Tuning report")) << md.out;
  EXPECT_TRUE(contains(md.out, "```\ngpubench run --suite train")) << md.out;
  EXPECT_TRUE(contains(md.out, "| recommended |")) << md.out;
  EXPECT_TRUE(contains(md.out, "| default |")) << md.out;
  EXPECT_TRUE(contains(md.out, "Search log")) << md.out;

  // HTML: the configuration block, the evidence table and the frontier chart, in a real browser.
  const fs::path html = dir / "tune.html";
  Output h = gpubench(fmt::format("report {} -f html -o {}", out.string(), html.string()));
  ASSERT_EQ(h.code, 0) << h.err;
  const std::string page = slurp(html);
  EXPECT_TRUE(contains(page, "<pre><code>gpubench run --suite train"));
  EXPECT_EQ(count(page, "<svg class=\"chart scatter\""), 1u);
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; CI installs it)";
  }
  Output dom = sh(fmt::format("timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr "
                              "--v=0 --user-data-dir={} --dump-dom file://{}",
                              (dir / "chromium").string(), html.string()));
  ASSERT_EQ(dom.code, 0) << dom.err;
  EXPECT_FALSE(contains(dom.err, "CONSOLE")) << dom.err;
  EXPECT_EQ(count(dom.out, "<script"), 0u);
  EXPECT_EQ(count(dom.out, "<svg class=\"chart scatter\""), 1u);
  EXPECT_GT(count(dom.out, "<circle"), 2u);  // the searched points and the two final ones
  EXPECT_TRUE(contains(dom.out, "<pre><code>gpubench run --suite train"));
}

// Issue 25 item 8: the file a stopped tune leaves holds what it had decided so far (the search's
// log and its best measurement yet), marked interrupted; a finished tune's is not marked.
TEST_F(TuneTrain, AnInterruptedTuneKeepsWhatItDecidedMarkedInterrupted) {
  const fs::path out = dir / "T.json";
  // A 60 s budget, stopped with SIGINT once the first measurement is logged: mid-search. (Waiting
  // for the log line, not a fixed time: on a loaded 2-core CI runner 4 s was not always enough.)
  const fs::path log = dir / "T.log";
  // (Through `timeout`: a shell without job control starts a background command with SIGINT
  // ignored, which gpubench keeps ignored as nohup asks; timeout handles SIGINT and passes it on.)
  const Output r = sh(fmt::format("timeout --signal=INT 300 {} tune train --device cpu --model mlp --global-batch 16 --budget 60 --seed 3 "
                                  "--out {} 2>{} & pid=$!; "
                                  "for i in $(seq 600); do grep -qF 'tune train: [1]' {} && break; sleep 0.1; done; "
                                  "kill -INT $pid; wait $pid; echo \"status $?\"",
                                  GPUBENCH_BINARY, out.string(), log.string(), log.string()));
  EXPECT_TRUE(contains(r.out, "status 130")) << r.out << slurp(log);  // 128 + SIGINT: still running when stopped
  ASSERT_TRUE(fs::exists(out)) << r.err;
  const json doc = json::parse(slurp(out));
  ASSERT_TRUE(doc["gpubench"].contains("tuning")) << doc.dump().substr(0, 2000);
  const json& t = doc["gpubench"]["tuning"];
  EXPECT_EQ(t["interrupted"], true);
  EXPECT_FALSE(t.contains("recommended"));
  ASSERT_GE(t["search"].size(), 1u);
  ASSERT_TRUE(t.contains("best_so_far")) << t.dump();
  EXPECT_GT(t["best_so_far"]["samples_per_s"].get<double>(), 0);
  EXPECT_GE(doc["benchmarks"].size(), t["search"].size());
  // The finished tune of the test above: no mark.
  const fs::path done = dir / "D.json";
  ASSERT_EQ(gpubench(fmt::format("tune train --device cpu --model mlp --global-batch 16 --budget 4 --seed 3 --out {}",
                                 done.string()))
                .code,
            0);
  const json d = json::parse(slurp(done));
  EXPECT_FALSE(d["gpubench"]["tuning"].contains("interrupted"));
  EXPECT_FALSE(d["gpubench"]["tuning"].contains("best_so_far"));
}

TEST_F(TuneTrain, BadUsageExitsTwoWithOneLine) {
  const std::string out = (dir / "T.json").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--model mlp --budget 0", "--budget"},
      {"--model mlp --budget -5", "--budget"},
      {"--model mlp --budget abc", "--budget 'abc'"},
      {"--model mlp --budget nan", "--budget"},
      {"--model mlp --budget 1e9", "--budget"},
      {"--model resnet50", "--model 'resnet50': unknown model"},
      {"--budget 5", "--model is required"},
      {"--model mlp --global-batch 0", "--global-batch 0"},
      {"--model mlp --axis precision=tf32", "what tune train searches"},
      {"--model mlp --axis layers=2,4", "one value"},
      {"--model mlp --axis colour=red", "not a model-shape axis"},
      {"--model mlp --device tpu", "--device 'tpu'"},
      {"--model mlp --dp zero1", "--dp: a data-parallel mode needs several ranks"},
      {"--model mlp --dp ddp,foo", "--dp 'ddp,foo'"},
      {"--model mlp --axis bucket_mb=5", "tune train searches dp=ddp and bucket_mb"},
      // No micro-batch of this model fits in host memory (estimated before anything runs).
      {"--model mlp --axis hidden=2000000 --axis layers=64", ""},
  };
  for (const auto& [args, message] : cases) {
    const std::string device = contains(args, "--device") ? "" : "--device cpu ";
    Output r = gpubench(fmt::format("tune train {}{} --out {}", device, args, out));
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << args << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, message)) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

}  // namespace
}  // namespace gpubench::e2e
