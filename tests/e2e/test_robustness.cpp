// The robustness suite (issue 19): the real binary driven the way a hostile but realistic user
// would, one test per class of failure the hostile pass found, so a regression in any class
// fails CI. Each class's rule is in docs/promises.md beside the test that checks it.
//
// What the sandbox may forbid (mknod, running as another user, mpirun) is skipped with the
// reason; everything else runs as whoever runs the tests (root in CI containers).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench::e2e {
namespace {

using namespace std::chrono_literals;

// A CPU run of one small GEMM: well under a second.
constexpr const char* kQuick =
    "--device cpu --suite gemm -a m=48 -a dtype=fp32 --min-time 0.02 --warmup 0.005 --min-samples 3";

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

bool valid_results(const fs::path& p) {
  try {
    const auto doc = nlohmann::json::parse(slurp(p));
    return doc.contains("context") && doc.at("benchmarks").is_array();
  } catch (const std::exception&) {
    return false;
  }
}

struct Robustness : CliTest {
  // A script run by bash (the tests need $'..', PIPESTATUS, ulimit).
  Output bash(const std::string& script) {
    const fs::path file = dir / "script.sh";
    std::ofstream(file) << "set -u\nB=" << GPUBENCH_BINARY << "\n" << script << "\n";
    return sh("bash " + file.string());
  }
  // A results file of one ok case, for the readers.
  fs::path small_results(const std::string& name = "small.json") {
    const fs::path p = dir / name;
    const Output o = gpubench(fmt::format("run {} -q -o {}", kQuick, p.string()));
    EXPECT_EQ(o.code, 0) << o.err;
    return p;
  }
  // A usage error: exit 2 and one line on stderr that contains `what`.
  static void expect_usage_error(const Output& o, const std::string& what) {
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_EQ(lines(o.err), 1) << o.err;
    EXPECT_NE(o.err.find(what), std::string::npos) << "expected '" << what << "' in: " << o.err;
  }
};

// ---- 1. Outputs that exist and are not regular files are refused by every output option.

TEST_F(Robustness, OutputsThatAreNotRegularFilesAreRefusedByEveryOption) {
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::vector<fs::path> specials{fifo};
  // A copy of /dev/null (character device 1,3) in the test's folder: needs CAP_MKNOD.
  const fs::path devnull = dir / "null";
  if (::mknod(devnull.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) specials.push_back(devnull);
  else std::cerr << "note: mknod not permitted here; the device-node case is covered by the FIFO only\n";
  const fs::path r = small_results();
  for (const fs::path& p : specials) {
    const std::string s = p.string();
    const std::vector<std::pair<std::string, std::string>> commands{
        {fmt::format("run {} -o {}", kQuick, s), "--out"},
        {fmt::format("run {} -o {}/r.json --benchmark_out={}", kQuick, dir.string(), s), "--benchmark_out"},
        {fmt::format("run {} -o {}/r2.json --trace-dir {}", kQuick, dir.string(), s), "--trace-dir"},
        {fmt::format("report {} --out {}", r.string(), s), "--out"},
        {fmt::format("report {} -o {}", r.string(), s), "--out"},
        {fmt::format("compare {} {} --junit {}", r.string(), r.string(), s), "--junit"},
        {fmt::format("compare {} {} --out {}", r.string(), r.string(), s), "--out"},
        {fmt::format("history {} --out {}", r.string(), s), "--out"},
        {fmt::format("tune gemm --cache {}", s), "--cache"},
        {fmt::format("datagen --out {} --count 1", s), "--out"},
    };
    for (const auto& [args, option] : commands) {
      SCOPED_TRACE(args);
      const Output o = gpubench(args);
      expect_usage_error(o, option);
      struct stat st {};
      ASSERT_EQ(::lstat(p.c_str(), &st), 0);
      EXPECT_FALSE(S_ISREG(st.st_mode)) << p << " was replaced by a regular file";
    }
  }
}

// ---- 2. Sizes are validated at planning time: products included, exit 2 naming the axis.

// Issue 26: `nohup gpubench ... &` must survive the logout. A signal the parent set to be ignored
// stays ignored by every command that installs handlers (run's and soak's alike).
TEST_F(Robustness, ASignalTheParentIgnoredStaysIgnored) {
  const fs::path run = dir / "run.json", soak = dir / "soak.json";
  const Output r = sh(fmt::format(
      "sh -c 'trap \"\" HUP; {0} run --device cpu --suite memory --axis test=triad --axis size=1M --min-time 1 --quiet "
      "--out {1} & p=$!; sleep 0.7; kill -HUP $p; wait $p; echo run=$?; "
      "{0} soak --device cpu --duration 2s --sample-interval 0.5s --quiet --out {2} & p=$!; sleep 0.7; kill -HUP $p; "
      "wait $p; echo soak=$?'",
      GPUBENCH_BINARY, run.string(), soak.string()));
  EXPECT_NE(r.out.find("run=0"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("run=129"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("soak=129"), std::string::npos) << r.out << r.err;
  const auto doc = nlohmann::json::parse(slurp(soak));
  EXPECT_FALSE(doc["gpubench"]["soak"].contains("interrupted")) << doc["gpubench"]["soak"].dump().substr(0, 500);
  // Without the parent's trap, SIGHUP still ends a run the documented way (129).
  const Output h = sh(fmt::format("sh -c '{} run --device cpu --suite memory --axis test=triad --axis size=1M --min-time 2 "
                                  "--quiet --out {} & p=$!; sleep 0.7; kill -HUP $p; wait $p; echo run=$?'",
                                  GPUBENCH_BINARY, (dir / "hup.json").string()));
  EXPECT_NE(h.out.find("run=129"), std::string::npos) << h.out << h.err;
}

TEST_F(Robustness, HugeSizesAreUsageErrorsNamingTheAxis) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--suite gemm -a m=4611686018427387904 -a n=4 -a k=1 -a dtype=fp32", "m"},
      {"--suite gemm -a m=4 -a n=4 -a k=4 -a batch=4611686018427387904 -a dtype=fp32", "batch"},
      {"--suite gemm -a m=4 -a n=4 -a k=4611686018427387904 -a dtype=fp32", "k"},
      {"--suite gemm -a m=4 -a pad=9223372036854775807 -a dtype=fp32", "pad"},
      {"--suite gemm -a m=3037000500 -a dtype=fp32", "m"},  // m*n overflows int64
      {"--suite dataload -a stage=decode -a batch=1099511627776", "batch"},
      {"--suite memory -a size=1125899906842624", "size"},
      {"--suite collectives -a size=1125899906842624", "size"},
  };
  for (const auto& [args, axis] : cases) {
    SCOPED_TRACE(args);
    const fs::path out = dir / "r.json";
    const Output o = gpubench(fmt::format("run --device cpu {} -o {}", args, out.string()));
    expect_usage_error(o, axis);
    EXPECT_FALSE(fs::exists(out)) << "nothing is written on a usage error";
    EXPECT_EQ(gpubench(fmt::format("list --device cpu {}", args)).code, 2);
  }
}

// ---- 4. Write errors on stdout and stderr: never an abort, never silent.

TEST_F(Robustness, WriteErrorsOnStandardStreamsNeverAbortAndNeverPassSilently) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  // A usage error with stderr on a full device: exit 2 (was SIGABRT).
  bash(fmt::format("\"$B\" run --suite nosuch 2>/dev/full; echo $? >{}/code", dir.string()));
  EXPECT_EQ(slurp(dir / "code"), "2\n");
  // A successful run with stderr full or closed: the results file is whole, exit 1.
  for (const char* redirect : {"2>/dev/full", "2>&-", ">/dev/full", ">&-"}) {
    SCOPED_TRACE(redirect);
    const fs::path out = dir / "r.json";
    fs::remove(out);
    const Output o = bash(fmt::format("\"$B\" run {} -o {} {}; echo $? >{}/code", kQuick, out.string(), redirect,
                                      dir.string()));
    EXPECT_EQ(slurp(dir / "code"), "1\n") << o.err;
    EXPECT_TRUE(valid_results(out));
  }
  // The readers with stdout on a full device: exit 1 and a line on stderr (was exit 0).
  const fs::path r = small_results();
  for (const std::string& cmd : {fmt::format("report {}", r.string()), fmt::format("compare {} {}", r.string(), r.string()),
                                 fmt::format("history {}", r.string())}) {
    SCOPED_TRACE(cmd);
    bash(fmt::format("\"$B\" {} >/dev/full 2>{}/err; echo $? >{}/code", cmd, dir.string(), dir.string()));
    EXPECT_EQ(slurp(dir / "code"), "1\n") << slurp(dir / "err");
    EXPECT_NE(slurp(dir / "err").find("standard output"), std::string::npos) << slurp(dir / "err");
  }
}

// ---- 5. Stray words are usage errors.

TEST_F(Robustness, UnexpectedPositionalArgumentsAreUsageErrors) {
  expect_usage_error(gpubench("run --device cpu --suite memory gemm"), "'gemm'");
  expect_usage_error(gpubench("run extra"), "'extra'");
  expect_usage_error(gpubench("list --device cpu bogus"), "'bogus'");
  expect_usage_error(gpubench("tune gemm extra"), "'extra'");
  expect_usage_error(gpubench("datagen --out x extra"), "'extra'");
  EXPECT_FALSE(fs::exists(dir / "x"));
}

// ---- 6. Google Benchmark's flags are validated before any case; nothing is written.

TEST_F(Robustness, PassThroughFlagsAreValidatedBeforeAnyCase) {
  const fs::path out = dir / "r.json";
  const std::vector<std::pair<std::string, std::string>> bad{
      {"--benchmark_repetitions=-1", "--benchmark_repetitions"},
      {"--benchmark_repetitions=0", "--benchmark_repetitions"},
      {"--benchmark_repetitions=abc", "--benchmark_repetitions"},
      {"--benchmark_repetitions=99999999999", "--benchmark_repetitions"},
      {"--benchmark_min_time=-1", "--benchmark_min_time"},
      {"--benchmark_min_time=inf", "--benchmark_min_time"},
      {"--benchmark_out=/proc/gpubench-no/x.json", "--benchmark_out"},
      {"--benchmark_out=", "--benchmark_out"},
      {"--benchmark_format=xml", "--benchmark_format"},
      {"--benchmark_color=maybe", "--benchmark_color"},
      {"--benchmark_list_tests=true", "gpubench list"},
      {"--benchmark_context=novalue", "--benchmark_context"},
      {"--benchmark_nosuch=1", "unknown"},
  };
  for (const auto& [flag, what] : bad) {
    SCOPED_TRACE(flag);
    expect_usage_error(gpubench(fmt::format("run {} -o {} {}", kQuick, out.string(), flag)), what);
    EXPECT_FALSE(fs::exists(out));
  }
  // Good values still work, and --benchmark_out's folders are made like --out's.
  const fs::path copy = dir / "gb" / "copy.json";
  const Output o = gpubench(fmt::format("run {} -q -o {} --benchmark_repetitions=2 --benchmark_out={}", kQuick,
                                        out.string(), copy.string()));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(fs::exists(copy));
}

// ---- 7. Numeric options have finite, documented ranges.

TEST_F(Robustness, AbsurdNumbersAreRefused) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"--min-samples 99999999999999", "--min-samples"}, {"--warmup 1e308", "--warmup"},
      {"--min-time inf", "--min-time"},                  {"--min-time 1e308", "--min-time"},
      {"--min-time nan", "--min-time"},                  {"--batch-time 1e9", "--batch-time"},
      {"--max-noise -1", "--max-noise"},                 {"--case-timeout 1e300", "--case-timeout"},
      {"--rank-timeout inf", "--rank-timeout"},          {"--sample-interval 1e12", "--sample-interval"},
      {"--min-samples 1000000 --batch-time 1", "--min-samples"},
  };
  for (const auto& [args, option] : bad) {
    SCOPED_TRACE(args);
    expect_usage_error(gpubench(fmt::format("run --device cpu --suite gemm {} -o {}/r.json", args, dir.string())),
                       option);
  }
  const fs::path r = small_results();
  expect_usage_error(gpubench(fmt::format("compare {} {} --threshold inf", r.string(), r.string())), "--threshold");
  expect_usage_error(gpubench(fmt::format("report {} --train-tokens 1e300", r.string())), "--train-tokens");
  expect_usage_error(gpubench(fmt::format("history {} --min-shift nan", r.string())), "--min-shift");
  expect_usage_error(gpubench(fmt::format("datagen --out {}/d --threads 100000", dir.string())), "--threads");
}

