#pragma once
// The largest micro-batch that fits in device memory: double from a start value until a trial
// fails (or a limit is reached), then bisect between the last size that fitted and the first
// that did not. A trial builds the model at one micro-batch and runs a step; it returns false
// on out-of-memory after releasing everything it allocated, so the search (and the run) go on.
// Any exception a trial throws (a launch whose grid exceeds a limit, a configuration a library
// refuses) also counts as "does not fit" at that size, with its message kept in first_error;
// only when the very first size throws is the exception passed on, since then nothing ran at
// all. (A sticky CUDA error fails every later trial too: the search then ends low, and the
// case's own next CUDA call reports the error.)
// Plain C++ over an abstract trial, so it is tested with a fake allocator.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpubench::suites::train {

struct BatchSearch {
  std::int64_t largest = 0;                              // 0: not even `start` fits
  bool hit_limit = false;                                // `limit` fitted: the true largest may be more
  std::vector<std::pair<std::int64_t, bool>> trials;     // (micro-batch, fitted), in order
  std::string first_error;                               // the first trial that threw: "micro-batch N: what"
};

BatchSearch find_largest_batch(const std::function<bool(std::int64_t)>& fits, std::int64_t start, std::int64_t limit);

}  // namespace gpubench::suites::train
