// End-to-end tests of `gpubench doctor` on the machine running the tests: whatever it has
// (these build machines have no GPU and no driver), the text and JSON forms must agree, the
// exit status must follow the findings, and a missing GPU must be said, not hidden.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixture.hpp"

namespace gpubench {
namespace {
namespace fs = std::filesystem;

using e2e::Output;
using e2e::slurp;

struct Doctor : e2e::CliTest {
  // doctor --json with the fake libnvidia-ml.so.1 of `variant` (tests/fakes/fake_nvml.cpp).
  nlohmann::json with_fake_nvml(const std::string& variant, int expected_code, const std::string& env = "") {
    const Output r = gpubench(fmt::format("doctor --json --results-dir {}", dir.string()),
                              fmt::format("{} LD_LIBRARY_PATH={}/{}", env, GPUBENCH_FAKE_NVML_DIR, variant));
    EXPECT_EQ(r.code, expected_code) << r.out << r.err;
    return nlohmann::json::parse(r.out);
  }
};

const nlohmann::json* find(const nlohmann::json& doc, const std::string& check) {
  for (const auto& f : doc["findings"]) {
    if (f["check"] == check) return &f;
  }
  return nullptr;
}

TEST_F(Doctor, JsonIsValidAndTheExitStatusFollowsTheFindings) {
  const Output r = gpubench(fmt::format("doctor --json --results-dir {}", dir.string()));
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.code << r.err;
  const auto doc = nlohmann::json::parse(r.out);  // throws (fails the test) when not JSON
  ASSERT_TRUE(doc["findings"].is_array());
  int errors = 0;
  for (const auto& f : doc["findings"]) {
    const std::string sev = f["severity"];
    EXPECT_TRUE(sev == "ok" || sev == "info" || sev == "warning" || sev == "error") << sev;
    EXPECT_FALSE(f["message"].get<std::string>().empty());
    if (sev == "error") ++errors;
    if (sev == "warning" || sev == "error") {
      EXPECT_FALSE(f["remedy"].get<std::string>().empty()) << f.dump();
    }
  }
  EXPECT_EQ(doc["summary"]["error"], errors);
  EXPECT_EQ(r.code, errors > 0 ? 1 : 0);
  EXPECT_EQ(doc["exit_code"], r.code);
  // The rest of the machine is checked whatever the GPU situation.
  for (const char* check : {"driver", "cuda", "library", "cpu_governor", "memlock", "disk"}) {
    EXPECT_NE(find(doc, check), nullptr) << check;
  }
  const nlohmann::json* cuda = find(doc, "cuda");
  ASSERT_NE(cuda, nullptr);
  if ((*cuda)["severity"] == "info") {  // no GPU here: it says so, and asks nothing of a device
    EXPECT_EQ((*cuda)["message"].get<std::string>().rfind("no CUDA device: ", 0), 0u) << cuda->dump();
    EXPECT_EQ(find(doc, "pcie"), nullptr);
    EXPECT_EQ(find(doc, "profiling"), nullptr);
  }
  const nlohmann::json* disk = find(doc, "disk");
  ASSERT_NE(disk, nullptr);
  EXPECT_NE((*disk)["message"].get<std::string>().find(dir.string()), std::string::npos) << disk->dump();
}

TEST_F(Doctor, TextAgreesWithJson) {
  const Output text = gpubench(fmt::format("doctor --results-dir {}", dir.string()));
  const Output json = gpubench(fmt::format("doctor --json --results-dir {}", dir.string()));
  ASSERT_TRUE(text.code == 0 || text.code == 1) << text.err;
  EXPECT_EQ(text.code, json.code);
  const auto doc = nlohmann::json::parse(json.out);
  const auto& s = doc["summary"];
  EXPECT_NE(text.out.find(fmt::format("{} ok, {} info, {} warning(s), {} error(s)\n", s["ok"].get<int>(),
                                      s["info"].get<int>(), s["warning"].get<int>(), s["error"].get<int>())),
            std::string::npos)
      << text.out;
  for (const auto& f : doc["findings"]) {
    EXPECT_NE(text.out.find(f["message"].get<std::string>()), std::string::npos) << f["message"];
  }
  if (find(doc, "cuda") && (*find(doc, "cuda"))["severity"] == "info") {
    EXPECT_NE(text.out.find("no CUDA device: "), std::string::npos) << text.out;
  }
}

std::vector<nlohmann::json> all(const nlohmann::json& doc, const std::string& check) {
  std::vector<nlohmann::json> out;
  for (const auto& f : doc["findings"]) {
    if (f["check"] == check) out.push_back(f);
  }
  return out;
}

bool has(const nlohmann::json& finding, const std::string& part) {
  return finding["message"].get<std::string>().find(part) != std::string::npos;
}

// The process list as the fake reports it: gpubench itself (left out), pid 1 with 1 GiB, and a
// pid that does not exist whose memory NVML cannot tell.
void expect_fake_processes(const nlohmann::json& doc) {
  const nlohmann::json* p = find(doc, "processes");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ((*p)["severity"], "warning");
  EXPECT_TRUE(has(*p, "2 other process(es)")) << p->dump();
  EXPECT_TRUE(has(*p, "(pid 1, 1.0 GiB)")) << p->dump();
  EXPECT_FALSE(has(*p, "512.0 MiB")) << "gpubench's own context counted: " << p->dump();
  if (!fs::exists("/proc/4000000")) {
    EXPECT_TRUE(has(*p, "? (pid 4000000)")) << p->dump();
  }
}

TEST_F(Doctor, GpuSeenThroughNvmlOnly) {
  const auto doc = with_fake_nvml("current", 0);
  EXPECT_EQ(find(doc, "nvml"), nullptr);  // NVML loaded
  const auto gpu = all(doc, "gpu");
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu[0]["subject"], "nvml:0");
  EXPECT_TRUE(has(gpu[0], "Fake GPU at 0000:17:00.0: NVML sees it but CUDA does not")) << gpu[0].dump();
  const nlohmann::json* pcie = find(doc, "pcie");
  ASSERT_NE(pcie, nullptr);
  EXPECT_EQ((*pcie)["severity"], "warning");
  EXPECT_TRUE(has(*pcie, "PCIe Gen4 x8 (maximum Gen5 x16)")) << pcie->dump();
  EXPECT_EQ((*find(doc, "persistence"))["severity"], "ok");
  const auto ecc = all(doc, "ecc");
  ASSERT_EQ(ecc.size(), 1u);
  EXPECT_EQ(ecc[0]["severity"], "info");
  EXPECT_TRUE(has(ecc[0], "3 corrected ECC error(s)"));
  EXPECT_EQ(find(doc, "mig"), nullptr);  // NOT_SUPPORTED: left out, not guessed
  const nlohmann::json* clocks = find(doc, "clocks");
  ASSERT_NE(clocks, nullptr);
  EXPECT_EQ((*clocks)["severity"], "ok");
  EXPECT_TRUE(has(*clocks, "SM 345 of 1980 MHz, memory 2619 of 2619 MHz; application SM clock 1755 MHz (idle"))
      << clocks->dump();
  const nlohmann::json* power = find(doc, "power");
  ASSERT_NE(power, nullptr);
  EXPECT_EQ((*power)["severity"], "warning");
  EXPECT_TRUE(has(*power, "450 W is below the default 700 W"));
  EXPECT_TRUE(has(*find(doc, "temperature"), "GPU at 41 C (slowdown at 90 C)"));
  EXPECT_TRUE(has(*find(doc, "numa"), "near CPUs 0-1"));
  EXPECT_NE(find(doc, "profiling"), nullptr);  // asked because a GPU exists
  expect_fake_processes(doc);
}

TEST_F(Doctor, UncorrectableEccErrorsExit1) {
  const auto doc = with_fake_nvml("current", 1, "FAKE_NVML_UNCORRECTED_ECC=2");
  const auto ecc = all(doc, "ecc");
  ASSERT_FALSE(ecc.empty());
  EXPECT_EQ(ecc[0]["severity"], "error");
  EXPECT_TRUE(has(ecc[0], "2 uncorrectable ECC error(s)"));
  EXPECT_EQ(doc["exit_code"], 1);
}

TEST_F(Doctor, LegacyDriverEntryPoints) {
  // Only the unversioned process query and the old throttle-reasons name, plus an r530-style
  // _v3 whose records are larger: the binding must not read those with the newer layout.
  const auto doc = with_fake_nvml("legacy", 0);
  expect_fake_processes(doc);
  EXPECT_TRUE(has(*find(doc, "clocks"), "(idle")) << find(doc, "clocks")->dump();
}

TEST_F(Doctor, UnusableResultsFolderIsAnErrorAndExits1) {
  std::ofstream(dir / "file") << "x";
  const Output r = gpubench(fmt::format("doctor --json --results-dir {}", (dir / "file" / "results").string()));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const nlohmann::json* disk = find(doc, "disk");
  ASSERT_NE(disk, nullptr);
  EXPECT_EQ((*disk)["severity"], "error");
  EXPECT_NE((*disk)["message"].get<std::string>().find("is a regular file, not a folder"), std::string::npos) << disk->dump();
}

TEST_F(Doctor, HelpAndUsageErrors) {
  const Output help = gpubench("doctor --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--json"), std::string::npos);
  EXPECT_NE(help.out.find("--results-dir"), std::string::npos);
  const Output bad = gpubench("doctor --no-such-option");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(bad.out.empty());
  EXPECT_EQ(bad.err.rfind("gpubench doctor: ", 0), 0u) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
  const Output listed = gpubench("--help");
  EXPECT_NE(listed.out.find("  doctor "), std::string::npos);
}

}  // namespace
}  // namespace gpubench