// ---- 8. Bad output paths: found before any case, exit 2, nothing created.

TEST_F(Robustness, BadOutputPathsAreFoundFirstAndCreateNothing) {
  const std::string long_name = std::string(5000, 'a') + ".json";
  const Output o1 = gpubench(fmt::format("run {} -o {}/{}", kQuick, dir.string(), long_name));
  expect_usage_error(o1, "--out");
  EXPECT_LT(o1.err.size(), 400u) << "the message shortens the path";
  expect_usage_error(gpubench(fmt::format("run {} -o {}/newdir/", kQuick, dir.string())), "--out");
  EXPECT_FALSE(fs::exists(dir / "newdir"));
  const Output o3 = bash(fmt::format("\"$B\" run {} -o $'{}/x\\xff.json'", kQuick, dir.string()));
  expect_usage_error(o3, "UTF-8");
  expect_usage_error(gpubench(fmt::format("run {} -o ''", kQuick)), "--out");
  expect_usage_error(gpubench(fmt::format("run {} -o {}/name-{}.json", kQuick, dir.string(), std::string(250, 'b'))),
                     "NAME_MAX");
  // A parent that is a file.
  std::ofstream(dir / "plain") << "x";
  expect_usage_error(gpubench(fmt::format("run {} -o {}/plain/r.json", kQuick, dir.string())), "not a folder");
  const fs::path r = small_results();
  expect_usage_error(gpubench(fmt::format("report {} --out ''", r.string())), "--out");
  expect_usage_error(gpubench(fmt::format("compare {} {} --junit ''", r.string(), r.string())), "--junit");
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"plain", "small.json", "script.sh", "stdout", "stderr"}));
}

