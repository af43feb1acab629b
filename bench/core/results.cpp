#include "results.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "errors.hpp"
#include "interrupt.hpp"
#include "path_text.hpp"
#include "paths.hpp"

namespace gpubench {
namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + fmt::format(".tmp{}", ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(fmt::format("{}: write failed: {}", path.string(), std::strerror(err)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  // fsync before rename: after a crash the file is either the old or the new version.
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: write failed: {}", path.string(), std::strerror(err)));
  }
  // Checked at the start too (paths.hpp); again here, as something else may have appeared since:
  // rename(2) would replace a device node or a FIFO.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: exists and {}, not a regular file; not replaced", path.string(),
                                         describe_path(path.string())));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", path.string(), std::strerror(err)));
  }
}

void check_output_path(const fs::path& path, std::string_view option) {
  validate_output_file(path, option);
  if (path.has_parent_path()) make_folders(path.parent_path(), option);
}

ResultsFile::ResultsFile(fs::path path, nlohmann::ordered_json context) : path_(std::move(path)) {
  doc_["context"] = std::move(context);
  doc_["benchmarks"] = nlohmann::ordered_json::array();
  flush();
}

void ResultsFile::add(nlohmann::ordered_json entry) {
  doc_["benchmarks"].push_back(std::move(entry));
  if (judge_) judge_(doc_);
  flush();
}

void ResultsFile::set_entries(std::vector<nlohmann::ordered_json> entries) {
  doc_["benchmarks"] = nlohmann::ordered_json::array();
  for (auto& e : entries) doc_["benchmarks"].push_back(std::move(e));
  if (judge_) judge_(doc_);
  flush();
}

void ResultsFile::replace(std::size_t index, nlohmann::ordered_json entry) {
  doc_["benchmarks"].at(index) = std::move(entry);
  if (judge_) judge_(doc_);
  flush();
}

void ResultsFile::set_gpubench(const std::string& key, nlohmann::ordered_json value) {
  doc_["gpubench"][key] = std::move(value);
  flush();
}

void ResultsFile::set_summary(const std::string& name, nlohmann::ordered_json summary) {
  doc_["gpubench"]["summaries"][name] = std::move(summary);
}

void ResultsFile::set_section(const std::string& key, nlohmann::ordered_json value) {
  doc_["gpubench"][key] = std::move(value);
  flush();
}

void ResultsFile::flush() {
  if (path_.empty()) return;
  // Invalid UTF-8 in a recorded string (an argument, a library's message) is replaced, never fatal.
  const std::string text = doc_.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  InterruptsHeld hold;  // an interruption waits until the new file is in place
  write_file_atomically(path_, text);
}

fs::path default_results_path(const std::string& host) {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  return fs::path("results") / fmt::format("{}-{:%Y%m%dT%H%M%SZ}.json", host.empty() ? "host" : host, now);
}

}  // namespace gpubench
