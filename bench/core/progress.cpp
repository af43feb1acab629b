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

double eta_seconds(std::size_t done, std::size_t total, double elapsed) {
  if (done == 0 || done >= total) return 0;
  return elapsed / static_cast<double>(done) * static_cast<double>(total - done);
}

}  // namespace gpubench