// Paths the user may not write: as an unprivileged user (root writes anywhere but a read-only
// file system).
TEST_F(Robustness, UnwritablePathsAreUsageErrorsForAnUnprivilegedUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch to the nobody user (setpriv)";
  if (sh("command -v setpriv").code != 0) GTEST_SKIP() << "setpriv (util-linux) not installed";
  if (sh(fmt::format("setpriv --reuid=65534 --regid=65534 --clear-groups {} version", GPUBENCH_BINARY)).code != 0) {
    GTEST_SKIP() << "the nobody user cannot run the binary here (its folders are not world-readable)";
  }
  const fs::path locked = dir / "locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_all);  // 0700, owned by root
  fs::permissions(dir, fs::perms::owner_all | fs::perms::others_exec | fs::perms::others_read);
  const fs::path r = small_results();
  fs::permissions(r, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  const std::string nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  // A folder nobody may look into, and one nobody may write to, each said as what it is (not
  // "missing", not "a file").
  const fs::path readonly = dir / "readonly";
  fs::create_directories(readonly);
  fs::permissions(readonly, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);  // 0705
  const std::string unsearchable = "folder " + locked.string() + " may not be searched";
  const std::string unwritable = "folder " + readonly.string() + " is not writable";
  for (const auto& [args, option, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {fmt::format("run {} -o {}/r.json", kQuick, locked.string()), "--out", unsearchable},
           {fmt::format("run {} -o {}/sub/r.json", kQuick, locked.string()), "--out", unsearchable},
           {fmt::format("compare {} {} --junit {}/j.xml", r.string(), r.string(), locked.string()), "--junit", unsearchable},
           {fmt::format("report {} --out {}/r.md", r.string(), locked.string()), "--out", unsearchable},
           {fmt::format("run {} -o {}/r.json", kQuick, readonly.string()), "--out", unwritable},
           {fmt::format("report {} --out {}/sub/r.md", r.string(), readonly.string()), "--out", unwritable},
           {fmt::format("datagen --out {}/d --count 1", readonly.string()), "--out", unwritable}}) {
    SCOPED_TRACE(args);
    const Output o = sh(fmt::format("{} {} {}", nobody, GPUBENCH_BINARY, args));
    expect_usage_error(o, option);
    EXPECT_NE(o.err.find(says), std::string::npos) << o.err;
  }
}

// What a message says a path is, it is: one case per kind (regular file, folder, FIFO, device,
// symbolic links, missing, a path under a regular file), for outputs, output folders and inputs.
// (Unwritable, which root cannot be refused, is the test above, as the nobody user.)
TEST_F(Robustness, PathMessagesSayWhatThePathIs) {
  const fs::path r = small_results();
  const std::string d = dir.string();
  std::ofstream(dir / "base.json") << "{}";
  fs::create_directories(dir / "folder");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  fs::create_symlink(dir / "fifo", dir / "to-fifo");
  fs::create_symlink(dir / "gone", dir / "dangling");
  struct Case {
    std::string kind, args, says;
  };
  const std::vector<Case> cases = {
      // datagen --out names a folder: a regular file there is a regular file (it once said "is not a regular file").
      {"regular file as a folder", fmt::format("datagen --out {}/base.json --count 1", d), "base.json is a regular file, not a folder"},
      {"regular file as a folder", fmt::format("run {} --trace-dir {}/base.json -o {}/t.json", kQuick, d, d),
       "base.json is a regular file, not a folder"},
      {"regular file on the way", fmt::format("run {} -o {}/base.json/r.json", kQuick, d), "base.json is a regular file, not a folder"},
      {"regular file on the way", fmt::format("report {}/base.json/r.json", d), "does not exist: " + d + "/base.json is a regular file, not a folder"},
      {"folder as a file", fmt::format("report {} --out {}/folder", r.string(), d), "is a folder; give a file name"},
      {"folder as an input", fmt::format("report {}/folder", d), "cannot open: it is a folder, and inputs are regular files"},
      {"FIFO as an output", fmt::format("run {} -o {}/fifo", kQuick, d), "exists and is a FIFO;"},
      {"FIFO as a folder", fmt::format("datagen --out {}/fifo --count 1", d), "fifo is a FIFO, not a folder"},
      {"FIFO as an input", fmt::format("report {}/fifo", d), "cannot open: it is a FIFO, and inputs are regular files"},
      {"symbolic link to a FIFO", fmt::format("report {}/to-fifo", d), "it is a symbolic link to a FIFO"},
      {"symbolic link to a FIFO", fmt::format("report {} --out {}/to-fifo", r.string(), d), "exists and is a symbolic link to a FIFO"},
      {"dangling symbolic link", fmt::format("report {}/dangling", d), "it is a symbolic link to nothing"},
      {"character device as an output", fmt::format("report {} --out /dev/null", r.string()), "exists and is a character device"},
      {"character device as a folder", fmt::format("datagen --out /dev/null --count 1"), "/dev/null is a character device, not a folder"},
      {"character device as an input", "report /dev/zero", "cannot open: it is a character device"},
      {"missing input", fmt::format("report {}/missing.json", d), "missing.json: cannot open: it does not exist"},
      {"missing input", fmt::format("report {} --prices {}/missing.json", r.string(), d), "cannot open: it does not exist"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind + ": " + c.args);
    const Output o = gpubench(c.args);
    expect_usage_error(o, c.says);
    // No message calls a regular file anything but one, nor anything else a regular file.
    EXPECT_EQ(o.err.find("is not a regular file, not a folder"), std::string::npos) << o.err;
  }
  EXPECT_FALSE(fs::exists(dir / "t.json"));
}

// ---- 9. Messages name the right thing.

TEST_F(Robustness, MessagesNameTheRightThing) {
  const fs::path r = small_results();
  std::ofstream(dir / "plain") << "x";
  const Output o = gpubench(fmt::format("compare {} {} --junit {}/plain/j.xml", r.string(), r.string(), dir.string()));
  expect_usage_error(o, "--junit");
  EXPECT_EQ(o.err.find("--out"), std::string::npos) << o.err;
  expect_usage_error(gpubench(fmt::format("datagen --out {}/d --size 100000x100000", dir.string())), "16 to 8192");
  expect_usage_error(gpubench(fmt::format("datagen --out {}/d --size 10x", dir.string())), "WIDTHxHEIGHT");
}

// ---- 10. Interruptions leave nothing behind; children die with their parent; SIGPIPE.

// The pids of `pid`'s children (Linux /proc).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::ifstream in(fmt::format("/proc/{}/task/{}/children", pid, pid));
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

// Starts the binary in the background with `args`; returns its pid.
pid_t spawn(const std::string& args, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string cmd = fmt::format("exec {} {} >{} 2>&1", GPUBENCH_BINARY, args, log.string());
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

int wait_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A run whose one case lasts a few seconds: the openblas GEMM at m=48 with a long min-time.
std::string slow_run(const fs::path& out, const std::string& extra = "") {
  return fmt::format("run --device cpu --suite gemm -a m=48 -a dtype=fp32 --min-time 20 --warmup 0.005 -q -o {} {}",
                     out.string(), extra);
}

template <class F>
bool eventually(F&& f, std::chrono::milliseconds limit = 20s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return f();
}

TEST_F(Robustness, InterruptedIsolatedRunsLeaveNoScratchFolder) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    const fs::path out = dir / "r.json";
    const pid_t pid = spawn(slow_run(out, "--isolate"), dir / "log");
    const fs::path scratch = fs::temp_directory_path() / fmt::format("gpubench-isolate-{}", pid);
    ASSERT_TRUE(eventually([&] { return !children_of(pid).empty(); })) << slurp(dir / "log");
    const std::vector<pid_t> kids = children_of(pid);
    ::kill(pid, sig);
    EXPECT_EQ(wait_code(pid), 128 + sig) << slurp(dir / "log");
    EXPECT_FALSE(fs::exists(scratch));
    EXPECT_FALSE(fs::exists(out.string() + ".lock"));
    for (pid_t k : kids) EXPECT_TRUE(eventually([&] { return ::kill(k, 0) != 0; }, 5s)) << "child " << k << " lives on";
    EXPECT_TRUE(valid_results(out));
  }
}

