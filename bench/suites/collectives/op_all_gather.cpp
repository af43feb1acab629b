// all_gather: rank r contributes a block; every rank ends with all n blocks in rank order.
// Counts: the size is the gathered (receive) buffer; each rank sends floor(elements / n) and the
// receive buffer is n times that (the remainder is dropped, as nccl-tests does).
// Bus bandwidth: each rank must receive the n-1 blocks it does not hold: (n-1)/n x S per link.
// In place: rank r's block sits at offset r x block of the receive buffer.
#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& all_gather_op() {
  static const Operation op{
      "all_gather",
      /*reduces=*/false,
      /*rooted=*/false,
      /*in_place=*/true,
      "(n-1)/n",
      [](int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; },
      [](const CountArgs& a) {
        Counts c;
        c.send = c.param = a.elements / a.ranks;
        c.recv = c.bus_elements = c.send * a.ranks;
        return c;
      },
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)rank;
        (void)root;
        return input_value(s, static_cast<int>(j / c.param), j % c.param);
      },
      [](const Counts& c, std::int64_t rank) -> std::pair<std::int64_t, std::int64_t> {
        return {rank * c.param, 0};
      },
  };
  return op;
}

}  // namespace gpubench::suites::collectives
