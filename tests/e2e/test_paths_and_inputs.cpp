// Issue 26, hostile pass round 2, end to end: outputs that clash with inputs, other outputs or a
// live gpubench's lock (one mechanism: check_path_clashes in bench/core/paths.hpp, called by
// every command), and inputs that are not regular files (one reader: reports/input_file.hpp).
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

struct PathsAndInputs : CliTest {
  fs::path results;  // a small real results file
  void SetUp() override {
    results = dir / "in.json";
    const Output o = gpubench(fmt::format("run --device cpu --suite memory -a test=triad -a size=1M -q --out {}", results.string()));
    ASSERT_EQ(o.code, 0) << o.err;
  }
  std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }
};

// The CLI contract, then one example per kind of clash and per command: exit 2, one line naming
// the clash, and nothing written (the input unchanged, no output created).
TEST_F(PathsAndInputs, AnOutputThatIsAnInputOrAnotherOutputIsRefusedAndNothingIsWritten) {
  const std::string before = slurp(results);
  const std::string in = results.string();
  {
    const Output o = gpubench(fmt::format("report {} --format md,json --out {}", in, (dir / "in.md").string()));
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_EQ(lines(o.err), 1u) << o.err;
    EXPECT_NE(o.err.find("is also an input"), std::string::npos) << o.err;
    EXPECT_EQ(slurp(results), before);
    EXPECT_FALSE(fs::exists(dir / "in.md"));
  }
  fs::copy_file(results, dir / "new.json");
  fs::create_symlink(results, dir / "link.json");
  fs::create_directories(dir / "H");
  fs::copy_file(results, dir / "H" / "a.json");
  const std::string sheet = (dir / "sheet.json").string();
  fs::copy_file(fs::path(GPUBENCH_FIXTURES_DIR) / ".." / ".." / "data" / "gpus.json", sheet);
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {fmt::format("compare {} {}/new.json --junit {}/new.json", in, dir.string(), dir.string()), "is also an input"},
      {fmt::format("report {}/link.json --format json --out {}", dir.string(), in), "is also an input"},  // through a symlink
      {fmt::format("report {} --out {}/./sub/../in.json", in, dir.string()), "is also an input"},  // through ..
      {fmt::format("report {} --spec-sheet {} --format json --out {}", in, sheet, sheet), "is also an input"},
      {fmt::format("history {}/H --out {}/H/h.json", dir.string(), dir.string()), "inside an input folder"},
      {fmt::format("scaling {} --out {}", in, in), "is also an input"},
      {fmt::format("compare {} {}/new.json --format md --out {}/c.xml --junit {}/c.xml", in, dir.string(), dir.string(),
                   dir.string()),
       "each output needs its own path"},
      {fmt::format("run --device cpu --suite memory -a test=triad -a size=1M --out {}/r.md --report md", dir.string()),
       "each output needs its own path"},
      {fmt::format("run --device cpu --suite memory -a test=triad -a size=1M --spec-sheet {} --out {}", sheet, sheet),
       "is also an input"},
      {fmt::format("tune dataload --device cpu --consumer-from {} --out {}", in, in), "is also an input"},
      {fmt::format("soak --device cpu --duration 1s --spec-sheet {} --out {}", sheet, sheet), "is also an input"},
  };
  for (const Case& c : cases) {
    const Output o = gpubench(c.args);
    EXPECT_EQ(o.code, 2) << c.args << ": " << o.err;
    EXPECT_EQ(lines(o.err), 1u) << c.args << ": " << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << c.args << ": " << o.err;
  }
  EXPECT_EQ(slurp(results), before);
  EXPECT_EQ(slurp(dir / "new.json"), before);
  EXPECT_FALSE(fs::exists(dir / "H" / "h.json"));
  EXPECT_FALSE(fs::exists(dir / "r.md"));
  EXPECT_FALSE(fs::exists(dir / "c.xml"));
  // Several formats without a clash still work; md,md is written once.
  const Output ok = gpubench(fmt::format("run --device cpu --suite memory -a test=triad -a size=1M -q --out {}/r.json "
                                         "--report md,md",
                                         dir.string()));
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(dir / "r.md"));
}