TEST_F(Robustness, AKilledParentTakesItsIsolatedCaseWithIt) {
  const fs::path out = dir / "r.json";
  const pid_t pid = spawn(slow_run(out, "--isolate"), dir / "log");
  ASSERT_TRUE(eventually([&] { return !children_of(pid).empty(); })) << slurp(dir / "log");
  const std::vector<pid_t> kids = children_of(pid);
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_code(pid), 128 + SIGKILL);
  for (pid_t k : kids) EXPECT_TRUE(eventually([&] { return ::kill(k, 0) != 0; }, 5s)) << "child " << k << " lives on";
  // Its scratch folder and lock file are leftovers of a dead pid: the next isolated run on the
  // same output removes the scratch folder and takes the lock.
  const fs::path scratch = fs::temp_directory_path() / fmt::format("gpubench-isolate-{}", pid);
  const Output o = gpubench(fmt::format("run {} --isolate -q -o {}", kQuick, out.string()));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(scratch));
}

TEST_F(Robustness, StaleTemporaryFilesOfDeadRunsAreRemoved) {
  // A pid that is certainly gone: a child that has exited and been reaped.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const fs::path out = dir / "r.json";
  const fs::path stale = out.string() + fmt::format(".tmp{}", dead);
  const fs::path live = out.string() + fmt::format(".tmp{}", ::getpid());  // a live process's: kept
  std::ofstream(stale) << "{";
  std::ofstream(live) << "{";
  const fs::path scratch = fs::temp_directory_path() / fmt::format("gpubench-isolate-{}", dead);
  fs::create_directories(scratch);
  std::ofstream(scratch / "case-0.json") << "{";
  const Output o = gpubench(fmt::format("run {} --isolate -q -o {}", kQuick, out.string()));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_FALSE(fs::exists(scratch));
}

