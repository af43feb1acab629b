// all_reduce: every rank ends with the reduction of all ranks' buffers.
// Counts: the whole buffer is one call's count; no rounding beyond whole elements.
// Bus bandwidth: a ring all-reduce is a reduce-scatter then an all-gather; each moves (n-1)/n
// of the buffer over every rank's link, so each link carries 2(n-1)/n x S and
// busbw = algbw x 2(n-1)/n is what compares with the link's peak (nccl-tests, doc/PERFORMANCE.md).
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& all_reduce_op() {
  static const Operation op{
      "all_reduce",
      /*reduces=*/true,
      /*rooted=*/false,
      /*in_place=*/true,
      "2(n-1)/n",
      [](int n) { return n <= 0 ? 0.0 : 2.0 * (n - 1) / n; },
      whole_buffer_counts,
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)c;
        (void)rank;
        (void)root;
        return reduced_value(s, j);
      },
      same_place,
  };
  return op;
}

}  // namespace gpubench::suites::collectives
