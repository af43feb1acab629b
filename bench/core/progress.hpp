#pragma once
// Progress on stderr: on a terminal one line rewritten in place (case i of N, elapsed,
// estimated time left); otherwise one line per finished case. --quiet silences both.
#include <chrono>
#include <cstdio>
#include <string>

namespace gpubench {

class Progress {
 public:
  Progress(std::size_t total, bool quiet, bool interactive, std::FILE* out = stderr);
  void started(std::size_t index, const std::string& name);
  void finished(const std::string& name, const std::string& outcome);
  void done();
  // Estimated seconds left after `done` of `total` cases took `elapsed` seconds.
  static double eta_seconds(std::size_t done, std::size_t total, double elapsed);

 private:
  double elapsed() const;
  std::size_t total_, done_ = 0, current_ = 0;
  bool quiet_, interactive_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

std::string format_duration(double seconds);  // "42s", "3m05s", "1h02m"
std::string format_seconds(double seconds);   // 3 significant digits: "812 ns", "1.25 ms"

}  // namespace gpubench