TEST_F(Robustness, AClosedPipeEndsTheRunLikeSigterm) {
  const fs::path out = dir / "r.json";
  // Several cases, the console table on stdout, and a reader that is gone before the run's
  // first write reaches the pipe (stdout to a pipe is block-buffered: the table is written at
  // the latest when the run ends, a second after `true` exited).
  const Output o = bash(fmt::format(
      "\"$B\" run --device cpu --suite gemm -a m=32,40,48,56 -a dtype=fp32 --min-time 0.2 --warmup 0.005 -o {} "
      "2>{}/err | true; echo ${{PIPESTATUS[0]}}",
      out.string(), dir.string()));
  EXPECT_EQ(o.out, "141\n");
  EXPECT_NE(slurp(dir / "err").find("SIGPIPE"), std::string::npos) << slurp(dir / "err");
  EXPECT_TRUE(valid_results(out));
}

// Issue 32 item 6: the other commands end quietly on a closed pipe too, whether SIGPIPE is the
// default (killed by it: 141) or ignored by the parent, as Python's subprocess does (EPIPE: 141
// too, no error text).
TEST_F(Robustness, OtherCommandsEndQuietlyOnAClosedPipe) {
  const fs::path r = small_results();
  for (const char* trap : {"", "trap '' PIPE;"}) {
    for (const std::string& cmd : {std::string("list --preset full"), fmt::format("report {} -f html", r.string()),
                                   fmt::format("history {} -f html", r.string())}) {
      // `sleep` first: the reader is gone before the first write.
      const Output o = bash(fmt::format("{} \"$B\" {} 2>{}/err | sleep 0.01; echo ${{PIPESTATUS[0]}}", trap, cmd,
                                        dir.string()));
      const std::string err = slurp(dir / "err");
      EXPECT_TRUE(o.out == "141\n" || o.out == "0\n") << trap << cmd << ": " << o.out;
      EXPECT_EQ(err.find("error"), std::string::npos) << trap << cmd << ": " << err;
    }
  }
}

