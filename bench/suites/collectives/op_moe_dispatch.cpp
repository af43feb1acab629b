// moe_dispatch: a mixture-of-experts layer's token exchange, one expert per rank. Every rank
// holds its tokens (the size, in tokens of `hidden` elements); a seeded top-1 router sends each
// to one rank (moe_route, exchange.cpp). One call is the whole round trip, as a layer does it:
//   1. pack: the tokens grouped by destination (a gather of rows);
//   2. dispatch: an all-to-all-v of the packed tokens (each rank receives its experts' tokens);
//   3. combine: the inverse all-to-all-v (every block goes back to the rank it came from);
//   4. unpack: each returned token back to its place (a scatter of rows).
// The expert's computation between 2 and 3 is left out (the gemm suite's op=grouped measures it).
// The receive buffer holds both results, and both are checked exactly: first the dispatched
// tokens (the largest total any rank receives; a rank's unused tail undefined), then the
// tokens returned to their places, which must equal the rank's input.
// Counts: param = tokens per rank; send = tokens x hidden.
// Bus bandwidth: the two exchanges' bytes of the busiest rank, 2 x max(sent, received), with
// alltoall's factor (n-1)/n; the time includes the pack and the unpack.
#include <memory>

#include "bench/suites/collectives/collectives.hpp"

namespace gpubench::suites::collectives {

const Operation& moe_dispatch_op() {
  static const Operation op{
      "moe_dispatch",
      /*reduces=*/false,
      /*rooted=*/false,
      /*in_place=*/false,
      "(n-1)/n of 2 x the busiest rank's max(sent, received)",
      [](int n) { return n <= 0 ? 0.0 : static_cast<double>(n - 1) / n; },
      [](const CountArgs& a) {
        Counts c;
        // A size smaller than one token is one token of the whole size.
        const std::int64_t hidden = std::min(a.hidden, a.elements);
        c.param = hidden > 0 ? a.elements / hidden : 0;
        if (c.param <= 0 || c.param > kMaxMoeTokens) return c;
        auto e = std::make_shared<Exchange>(a.routing ? moe_exchange(c.param, hidden, a.ranks, kExchangeSeed)
                                                       : moe_exchange_counts(c.param, hidden, a.ranks, kExchangeSeed));
        c.send = c.param * hidden;
        c.recv = e->max_received() + c.send;
        c.bus_elements = 2 * std::max(e->max_sent(), e->max_received());
        c.exchange = std::move(e);
        return c;
      },
      [](const InputSpec& s, const Counts& c, int rank, int root, std::int64_t j) -> std::optional<double> {
        (void)root;
        const Exchange& e = *c.exchange;
        const std::int64_t dispatched = e.max_received();
        if (j >= dispatched) return input_value(s, rank, j - dispatched);  // returned to its place
        const auto from = e.source_of(rank, j);
        if (!from) return std::nullopt;
        const auto [src, at] = *from;  // position in src's packed send buffer
        const std::int64_t token = e.packed[static_cast<std::size_t>(src * e.tokens + at / e.hidden)];
        return input_value(s, src, token * e.hidden + at % e.hidden);
      },
      same_place,
  };
  return op;
}

}  // namespace gpubench::suites::collectives
