// Uneven exchanges: the count matrices of alltoallv and moe_dispatch, their displacements, and
// where every received element came from (the check's answer). Plain C++, no backend.
#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "bench/suites/collectives/collectives.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::suites::collectives {

std::int64_t Exchange::sent(int src) const {
  std::int64_t total = 0;
  for (int dst = 0; dst < ranks; ++dst) total += count[static_cast<std::size_t>(src * ranks + dst)];
  return total;
}

std::int64_t Exchange::received(int dst) const {
  std::int64_t total = 0;
  for (int src = 0; src < ranks; ++src) total += count[static_cast<std::size_t>(src * ranks + dst)];
  return total;
}

std::optional<std::pair<int, std::int64_t>> Exchange::source_of(int dst, std::int64_t j) const {
  for (int src = 0; src < ranks; ++src) {
    const std::int64_t start = recv_displ[static_cast<std::size_t>(dst * ranks + src)];
    const std::int64_t n = count[static_cast<std::size_t>(src * ranks + dst)];
    if (j >= start && j < start + n) {
      return std::make_pair(src, send_displ[static_cast<std::size_t>(src * ranks + dst)] + (j - start));
    }
  }
  return std::nullopt;
}

Exchange make_exchange(int ranks, std::vector<std::int64_t> count) {
  if (ranks <= 0 || count.size() != static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks)) {
    throw std::invalid_argument("make_exchange: the count matrix is not ranks x ranks");
  }
  Exchange e;
  e.ranks = ranks;
  e.count = std::move(count);
  e.send_displ.assign(e.count.size(), 0);
  e.recv_displ.assign(e.count.size(), 0);
  for (int src = 0; src < ranks; ++src) {
    std::int64_t at = 0;
    for (int dst = 0; dst < ranks; ++dst) {
      e.send_displ[static_cast<std::size_t>(src * ranks + dst)] = at;
      at += e.count[static_cast<std::size_t>(src * ranks + dst)];
    }
  }
  for (int dst = 0; dst < ranks; ++dst) {
    std::int64_t at = 0;
    for (int src = 0; src < ranks; ++src) {
      e.recv_displ[static_cast<std::size_t>(dst * ranks + src)] = at;
      at += e.count[static_cast<std::size_t>(src * ranks + dst)];
    }
  }
  for (int r = 0; r < ranks; ++r) {
    e.most_sent = std::max(e.most_sent, e.sent(r));
    e.most_received = std::max(e.most_received, e.received(r));
  }
  return e;
}

std::vector<std::int64_t> uneven_counts(std::int64_t per_rank, int ranks, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(std::max(ranks, 0));
  std::vector<std::int64_t> count(n * n, 0);
  for (std::size_t src = 0; src < n; ++src) {
    // Weights 1 + 2u, u in [0, 1): kernels::uniform_value is in [-1, 1), so 1 + (v + 1) = 2 + v.
    std::vector<double> weight(n);
    for (std::size_t dst = 0; dst < n; ++dst) {
      weight[dst] = 2.0 + static_cast<double>(kernels::uniform_value(seed, src * n + dst));
    }
    const double sum = std::accumulate(weight.begin(), weight.end(), 0.0);
    // Largest remainder: the floors, then one more element to the largest remainders (ties to
    // the lower rank) until the row holds exactly per_rank.
    std::vector<double> remainder(n);
    std::int64_t given = 0;
    for (std::size_t dst = 0; dst < n; ++dst) {
      const double share = static_cast<double>(per_rank) * weight[dst] / sum;
      const auto whole = static_cast<std::int64_t>(share);
      count[src * n + dst] = whole;
      remainder[dst] = share - static_cast<double>(whole);
      given += whole;
    }
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
    for (std::size_t k = 0; given < per_rank; k = (k + 1) % n, ++given) ++count[src * n + order[k]];
  }
  return count;
}

namespace {
// The router's per-rank key: moe_route(seed, rank, t, n) = mix64(rank_key(seed, rank) + t) % n.
std::uint64_t rank_key(std::uint64_t seed, int rank) {
  return kernels::mix64(seed ^ (static_cast<std::uint64_t>(rank) << 40));
}
}  // namespace

int moe_route(std::uint64_t seed, int rank, std::int64_t token, int ranks) {
  const std::uint64_t draw = kernels::mix64(rank_key(seed, rank) + static_cast<std::uint64_t>(token));
  return static_cast<int>(draw % static_cast<std::uint64_t>(std::max(ranks, 1)));
}

Exchange moe_exchange_counts(std::int64_t tokens, std::int64_t hidden, int ranks, std::uint64_t seed) {
  // Planning asks for the same routing many times (once per dtype, reduction and variant of a
  // size: 448 moe_dispatch cases in the full preset on 8 GPUs), and routing 4M tokens per rank
  // is 32M draws: without this cache the draws were 76% of a full-preset dry run (perf, 1.47 s of
  // the collectives suite's). The token counts [src * ranks + dst] are kept per (tokens, ranks,
  // seed); hidden only scales them.
  using Key = std::tuple<std::int64_t, int, std::uint64_t>;
  static std::mutex mutex;
  static std::map<Key, std::vector<std::int64_t>> cache;
  const auto n = static_cast<std::size_t>(ranks);
  std::vector<std::int64_t> count;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(Key{tokens, ranks, seed}); it != cache.end()) count = it->second;
  }
  if (count.empty()) {
    count.assign(n * n, 0);
    for (std::size_t r = 0; r < n; ++r) {
      const std::uint64_t key = rank_key(seed, static_cast<int>(r));
      for (std::int64_t t = 0; t < tokens; ++t) {
        const std::uint64_t d = kernels::mix64(key + static_cast<std::uint64_t>(t)) % static_cast<std::uint64_t>(std::max(ranks, 1));
        ++count[r * n + static_cast<std::size_t>(d)];
      }
    }
    const std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() >= 64) cache.clear();  // a bound on memory for runs with many shapes
    cache.emplace(Key{tokens, ranks, seed}, count);
  }
  for (auto& c : count) c *= hidden;
  Exchange e = make_exchange(ranks, std::move(count));
  e.tokens = tokens;
  e.hidden = hidden;
  return e;
}

Exchange moe_exchange(std::int64_t tokens, std::int64_t hidden, int ranks, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(ranks);
  const auto t_count = static_cast<std::size_t>(tokens);
  std::vector<int> dest(n * t_count);
  std::vector<std::int64_t> count(n * n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t t = 0; t < t_count; ++t) {
      const int d = moe_route(seed, static_cast<int>(r), static_cast<std::int64_t>(t), ranks);
      dest[r * t_count + t] = d;
      count[r * n + static_cast<std::size_t>(d)] += hidden;
    }
  }
  Exchange e = make_exchange(ranks, std::move(count));
  e.tokens = tokens;
  e.hidden = hidden;
  e.packed.resize(n * t_count);
  for (std::size_t r = 0; r < n; ++r) {
    // A counting sort by destination, stable in token order.
    std::vector<std::int64_t> next(n);
    for (std::size_t d = 0; d < n; ++d) next[d] = e.send_displ[r * n + d] / hidden;
    for (std::size_t t = 0; t < t_count; ++t) {
      const auto d = static_cast<std::size_t>(dest[r * t_count + t]);
      e.packed[r * t_count + static_cast<std::size_t>(next[d]++)] = static_cast<std::int64_t>(t);
    }
  }
  e.dest = std::move(dest);
  return e;
}

}  // namespace gpubench::suites::collectives