// ---- 11. --isolate has a default case timeout.

TEST_F(Robustness, IsolateHasADefaultCaseTimeoutInItsHelp) {
  const Output o = gpubench("run --help");
  std::string text;  // the help wraps lines: compare with single spaces
  for (char c : o.out) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!text.empty() && text.back() != ' ')) text += space ? ' ' : c;
  }
  EXPECT_NE(text.find("Default with --isolate: 300 s plus 20 times"), std::string::npos) << o.out;
}

// ---- 12. Two runs never write one results file.

TEST_F(Robustness, ASecondRunOnTheSameOutputIsRefusedNamingTheHolder) {
  const fs::path out = dir / "r.json";
  const pid_t pid = spawn(slow_run(out), dir / "log");
  ASSERT_TRUE(eventually([&] { return fs::exists(out.string() + ".lock") && fs::exists(out); })) << slurp(dir / "log");
  const Output second = gpubench(fmt::format("run {} -q -o {}", kQuick, out.string()));
  expect_usage_error(second, fmt::format("pid {}", pid));
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_code(pid), 128 + SIGTERM);
  EXPECT_FALSE(fs::exists(out.string() + ".lock"));
  EXPECT_EQ(gpubench(fmt::format("run {} -q -o {}", kQuick, out.string())).code, 0);
  EXPECT_FALSE(fs::exists(out.string() + ".lock")) << "released at the end of the run";
}

