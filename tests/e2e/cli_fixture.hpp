#pragma once
// Shared by the end-to-end tests: a fresh temporary folder per test and a way to run a shell
// command line (the real gpubench binary, usually) capturing its exit code, stdout and stderr.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gpubench::e2e {

namespace fs = std::filesystem;

// The gpubench binary under test and the folder of the fake libnvidia-ml variants, in this
// build folder (build_paths.cpp).
const char* gpubench_binary();
const char* fake_nvml_dir();
#define GPUBENCH_BINARY (::gpubench::e2e::gpubench_binary())
#define GPUBENCH_FAKE_NVML_DIR (::gpubench::e2e::fake_nvml_dir())

struct Output {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The `gpubench` object of every iteration entry of a results file (aggregates left out).
inline std::vector<nlohmann::json> iteration_entries(const fs::path& file) {
  std::vector<nlohmann::json> out;
  const nlohmann::json doc = nlohmann::json::parse(slurp(file));
  for (const auto& b : doc["benchmarks"]) {
    if (b.value("run_type", "") == "iteration") out.push_back(b["gpubench"]);
  }
  return out;
}

struct CliTest : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / fmt::format("gpubench-e2e-{}-{}-{}", ::getpid(),
                                                          ::testing::UnitTest::GetInstance()->current_test_suite()->name(),
                                                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  CliTest() { fs::create_directories(dir); }
  ~CliTest() override { fs::remove_all(dir); }

  // Runs a shell command line; stdout and stderr are captured to files in `dir`.
  Output sh(const std::string& cmd) {
    const fs::path out = dir / "stdout", err = dir / "stderr";
    const int status = std::system(fmt::format("{} >{} 2>{}", cmd, out.string(), err.string()).c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  // `env` is prepended to the command line: "VAR=value ...".
  Output gpubench(const std::string& args, const std::string& env = "") {
    return sh(fmt::format("{} {} {}", env, GPUBENCH_BINARY, args));
  }
};

}  // namespace gpubench::e2e
