#include "bench/suites/train/largest_batch.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace gpubench::suites::train {

BatchSearch find_largest_batch(const std::function<bool(std::int64_t)>& fits, std::int64_t start, std::int64_t limit) {
  if (start < 1 || limit < start) throw std::invalid_argument("find_largest_batch: need 1 <= start <= limit");
  BatchSearch s;
  std::exception_ptr start_error;
  auto trial = [&](std::int64_t b) {
    bool ok = false;
    try {
      ok = fits(b);
    } catch (const std::exception& e) {
      // A launch or configuration failure at this size (a grid past a limit, a library that
      // refuses the shape, an allocation that fails outside the trial's own checks) means
      // this size does not run here: it does not fit. Recorded, and the search goes on.
      if (s.first_error.empty()) s.first_error = "micro-batch " + std::to_string(b) + ": " + e.what();
      if (b == start) start_error = std::current_exception();
      ok = false;
    }
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
  // Not even the first size ran, and not for lack of memory: that is an error of the case, not
  // a size that does not fit; the caller reports it as it was thrown.
  if (lo == 0 && start_error) std::rethrow_exception(start_error);
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
