// broadcast: the root's buffer is copied to every rank.
// Counts: the whole buffer; no rounding beyond whole elements.
// Bus bandwidth: pipelined along a chain, the data crosses each link once: factor 1.
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& broadcast_op() {
  static const Operation op{
      "broadcast",
      /*reduces=*/false,
      /*rooted=*/true,
      /*in_place=*/true,
      "1",
      [](int n) { return n <= 0 ? 0.0 : 1.0; },
      whole_buffer_counts,
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)c;
        (void)rank;
        return input_value(s, root, j);
      },
      same_place,
  };
  return op;
}

}  // namespace gpubench::suites::collectives
