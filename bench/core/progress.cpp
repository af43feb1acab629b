#include "progress.hpp"

#include <fmt/format.h>

namespace gpubench {

std::string format_duration(double s) {
  if (s < 0) s = 0;
  const auto total = static_cast<long long>(s + 0.5);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
}

std::string format_seconds(double s) {
  if (s < 1e-6) return fmt::format("{:.3g} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

Progress::Progress(std::size_t total, bool quiet, bool interactive, std::FILE* out)
    : total_(total), quiet_(quiet), interactive_(interactive), out_(out) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Progress::eta_seconds(std::size_t done, std::size_t total, double elapsed) {
  if (done == 0 || done >= total) return 0;
  return elapsed / static_cast<double>(done) * static_cast<double>(total - done);
}

void Progress::started(std::size_t index, const std::string& name) {
  current_ = index;
  if (quiet_ || !interactive_) return;
  const std::string eta = done_ ? format_duration(eta_seconds(done_, total_, elapsed())) : "?";
  fmt::print(out_, "\r\033[K[{}/{}] {} (elapsed {}, left ~{})", index + 1, total_, name, format_duration(elapsed()), eta);
  std::fflush(out_);
}

void Progress::finished(const std::string& name, const std::string& outcome) {
  ++done_;
  if (quiet_) return;
  if (interactive_) {
    fmt::print(out_, "\r\033[K");
  } else {
    fmt::print(out_, "[{}/{}] {}: {} (elapsed {}, left ~{})\n", done_, total_, name, outcome,
               format_duration(elapsed()), format_duration(eta_seconds(done_, total_, elapsed())));
  }
  std::fflush(out_);
}

void Progress::done() {
  if (!quiet_ && interactive_) fmt::print(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace gpubench
