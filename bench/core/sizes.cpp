#include "sizes.hpp"

#include <fmt/format.h>

#include "errors.hpp"

namespace gpubench {
namespace {

std::string describe(std::initializer_list<SizeFactor> factors, const char* op) {
  std::string out;
  for (const auto& [name, value] : factors) {
    if (!out.empty()) out += op;
    out += fmt::format("{}={}", name, value);
  }
  return out;
}

}  // namespace

std::int64_t checked_size(std::string_view what, std::initializer_list<SizeFactor> factors, std::int64_t limit,
                          std::string_view limit_name) {
  std::int64_t product = 1;
  bool too_large = false;
  for (const auto& f : factors) {
    if (f.second < 0 || __builtin_mul_overflow(product, f.second, &product)) too_large = true;
  }
  if (too_large || product > limit) {
    throw UsageError(fmt::format("{}: {} is more than {} ({}); use smaller values", what, describe(factors, " x "),
                                 limit, limit_name));
  }
  return product;
}

std::int64_t checked_sum(std::string_view what, SizeFactor a, SizeFactor b, std::int64_t limit,
                         std::string_view limit_name) {
  std::int64_t sum = 0;
  if (a.second < 0 || b.second < 0 || __builtin_add_overflow(a.second, b.second, &sum) || sum > limit) {
    throw UsageError(fmt::format("{}: {} is more than {} ({}); use smaller values", what, describe({a, b}, " + "),
                                 limit, limit_name));
  }
  return sum;
}

}  // namespace gpubench
