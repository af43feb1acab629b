#pragma once
// Planning-time size limits, shared by every suite (Suite::check_sizes): the products a case
// will allocate or index (m*n*batch elements, bytes per buffer) are computed with overflow
// checks and compared with a limit before anything runs, so a huge axis value is a usage error
// naming the axes and the limit (exit 2), never a signed overflow, a crash or a
// std::length_error in a case.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace gpubench {

// No host or GPU holds 16 TiB in one case: a larger buffer is a typo, not a benchmark.
inline constexpr std::int64_t kMaxCaseBytes = std::int64_t{1} << 44;
// The largest value of an axis that counts bytes per buffer (memory and collectives `size`):
// 1 TiB (AxisSpec::max_value).
inline constexpr std::int64_t kMaxAxisBytes = std::int64_t{1} << 40;

// One factor of a size: its name as the user knows it ("m", "batch", "bytes per element") and
// its value.
using SizeFactor = std::pair<std::string_view, std::int64_t>;

// The product of `factors`. Throws UsageError "<what>: m=.. x n=.. x ... is more than <limit>
// (<limit_name>)" when it overflows or exceeds `limit`. Factors must be >= 0.
std::int64_t checked_size(std::string_view what, std::initializer_list<SizeFactor> factors,
                          std::int64_t limit = kMaxCaseBytes, std::string_view limit_name = "16 TiB per case");

// a + b, with the same refusal (a leading dimension m + pad).
std::int64_t checked_sum(std::string_view what, SizeFactor a, SizeFactor b,
                         std::int64_t limit = kMaxCaseBytes, std::string_view limit_name = "16 TiB per case");

}  // namespace gpubench
