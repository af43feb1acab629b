// alltoall: rank r sends block b of its buffer to rank b, and receives block b from rank b.
// Counts: the size is each rank's buffer, n blocks of floor(elements / n) (remainder dropped, as
// nccl-tests does); the call's count is one block.
// Bus bandwidth: n-1 of the n blocks leave each rank and n-1 arrive: (n-1)/n x S per link.
// No in-place form (NCCL runs it as grouped send/recv).
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& alltoall_op() {
  static const Operation op{
      "alltoall",
      /*reduces=*/false,
      /*rooted=*/false,
      /*in_place=*/false,
      "(n-1)/n",
      [](int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; },
      [](const CountArgs& a) {
        Counts c;
        c.param = a.elements / a.ranks;
        c.send = c.recv = c.bus_elements = c.param * a.ranks;
        return c;
      },
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)root;
        const std::int64_t block = j / c.param;
        return input_value(s, static_cast<int>(block), rank * c.param + j % c.param);
      },
      same_place,
  };
  return op;
}

}  // namespace gpubench::suites::collectives