// A file another gpubench holds the lock on (a live soak's results) is not an output for anyone.
TEST_F(PathsAndInputs, AFileALiveSoakHoldsIsNotOverwritten) {
  const fs::path live = dir / "L.json";
  const Output bg = sh(fmt::format("timeout -s INT 60 {} soak --device cpu --duration 30s -q --out {} "
                                   ">/dev/null 2>&1 & echo $!",
                                   GPUBENCH_BINARY, live.string()));
  const pid_t pid = static_cast<pid_t>(std::stol(bg.out));
  for (int i = 0; i < 300 && !fs::exists(fs::path(live.string() + ".lock")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(fs::path(live.string() + ".lock")));
  const Output o = gpubench(fmt::format("report {} --format json --out {}", results.string(), live.string()));
  ::kill(pid, SIGINT);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("another gpubench"), std::string::npos) << o.err;
  for (int i = 0; i < 300 && fs::exists(fs::path(live.string() + ".lock")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto doc = nlohmann::json::parse(slurp(live));
  EXPECT_TRUE(doc["gpubench"].contains("soak")) << "the soak's file, not the report";
}

// /dev/zero behind a symlink, a FIFO with no writer, a folder: refused at once with one line, by
// every option that reads a file.
TEST_F(PathsAndInputs, InputsThatAreNotRegularFilesAreRefusedAtOnce) {
  fs::create_symlink("/dev/zero", dir / "z.json");
  ASSERT_EQ(::mkfifo((dir / "f.json").c_str(), 0600), 0);
  const std::string in = results.string();
  for (const std::string& bad : {(dir / "z.json").string(), (dir / "f.json").string(), dir.string()}) {
    for (const std::string& args :
         {fmt::format("report {}", bad), fmt::format("compare {} {}", in, bad), fmt::format("scaling {}", bad),
          fmt::format("history {} {}", in, bad), fmt::format("report {} --prices {}", in, bad),
          fmt::format("report {} --spec-sheet {}", in, bad),
          fmt::format("tune dataload --device cpu --consumer-from {} --budget 30", bad)}) {
      if (bad == dir.string() && args.rfind("history", 0) == 0) continue;  // a folder is history's documented input
      const auto t0 = std::chrono::steady_clock::now();
      const Output o = sh(fmt::format("timeout 10 {} {}", GPUBENCH_BINARY, args));
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      EXPECT_EQ(o.code, 2) << args << ": " << o.err;
      EXPECT_EQ(lines(o.err), 1u) << args << ": " << o.err;
      EXPECT_LT(s, 3) << args;
    }
  }
}

// The soak classes: a closed pipe, a second signal right after the first, a signal before the
// first timed batch, a file whose soak was killed. Every end leaves a valid file, every sample,
// an interrupted verdict that never passes without a timed sample, and no lock.
TEST_F(PathsAndInputs, ASoakEndedByAClosedPipeKeepsItsSamplesAndLeavesNoLock) {
  const fs::path p = dir / "p.json";
  // The CLI contract, as written.
  const Output o = sh(fmt::format("{} soak --device cpu --duration 20s --out {} 2>&1 | head -1", GPUBENCH_BINARY, p.string()));
  EXPECT_EQ(o.code, 0);
  // head exits after the first line; gpubench notices at its next line and ends within a batch.
  for (int i = 0; i < 200 && fs::exists(fs::path(p.string() + ".lock")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(fs::exists(fs::path(p.string() + ".lock")));
  const auto doc = nlohmann::json::parse(slurp(p));
  const auto& soak = doc["gpubench"]["soak"];
  EXPECT_EQ(soak["interrupted"]["signal"], SIGPIPE);
  EXPECT_EQ(soak["verdict"]["interrupted"], true);
  EXPECT_GE(soak["series"].size(), 1u);
  EXPECT_GT(soak["series"][0]["busy_s"].get<double>(), 0);  // written, as results-format.md says
}

TEST_F(PathsAndInputs, ASecondSignalOrAnEarlyOneStillEndsWithAVerdictAndNoLock) {
  for (const char* second : {"INT", "TERM", ""}) {
    for (const double first_after_s : {0.3, 1.5}) {  // (before 0.1 s the process may still be loading)
      const fs::path f = dir / "S.json";
      fs::remove(f);
      const std::string kill2 = *second ? fmt::format("sleep 0.02; kill -{} $pid;", second) : "";
      const Output o = sh(fmt::format("timeout -s INT 120 {} soak --device cpu --duration 30s -q --out {} & pid=$!; "
                                      "sleep {}; kill -INT $pid; {} wait $pid; echo \"status $?\"",
                                      GPUBENCH_BINARY, f.string(), first_after_s, kill2));
      const std::string what = fmt::format("second {} after {} s", second, first_after_s);
      EXPECT_NE(o.out.find("status 130"), std::string::npos) << what << ": " << o.out << o.err;
      EXPECT_FALSE(fs::exists(fs::path(f.string() + ".lock"))) << what;
      const auto doc = nlohmann::json::parse(slurp(f));
      const auto& v = doc["gpubench"]["soak"]["verdict"];
      ASSERT_TRUE(v.is_object()) << what;
      EXPECT_EQ(v["interrupted"], true) << what;
      bool timed = false;
      for (const auto& s : doc["gpubench"]["soak"]["series"]) timed = timed || s["runs"].get<long>() > 0;
      if (!timed) {
        EXPECT_EQ(v["passed"], false) << what << ": passed without a timed sample";
      }
    }
  }
}

TEST_F(PathsAndInputs, AKilledSoaksFileStillReportsWhatItMeasured) {
  const fs::path f = dir / "K.json";
  const Output o = sh(fmt::format("timeout -s KILL 5 {} soak --device cpu --duration 60s --sample-interval 500ms -q --out {}",
                                  GPUBENCH_BINARY, f.string()));
  EXPECT_EQ(o.code, 137);
  const Output r = gpubench(fmt::format("report {} --format csv", f.string()));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("No results"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm"), std::string::npos) << r.out;
}

// Budgets and the environment: a tune budget too small to measure anything, TMPDIR missing, a
// full disk under datagen, a stopped tune's generated dataset, an unfinished datagen folder.
TEST_F(PathsAndInputs, ABudgetTooSmallToMeasureIsRefusedUpFront) {
  const auto t0 = std::chrono::steady_clock::now();
  const Output o = gpubench(fmt::format("tune dataload --device cpu --budget 2 --out {}", (dir / "T.json").string()));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(lines(o.err), 1u) << o.err;
  EXPECT_NE(o.err.find("--budget 2: too small"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir / "T.json"));
}

TEST_F(PathsAndInputs, AMissingOrUnwritableTmpdirIsNamed) {
  for (const std::string& tmp : {(dir / "nope").string(), results.string()}) {
    const Output o = gpubench(fmt::format("run --device cpu --suite memory -a test=triad -a size=1M --isolate -q --out {}",
                                          (dir / "I.json").string()),
                              "TMPDIR=" + tmp);
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_EQ(lines(o.err), 1u) << o.err;
    EXPECT_NE(o.err.find("TMPDIR '" + tmp + "'"), std::string::npos) << o.err;
  }
}

TEST_F(PathsAndInputs, AFullDiskUnderDatagenExitsOneAndRemovesWhatItWrote) {
  // A file size limit stands in for a full disk (write(2) fails with EFBIG once SIGXFSZ is ignored).
  const fs::path d = dir / "D";
  const Output o = sh(fmt::format("trap '' XFSZ; ulimit -f 200; {} datagen --out {} --count 300", GPUBENCH_BINARY, d.string()));
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(lines(o.err), 1u) << o.err;
  EXPECT_NE(o.err.find("removed what it wrote"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(d));
}

TEST_F(PathsAndInputs, AStoppedTuneLeavesNoGeneratedDatasetAndAnUnfinishedOneIsSaid) {
  const fs::path tmp = dir / "tmp";
  fs::create_directories(tmp);
  const Output o = gpubench(fmt::format("tune dataload --device cpu --budget 60 -q --out {}", (dir / "T.json").string()),
                            fmt::format("TMPDIR={} timeout -s TERM 8", tmp.string()));
  EXPECT_EQ(o.code, 124) << o.err;  // stopped mid-search
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp)) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.front();
  // A datagen folder without its manifest (a generation that did not finish) is used, but said.
  const fs::path d = dir / "D2";
  ASSERT_EQ(gpubench(fmt::format("datagen --out {} --count 20", d.string())).code, 0);
  fs::remove(d / "manifest.json");
  const Output r = gpubench(fmt::format("run --device cpu --suite dataload --preset quick -a stage=decode -a workers=1 -q "
                                        "--out {}",
                                        (dir / "R.json").string()),
                            "GPUBENCH_DATASET=" + d.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("no manifest.json"), std::string::npos) << r.err;
}

// A path that is not UTF-8 (the working folder here) reaches JSON output as U+FFFD, never as an
// exception instead of the JSON.
TEST_F(PathsAndInputs, DoctorJsonFromAFolderWhoseNameIsNotUtf8IsStillJson) {
  const fs::path odd = dir / "bad\xff";
  fs::create_directories(odd);
  const Output o = sh(fmt::format("cd '{}' && {} doctor --json", odd.string(), GPUBENCH_BINARY));
  EXPECT_EQ(o.err.find("exception"), std::string::npos) << o.err;
  EXPECT_TRUE(nlohmann::json::accept(o.out)) << o.out;
}

// A sweep phase of one sample (duration = sample interval) still has its throughput and unit
// (the phase's last half held no whole sample: it read 0 with no unit).
TEST_F(PathsAndInputs, ASweepPhaseOfOneSampleStillHasItsThroughput) {
  const fs::path f = dir / "SW.json";
  const Output o = gpubench(fmt::format("soak --device cpu --power-limits 100%,90% --duration 1s --sample-interval 1s -q "
                                        "--out {}",
                                        f.string()));
  ASSERT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(f));
  const auto& points = doc["gpubench"]["soak"]["sweep"]["points"];
  ASSERT_GE(points.size(), 1u) << doc["gpubench"]["soak"].dump();
  for (const auto& p : points) {
    EXPECT_GT(p["throughput"].get<double>(), 0) << p.dump();
    EXPECT_EQ(p["unit"], "TFLOP/s") << p.dump();
  }
}

// A figure beyond what a double holds says so (it was shown as "-" with no note).
TEST_F(PathsAndInputs, AnOverflowingCostSaysOverflow) {
  const std::string a = (fs::path(GPUBENCH_FIXTURES_DIR) / "reports" / "machine_a.json").string();
  const Output o = gpubench(fmt::format("report {} --train-tokens 1e18 --price H100=1e300", a));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("| overflow |"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("overflow: the workload"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace gpubench::e2e
