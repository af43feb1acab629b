// reduce_scatter: the buffers are reduced and rank r keeps block r of the result.
// Counts: the size is the send buffer; each rank receives floor(elements / n), and sends n times
// that (the remainder is dropped, as nccl-tests does).
// Bus bandwidth: every rank's link carries the n-1 blocks reduced elsewhere: (n-1)/n x S.
// In place (NCCL convention): the result lands at offset r x block of the send buffer.
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& reduce_scatter_op() {
  static const Operation op{
      "reduce_scatter",
      /*reduces=*/true,
      /*rooted=*/false,
      /*in_place=*/true,
      "(n-1)/n",
      [](int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; },
      [](const CountArgs& a) {
        Counts c;
        c.recv = c.param = a.elements / a.ranks;
        c.send = c.bus_elements = c.recv * a.ranks;
        return c;
      },
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)root;
        return reduced_value(s, rank * c.param + j);
      },
      [](const Counts& c, std::int64_t rank) -> std::pair<std::int64_t, std::int64_t> {
        return {0, rank * c.param};
      },
  };
  return op;
}

}  // namespace gpubench::suites::collectives
