#include "bench/suites/train/largest_batch.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpubench::suites::train {

BatchSearch find_largest_batch(const std::function<bool(std::int64_t)>& fits, std::int64_t start, std::int64_t limit) {
  if (start < 1 || limit < start) throw std::invalid_argument("find_largest_batch: need 1 <= start <= limit");
  BatchSearch s;
  auto trial = [&](std::int64_t b) {
    const bool ok = fits(b);
    s.trials.emplace_back(b, ok);
    return ok;
  };
  // Doubling: lo fits, hi does not (hi = 0 while no failure has been seen).
  std::int64_t lo = 0, hi = 0;
  for (std::int64_t b = start;; b = std::min(b * 2, limit)) {
    if (!trial(b)) {
      hi = b;
      break;
    }
    lo = b;
    if (b == limit) {
      s.largest = lo;
      s.hit_limit = true;
      return s;
    }
  }
  // Bisection over (lo, hi).
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (trial(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  s.largest = lo;
  return s;
}

}  // namespace gpubench::suites::train
