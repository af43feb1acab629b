// reduce: the reduction of every rank's buffer lands on the root only.
// Counts: the whole buffer; no rounding beyond whole elements.
// Bus bandwidth: pipelined along a chain towards the root, each link carries the buffer once:
// factor 1. Only the root's output is defined (and checked).
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& reduce_op() {
  static const Operation op{
      "reduce",
      /*reduces=*/true,
      /*rooted=*/true,
      /*in_place=*/true,
      "1",
      [](int n) { return n <= 0 ? 0.0 : 1.0; },
      whole_buffer_counts,
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)c;
        if (rank != root) return std::nullopt;
        return reduced_value(s, j);
      },
      same_place,
  };
  return op;
}

}  // namespace gpubench::suites::collectives
