// sendrecv: along a ring, rank r sends its buffer to r+1 and receives from r-1 (mod n), all at
// once, as nccl-tests' sendrecv.
// Counts: the whole buffer; no rounding beyond whole elements.
// Bus bandwidth: each link carries the buffer once: factor 1.
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& sendrecv_op() {
  static const Operation op{
      "sendrecv",
      /*reduces=*/false,
      /*rooted=*/false,
      /*in_place=*/false,
      "1",
      [](int n) { return n <= 0 ? 0.0 : 1.0; },
      whole_buffer_counts,
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)c;
        (void)root;
        return input_value(s, (rank - 1 + s.ranks) % s.ranks, j);
      },
      same_place,
  };
  return op;
}

}  // namespace gpubench::suites::collectives
