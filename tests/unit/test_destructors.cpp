// Destructors must not throw. Destructors are noexcept: an exception leaving one is
// std::terminate for the whole run, and after a sticky CUDA error every CUDA call fails, so a
// destructor that checks a CUDA call (or makes a device current with the throwing guard) turns
// one failed case into a lost run. This scans the tree's destructor bodies for what throws
// (the CHECK macros, *_check(), check(), throw, synchronize(), cuda::ScopedDevice without
// std::nothrow); a body
// that catches everything (catch (...)) is allowed. Calls into other functions are not
// followed: this catches the common shapes, not every path.
// Also: the non-throwing device guard those destructors use, on this machine without a driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/core/cuda.hpp"

namespace gpubench {
namespace {

namespace fs = std::filesystem;

// The text with comments and string/char literals blanked (newlines kept, for line numbers).
std::string code_only(const std::string& s) {
  std::string out = s;
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  std::size_t i = 0;
  while (i < out.size()) {
    const char prev = i > 0 ? out[i - 1] : ' ';
    if (out.compare(i, 2, "//") == 0) {
      const std::size_t end = out.find('\n', i);
      blank(i, end);
      i = end == std::string::npos ? out.size() : end;
    } else if (out.compare(i, 2, "/*") == 0) {
      const std::size_t end = out.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? out.size() : end + 2;
      blank(i, stop);
      i = stop;
    } else if (out.compare(i, 2, "R\"") == 0 && !std::isalnum(static_cast<unsigned char>(prev)) && prev != '_') {
      const std::size_t paren = out.find('(', i + 2);
      const std::string close = ")" + out.substr(i + 2, paren - i - 2) + "\"";
      const std::size_t end = paren == std::string::npos ? std::string::npos : out.find(close, paren);
      const std::size_t stop = end == std::string::npos ? out.size() : end + close.size();
      blank(i, stop);
      i = stop;
    } else if (out[i] == '"' || (out[i] == '\'' && !std::isxdigit(static_cast<unsigned char>(prev)))) {
      // A string or character literal (a ' after a digit is a digit separator: 20'000'000).
      const char q = out[i];
      std::size_t k = i + 1;
      while (k < out.size() && out[k] != q && out[k] != '\n') k += out[k] == '\\' ? 2 : 1;
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

struct Finding {
  std::string where, what;
};

// Destructor bodies in `text` that contain something that throws.
std::vector<Finding> throwing_destructors(const std::string& text, const std::string& file) {
  static const std::regex dtor(R"(~\s*(\w+)\s*\(\s*\)\s*(?:(?:override|noexcept|final)\s*)*\{)");
  static const std::vector<std::pair<std::regex, std::string>> throws = {
      {std::regex(R"(GPUBENCH_\w*CHECK\s*\()"), "a CHECK macro"},
      {std::regex(R"(\bthrow\b)"), "throw"},
      {std::regex(R"(\b\w+_check\s*\()"), "a *_check() call"},
      {std::regex(R"((^|[^\w.>])check\s*\()"), "check()"},
      {std::regex(R"(ScopedDevice\s+\w+\s*\((?![^)]*nothrow))"), "cuda::ScopedDevice without std::nothrow"},
      // Case::synchronize() and cuda::Stream::synchronize() check the wait (cudaStreamSynchronize
      // does not match: capital S).
      {std::regex(R"(\bsynchronize\s*\()"), "synchronize() (checks and throws)"},
  };
  const std::string code = code_only(text);
  std::vector<Finding> out;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), dtor); it != std::sregex_iterator(); ++it) {
    const std::size_t open = static_cast<std::size_t>(it->position(0) + it->length(0)) - 1;
    std::size_t close = open;
    for (int depth = 0; close < code.size(); ++close) {
      if (code[close] == '{') ++depth;
      if (code[close] == '}' && --depth == 0) break;
    }
    const std::string body = code.substr(open, close - open + 1);
    if (body.find("catch (...)") != std::string::npos) continue;
    for (const auto& [pattern, what] : throws) {
      if (!std::regex_search(body, pattern)) continue;
      const auto line = std::count(code.begin(), code.begin() + it->position(0), '\n') + 1;
      out.push_back({file + ":" + std::to_string(line) + " ~" + (*it)[1].str(), what});
    }
  }
  return out;
}

TEST(Destructors, TheScanFindsWhatThrows) {
  const std::string sample = R"(
struct A { ~A() { GPUBENCH_CUDA_CHECK(cudaFree(p)); } };
struct B { ~B() override { cuda::ScopedDevice on(d); (void)cudaFree(p); } };
struct C { ~C() { cuda::ScopedDevice on(d, std::nothrow); (void)cudaFree(p); /* may throw */ } };
D::~D() { if (bad) throw std::runtime_error("x"); }
E::~E() { try { stop(); } catch (...) { } }
F::~F() { nccl_check(ncclCommDestroy(c), "destroy"); }
G::~G() { (void)check_output(c); const char* s = "~H() { throw 1; }"; int n = 20'000'000; }
struct I { ~I() { cuda::check(cudaFree(p), "free", __FILE__, __LINE__); } };
J::~J() { synchronize(); (void)cudaStreamSynchronize(s); }
)";
  const std::vector<Finding> f = throwing_destructors(sample, "sample");
  std::vector<std::string> where;
  for (const Finding& x : f) where.push_back(x.where + ": " + x.what);
  EXPECT_EQ(where, (std::vector<std::string>{"sample:2 ~A: a CHECK macro",
                                             "sample:3 ~B: cuda::ScopedDevice without std::nothrow",
                                             "sample:5 ~D: throw", "sample:7 ~F: a *_check() call",
                                             "sample:9 ~I: check()",
                                             "sample:10 ~J: synchronize() (checks and throws)"}));
}

TEST(Destructors, NoneInTheTreeThrows) {
  const fs::path root = fs::path(GPUBENCH_FIXTURES_DIR).parent_path().parent_path();
  std::vector<std::string> found;
  std::size_t scanned = 0;
  for (const char* dir : {"apps", "bench", "kernels", "profilers", "reports", "perf"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh")) continue;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      ++scanned;
      for (const Finding& f : throwing_destructors(text.str(), fs::relative(e.path(), root).string())) {
        found.push_back(f.where + ": " + f.what);
      }
    }
  }
  EXPECT_GT(scanned, 100u);  // the tree was found
  EXPECT_TRUE(found.empty()) << ::testing::PrintToString(found);
}

TEST(Destructors, TheNonThrowingDeviceGuardWithoutADriver) {
  // No driver here: the throwing guard throws, the other one reports and restores nothing.
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) GTEST_SKIP() << "a GPU is present";
  (void)cudaGetLastError();
  EXPECT_THROW(cuda::ScopedDevice(0), cuda::CudaError);
  bool ok = true;
  EXPECT_NO_THROW({
    cuda::ScopedDevice guard(0, std::nothrow);
    ok = guard.ok();
  });
  EXPECT_FALSE(ok);
}

}  // namespace
}  // namespace gpubench