// ---- 13. MPI: --rank-timeout covers joining.

TEST_F(Robustness, ARankThatNeverStartsEndsTheRunWithinTheRankTimeout) {
  if (sh("command -v mpirun").code != 0) GTEST_SKIP() << "mpirun not installed (openmpi-bin)";
  if (gpubench("version").out.find("\nmpi: ") == std::string::npos) GTEST_SKIP() << "gpubench built without MPI";
  const std::string mpirun =
      fmt::format("mpirun {} --oversubscribe", ::geteuid() == 0 ? "--allow-run-as-root" : "");
  const auto start = std::chrono::steady_clock::now();
  const Output o = sh(fmt::format("timeout 60 {} -np 1 {} run {} --rank-timeout 3 -o {}/r.json : -np 1 sleep 40", mpirun,
                                  GPUBENCH_BINARY, kQuick, dir.string()));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.code, 124) << "the run hung until timeout(1) ended it";
  EXPECT_LT(s, 30) << "ended by --rank-timeout 3, not by the sleeping rank";
  EXPECT_NE(o.err.find("did not all join"), std::string::npos) << o.err;
}

// ---- 14. Resource exhaustion is skipped, never failed or hung.

TEST_F(Robustness, AnAddressSpaceLimitSkipsOpenblasInsteadOfSpinning) {
  const fs::path out = dir / "r.json";
  const Output o = bash(fmt::format(
      "ulimit -v 1100000 && timeout 120 \"$B\" run --device cpu --suite gemm -a m=256 -a dtype=fp32 --min-time 0.05 "
      "--warmup 0.005 -q -o {}",
      out.string()));
  EXPECT_NE(o.code, 124) << "hung under ulimit -v";
  EXPECT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(out));
  for (const auto& e : doc["benchmarks"]) EXPECT_NE(e["gpubench"]["status"], "failed") << e.dump();
}

