// alltoallv: alltoall with uneven blocks. Every rank sends the size (in elements) split over
// every rank, itself included, by uneven_counts (exchange.cpp: seeded weights 1 + 2u, blocks
// up to 3:1), so the totals received differ between ranks.
// Counts: send = the size; recv = the largest total any rank receives (every receive buffer is
// allocated that large, as nccl-tests does); the call's count is the mean block, size / n.
// Bus bandwidth as nccl-tests' alltoallv_perf: algbw counts the bytes of the busiest rank,
// max over ranks of max(sent, received), and busbw = algbw x (n-1)/n as alltoall's.
// No in-place form.
#include <memory>

#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& alltoallv_op() {
  static const Operation op{
      "alltoallv",
      /*reduces=*/false,
      /*rooted=*/false,
      /*in_place=*/false,
      "(n-1)/n of the busiest rank's max(sent, received)",
      [](int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; },
      [](const CountArgs& a) {
        Counts c;
        c.param = a.elements / a.ranks;
        if (c.param <= 0) return c;
        auto e = std::make_shared<Exchange>(make_exchange(a.ranks, uneven_counts(a.elements, a.ranks, kExchangeSeed)));
        c.send = e->max_sent();
        c.recv = e->max_received();
        c.bus_elements = std::max(c.send, c.recv);
        c.exchange = std::move(e);
        return c;
      },
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)root;
        const auto from = c.exchange->source_of(rank, j);
        if (!from) return std::nullopt;  // past this rank's total: the buffer's unused tail
        return input_value(s, from->first, from->second);
      },
      same_place,
  };
  return op;
}

}  // namespace gpubench::suites::collectives
