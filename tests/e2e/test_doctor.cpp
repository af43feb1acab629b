// End-to-end tests of `gpubench doctor` on the machine running the tests: whatever it has
// (these build machines have no GPU and no driver), the text and JSON forms must agree, the
// exit status must follow the findings, and a missing GPU must be said, not hidden.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace {
namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Doctor : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / fmt::format("gpubench-doctor-e2e-{}-{}", ::getpid(),
                                                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Doctor() { fs::create_directories(dir); }
  ~Doctor() override { fs::remove_all(dir); }

  Output gpubench(const std::string& args) {
    const fs::path out = dir / "stdout", err = dir / "stderr";
    const int status =
        std::system(fmt::format("{} {} >{} 2>{}", GPUBENCH_BINARY, args, out.string(), err.string()).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
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

TEST_F(Doctor, UnusableResultsFolderIsAnErrorAndExits1) {
  std::ofstream(dir / "file") << "x";
  const Output r = gpubench(fmt::format("doctor --json --results-dir {}", (dir / "file" / "results").string()));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const nlohmann::json* disk = find(doc, "disk");
  ASSERT_NE(disk, nullptr);
  EXPECT_EQ((*disk)["severity"], "error");
  EXPECT_NE((*disk)["message"].get<std::string>().find("is not a folder"), std::string::npos) << disk->dump();
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