TEST_F(Robustness, AThreadLimitSkipsPipelineCasesInsteadOfFailingThem) {
  const fs::path out = dir / "r.json";
  // ulimit -u counts every thread of the user: as root it is not enforced, so the address
  // space limit (thread stacks) is the portable way to make thread creation fail.
  const Output o = bash(fmt::format(
      "ulimit -v 1500000 && timeout 300 \"$B\" run --device cpu --suite dataload -a stage=pipeline -a workers=64 "
      "-a io=memory -a step_us=1000 --min-time 0.05 --warmup 0.005 -q -o {}",
      out.string()));
  EXPECT_NE(o.code, 124) << "hung under ulimit -v";
  EXPECT_EQ(o.code, 0) << o.err;
  const auto doc = nlohmann::json::parse(slurp(out));
  for (const auto& e : doc["benchmarks"]) EXPECT_NE(e["gpubench"]["status"], "failed") << e.dump();
}

// ---- 15. The small ones.

TEST_F(Robustness, HugeValuesPrintShortAndDuplicatesAndDisjointFilesAreReported) {
  const fs::path r = small_results();
  auto doc = nlohmann::json::parse(slurp(r));
  ASSERT_FALSE(doc["benchmarks"].empty());
  auto& e = doc["benchmarks"][0];
  e["real_time"] = 1.7e308;
  e["gpubench"]["metrics"]["tflops"] = 1.7e308;
  e["gpubench"]["metrics"]["gbps"] = 1.7e308;
  doc["benchmarks"].push_back(e);  // the same case and repetition twice
  const fs::path huge = dir / "huge.json";
  std::ofstream(huge) << doc.dump();
  const Output o = gpubench(fmt::format("report {}", huge.string()));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.find("0000000000000000000000"), std::string::npos) << "a 309-digit number";
  EXPECT_NE(o.err.find("appears more than once"), std::string::npos) << o.err;
  // No case in common: exit 2, not a pass.
  auto other = nlohmann::json::parse(slurp(r));
  for (auto& b : other["benchmarks"]) {
    b["name"] = "gemm/other";
    b["run_name"] = "gemm/other";
    b["gpubench"]["axes"]["m"] = 4242;
  }
  const fs::path disjoint = dir / "disjoint.json";
  std::ofstream(disjoint) << other.dump();
  const Output c = gpubench(fmt::format("compare {} {}", r.string(), disjoint.string()));
  EXPECT_EQ(c.code, 2) << c.err;
  EXPECT_NE(c.err.find("no case in common"), std::string::npos) << c.err;
}

TEST_F(Robustness, ADatasetOfCorruptJpegsIsRefusedUpFront) {
  const fs::path data = dir / "data";
  fs::create_directories(data);
  for (int i = 0; i < 3; ++i) std::ofstream(data / fmt::format("img{}.jpg", i)) << "\xff\xd8\xff not a jpeg";
  const Output o = gpubench(fmt::format("run --device cpu --suite dataload -a stage=decode -o {}/r.json", dir.string()),
                            fmt::format("GPUBENCH_DATASET={}", data.string()));
  expect_usage_error(o, "img0.jpg");
  EXPECT_FALSE(fs::exists(dir / "r.json"));
}

}  // namespace
}  // namespace gpubench::e2e
