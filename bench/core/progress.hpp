#pragma once
// Time formats of the console (console.hpp) and the estimate of the time a run has left.
#include <cstddef>
#include <string>

namespace gpubench {

// Estimated seconds left after `done` of `total` cases took `elapsed` seconds.
double eta_seconds(std::size_t done, std::size_t total, double elapsed);

std::string format_duration(double seconds);  // "42s", "3m05s", "1h02m"
std::string format_seconds(double seconds);   // 3 significant digits: "812 ns", "1.25 ms"

}  // namespace gpubench
