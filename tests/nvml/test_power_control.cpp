// PowerControl against the fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.cpp), whose power
// state lives in a file (FAKE_NVML_STATE) like a driver's: whatever happens to the process, the
// file says whether the GPU was left capped or locked. Covered: a normal end, a refusal
// (NO_PERMISSION), a step outside the board's range, a failing phase (an exception), locked
// clocks, and a process terminated with SIGTERM in the middle of a sweep.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench/core/interrupt.hpp"
#include "bench/core/nvml.hpp"
#include "bench/core/power_control.hpp"
#include "bench/core/power_sweep.hpp"

namespace gpubench {
namespace {

const std::vector<PowerTarget> kFakeGpu = {{"cuda:0", "0000:17:00.0"}};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class PowerControlFake : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(nvml::available()) << nvml::unavailable_reason() << " (run through ctest, which sets LD_LIBRARY_PATH)";
    dir_ = std::filesystem::temp_directory_path() /
           ("gpubench-power-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    state_ = dir_ / "state";
    ::setenv("FAKE_NVML_STATE", state_.c_str(), 1);
    ::unsetenv("FAKE_NVML_NO_PERMISSION");
  }
  void TearDown() override {
    ::unsetenv("FAKE_NVML_STATE");
    ::unsetenv("FAKE_NVML_NO_PERMISSION");
    std::filesystem::remove_all(dir_);
  }
  std::string state() const { return slurp(state_); }
  std::string log() const { return slurp(state_.string() + ".log"); }
  std::filesystem::path dir_, state_;
};

PowerStep pct(double v) { return {PowerStep::Kind::PercentOfDefault, v}; }

TEST_F(PowerControlFake, SweepsAndRestoresAtTheEnd) {
  {
    PowerControl pc(kFakeGpu);
    const auto o = pc.original_json();
    EXPECT_EQ(o["gpus"][0]["original_limit_w"], 450.0);
    EXPECT_EQ(o["gpus"][0]["default_limit_w"], 700.0);
    EXPECT_EQ(o["gpus"][0]["min_limit_w"], 200.0);
    auto a = pc.apply(pct(90));
    ASSERT_TRUE(a.on()) << a.status;
    ASSERT_EQ(a.limit_w.size(), 1u);
    EXPECT_EQ(a.limit_w[0], 630.0);  // 90% of the 700 W default
    EXPECT_NE(state().find("limit_mw 630000"), std::string::npos);
    a = pc.apply({PowerStep::Kind::Watts, 300});
    ASSERT_TRUE(a.on()) << a.status;
    EXPECT_EQ(a.limit_w[0], 300.0);
  }
  EXPECT_NE(state().find("limit_mw 450000"), std::string::npos) << state();
  EXPECT_EQ(log(), "set_power_limit 630000\nset_power_limit 300000\nset_power_limit 450000\n");
}

TEST_F(PowerControlFake, RefusalSaysSoOnceAndChangesNothing) {
  ::setenv("FAKE_NVML_NO_PERMISSION", "1", 1);
  {
    PowerControl pc(kFakeGpu);
    auto a = pc.apply(pct(80));
    EXPECT_FALSE(a.on());
    EXPECT_EQ(PowerControl::status_line(pct(80), a.status),
              "power limit: off: NVML_ERROR_NO_PERMISSION, run as root or set by an administrator");
    EXPECT_EQ(a.limit_w[0], 450.0);  // measured at the current limit
    a = pc.apply(pct(70));  // not asked again
    EXPECT_EQ(a.status, "off: NVML_ERROR_NO_PERMISSION, run as root or set by an administrator");
    const PowerStep clock{PowerStep::Kind::ClockMhz, 1410};
    a = pc.apply(clock);
    EXPECT_EQ(PowerControl::status_line(clock, a.status),
              "lock clocks: off: NVML_ERROR_NO_PERMISSION, run as root or set by an administrator");
  }
  // One refused attempt per kind; nothing to put back.
  EXPECT_EQ(log(), "set_power_limit 560000 refused\nlock_clocks 1410 1410 refused\n");
  EXPECT_EQ(std::filesystem::exists(state_), false);  // the state never changed
}

TEST_F(PowerControlFake, AStepOutsideTheBoardsRangeIsSkippedAlone) {
  {
    PowerControl pc(kFakeGpu);
    auto a = pc.apply(pct(10));  // 70 W, below the 200 W minimum
    EXPECT_EQ(a.status, "off: 10% is 70 W on cuda:0, outside the board's range 200 W to 700 W");
    a = pc.apply({PowerStep::Kind::Watts, 250});
    EXPECT_TRUE(a.on()) << a.status;
  }
  EXPECT_NE(state().find("limit_mw 450000"), std::string::npos);
}

TEST_F(PowerControlFake, AFailingPhaseRestores) {
  try {
    PowerControl pc(kFakeGpu);
    ASSERT_TRUE(pc.apply(pct(70)).on());
    ASSERT_TRUE(pc.apply({PowerStep::Kind::ClockMhz, 1095}).on());
    EXPECT_NE(state().find("limit_mw 490000\nlocked_mhz 1095 1095"), std::string::npos) << state();
    throw std::runtime_error("the phase's verification failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(state(), "limit_mw 450000\nlocked_mhz none\n");
  const std::string l = log();
  EXPECT_NE(l.find("set_power_limit 450000\nreset_clocks\n"), std::string::npos) << l;
}

TEST_F(PowerControlFake, NoGpuOrUnknownGpuIsOff) {
  {
    PowerControl none(std::vector<PowerTarget>{});
    EXPECT_EQ(none.apply(pct(90)).status, "off: no GPU selected (a CPU's power is not set through NVML)");
  }
  PowerControl other(std::vector<PowerTarget>{{"cuda:1", "0000:65:00.0"}});
  EXPECT_EQ(other.apply(pct(90)).status, "off: NVML has no GPU with PCI bus id 0000:65:00.0 (cuda:1)");
  EXPECT_THROW(PowerControl second(kFakeGpu), std::logic_error);  // one at a time
}

// A sweep in a child process, terminated with SIGTERM while the limit is lowered: the
// interrupt handler (bench/core/interrupt.cpp) puts the limit back before the process exits.
TEST_F(PowerControlFake, SigtermMidSweepRestores) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    PowerControl pc(kFakeGpu);
    const bool on = pc.apply(pct(80)).on() && pc.apply({PowerStep::Kind::ClockMhz, 1410}).on();
    (void)!::write(ready[1], on ? "1" : "0", 1);
    for (int i = 0; i < 200; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // "the load"
    ::_exit(3);  // not reached: SIGTERM ends it
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(c, '1');
  EXPECT_EQ(state(), "limit_mw 560000\nlocked_mhz 1410 1410\n");
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_EQ(state(), "limit_mw 450000\nlocked_mhz none\n");
  EXPECT_EQ(log(), "set_power_limit 560000\nlock_clocks 1410 1410\nset_power_limit 450000\nreset_clocks\n");
}

// Issue 25 item 6: after the first signal the soak's worker may never return (a GPU hung in a
// synchronize). The watchdog puts the limit and clocks back within its allowance regardless.
TEST_F(PowerControlFake, AWorkerHungAfterTheSignalStillGetsTheLimitRestoredInTime) {
  PowerControl pc(kFakeGpu, /*install_handlers=*/false);
  ASSERT_TRUE(pc.apply(pct(80)).on());
  ASSERT_TRUE(pc.apply({PowerStep::Kind::ClockMhz, 1410}).on());
  std::atomic<bool> stop{false};
  {
    RestoreWatchdog watchdog(stop, 0.3);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(state(), "limit_mw 560000\nlocked_mhz 1410 1410\n");  // no signal yet: untouched
    const auto signalled = std::chrono::steady_clock::now();
    stop = true;  // what the soak's SIGINT handler does
    // The "worker" stays hung in a fake synchronize far past the allowance.
    while (!watchdog.restored() && std::chrono::steady_clock::now() - signalled < std::chrono::seconds(5)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
    EXPECT_TRUE(watchdog.restored());
    EXPECT_LT(took, 1.0);  // the 0.3 s allowance, plus a poll
    EXPECT_EQ(state(), "limit_mw 450000\nlocked_mhz none\n");
  }
  pc.restore();  // the worker finally returns: restoring again changes nothing
  EXPECT_EQ(log(), "set_power_limit 560000\nlock_clocks 1410 1410\nset_power_limit 450000\nreset_clocks\n");
}

TEST_F(PowerControlFake, AWorkerThatStopsInTimeLeavesTheRestoreToItsOwner) {
  PowerControl pc(kFakeGpu, /*install_handlers=*/false);
  ASSERT_TRUE(pc.apply(pct(80)).on());
  std::atomic<bool> stop{false};
  {
    RestoreWatchdog watchdog(stop, 2.0);
    stop = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the worker returns quickly
  }
  EXPECT_EQ(state(), "limit_mw 560000\nlocked_mhz none\n");  // the watchdog did not act
  pc.restore();
  EXPECT_EQ(state(), "limit_mw 450000\nlocked_mhz none\n");
}

// A crash (SIGABRT here; SIGSEGV alike) while a limit is changed: put back before the process dies.
TEST_F(PowerControlFake, AFatalSignalRestoresFirst) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    PowerControl pc(kFakeGpu, /*install_handlers=*/false);
    if (!pc.apply(pct(80)).on()) ::_exit(3);
    std::abort();
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  EXPECT_EQ(state(), "limit_mw 450000\nlocked_mhz none\n");
}

// The sweep driver: one phase per step at the limit in force, the efficiency curve, and the
// original limit back at the end. The fake "load" scales like a GPU near its knee: throughput
// grows with the square root of the limit, so perf per watt is best at the lowest limit.
PhaseFigures fake_phase(const SweepPoint& p) {
  PhaseFigures f;
  const double w = p.limit_w.at(0).value_or(0);
  f.throughput = 100 * std::sqrt(w / 700);
  f.unit = "TFLOP/s";
  f.power_w = w * 0.95;
  f.seconds = 1;
  return f;
}

TEST_F(PowerControlFake, SweepGivesTheEfficiencyCurveAndRestores) {
  const auto steps = parse_power_limits("100%,90%,10%,70%");
  std::ostringstream say;
  nlohmann::ordered_json j;
  {
    PowerControl pc(kFakeGpu);
    const auto points = run_sweep(pc, steps, fake_phase, say);
    ASSERT_EQ(points.size(), 3u);  // 10% (70 W) is below the board's 200 W minimum: said and skipped
    EXPECT_EQ(points[0].limit_w[0], 700.0);
    EXPECT_EQ(points[2].setting, "70%");
    EXPECT_EQ(points[2].limit_w[0], 490.0);
    j = sweep_json(steps, points);
  }
  EXPECT_EQ(say.str(), "power limit: off: 10% is 70 W on cuda:0, outside the board's range 200 W to 700 W\n");
  EXPECT_EQ(j["kind"], "power_limit");
  EXPECT_EQ(j["best_perf_per_watt"], "70%");
  EXPECT_NEAR(j["points"][2]["relative_throughput"].get<double>(), std::sqrt(0.7), 1e-9);
  EXPECT_GT(j["points"][2]["relative_perf_per_watt"].get<double>(), 1);
  EXPECT_EQ(state(), "limit_mw 450000\nlocked_mhz none\n");
}

TEST_F(PowerControlFake, RefusedSweepMeasuresOnceAtTheCurrentLimit) {
  ::setenv("FAKE_NVML_NO_PERMISSION", "1", 1);
  std::ostringstream say;
  PowerControl pc(kFakeGpu);
  const auto points = run_sweep(pc, parse_power_limits("100%,90%"), fake_phase, say);
  EXPECT_EQ(say.str(), "power limit: off: NVML_ERROR_NO_PERMISSION, run as root or set by an administrator\n");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].setting, "current");
  EXPECT_EQ(points[0].limit_w[0], 450.0);
  EXPECT_FALSE(points[0].status == "on");
}

TEST_F(PowerControlFake, APhaseThatThrowsLeavesTheLimitRestored) {
  try {
    PowerControl pc(kFakeGpu);
    std::ostringstream say;
    int calls = 0;
    (void)run_sweep(pc, parse_power_limits("90%,80%,70%"),
                    [&](const SweepPoint& p) {
                      if (++calls == 2) throw std::runtime_error("verification mismatch");
                      return fake_phase(p);
                    },
                    say);
    FAIL() << "the phase's exception did not propagate";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "verification mismatch");
  }
  EXPECT_EQ(state(), "limit_mw 450000\nlocked_mhz none\n");
  EXPECT_EQ(log(), "set_power_limit 630000\nset_power_limit 560000\nset_power_limit 450000\n");
}

}  // namespace
}  // namespace gpubench
