#include <cmath>
#include <vector>

#include "kernels/memory/host_pool.hpp"

#include "kernels/common/random.hpp"
#include "kernels/memory/stream_reference.hpp"

namespace gpubench::kernels {

std::optional<StreamOp> parse_stream_op(const std::string& name) {
  for (StreamOp op : {StreamOp::Copy, StreamOp::Scale, StreamOp::Add, StreamOp::Triad, StreamOp::Dot, StreamOp::Fill}) {
    if (name == stream_op_name(op)) return op;
  }
  return std::nullopt;
}

const char* stream_op_name(StreamOp op) {
  switch (op) {
    case StreamOp::Copy: return "copy";
    case StreamOp::Scale: return "scale";
    case StreamOp::Add: return "add";
    case StreamOp::Triad: return "triad";
    case StreamOp::Dot: return "dot";
    case StreamOp::Fill: return "fill";
  }
  return "?";
}

StreamTraffic stream_traffic(StreamOp op) {
  switch (op) {
    case StreamOp::Copy: return {1, 1};
    case StreamOp::Scale: return {1, 1};
    case StreamOp::Add: return {2, 1};
    case StreamOp::Triad: return {2, 1};
    case StreamOp::Dot: return {2, 0};
    case StreamOp::Fill: return {0, 1};
  }
  return {};
}

double stream_bytes(StreamOp op, double bytes_per_array) {
  const StreamTraffic t = stream_traffic(op);
  return (t.reads + t.writes) * bytes_per_array;
}

double stream_initial(int array, std::size_t i) { return uniform_value(kStreamSeed[array], i); }

int stream_output(StreamOp op) {
  switch (op) {
    case StreamOp::Copy: return 2;
    case StreamOp::Scale: return 1;
    case StreamOp::Add: return 2;
    case StreamOp::Triad: return 0;
    case StreamOp::Dot: return -1;
    case StreamOp::Fill: return 0;
  }
  return -1;
}

double stream_expected(StreamOp op, std::size_t i) {
  const double a = stream_initial(0, i), b = stream_initial(1, i), c = stream_initial(2, i);
  switch (op) {
    case StreamOp::Copy: return a;
    case StreamOp::Scale: return kStreamScalar * c;
    case StreamOp::Add: return a + b;
    case StreamOp::Triad: return b + kStreamScalar * c;
    case StreamOp::Dot: return 0;
    case StreamOp::Fill: return kFillValue;
  }
  return 0;
}

namespace {

// Runs body(begin, end) over the pool's static slices of [0, n).
template <typename Body>
void parallel_slices(std::size_t n, Body body) {
  HostPool& pool = HostPool::shared();
  const int threads = pool.threads();
  pool.run([&](int t) {
    const auto [begin, end] = HostPool::slice(n, t, threads);
    body(t, begin, end);
  });
}

}  // namespace

DotReference stream_dot_reference(std::size_t n) {
  std::vector<DotReference> part(static_cast<std::size_t>(HostPool::shared().threads()));
  parallel_slices(n, [&](int t, std::size_t begin, std::size_t end) {
    DotReference r;
    for (std::size_t i = begin; i < end; ++i) {
      const double p = stream_initial(0, i) * stream_initial(1, i);
      r.value += p;
      r.abs_sum += std::fabs(p);
    }
    part[static_cast<std::size_t>(t)] = r;
  });
  DotReference total;
  for (const DotReference& r : part) {
    total.value += r.value;
    total.abs_sum += r.abs_sum;
  }
  return total;
}

void host_stream_init(double* a, double* b, double* c, std::size_t n) {
  // First touch by the thread that later reads and writes each slice (NUMA placement).
  parallel_slices(n, [&](int, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      a[i] = stream_initial(0, i);
      b[i] = stream_initial(1, i);
      c[i] = stream_initial(2, i);
    }
  });
}

namespace {

// One thread's slice of an operation: plain loops over restrict pointers, vectorized by the
// compiler.
double stream_slice(StreamOp op, double* __restrict a, double* __restrict b, double* __restrict c, std::size_t begin,
                    std::size_t end) {
  const double s = kStreamScalar;
  switch (op) {
    case StreamOp::Copy:
      for (std::size_t i = begin; i < end; ++i) c[i] = a[i];
      return 0;
    case StreamOp::Scale:
      for (std::size_t i = begin; i < end; ++i) b[i] = s * c[i];
      return 0;
    case StreamOp::Add:
      for (std::size_t i = begin; i < end; ++i) c[i] = a[i] + b[i];
      return 0;
    case StreamOp::Triad:
      for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
      return 0;
    case StreamOp::Dot: {
      // Four partial sums: the additions vectorize without reassociation flags.
      double p[4] = {0, 0, 0, 0};
      std::size_t i = begin;
      for (; i + 4 <= end; i += 4)
        for (int k = 0; k < 4; ++k) p[k] += a[i + k] * b[i + k];
      for (; i < end; ++i) p[0] += a[i] * b[i];
      return (p[0] + p[1]) + (p[2] + p[3]);
    }
    case StreamOp::Fill:
      for (std::size_t i = begin; i < end; ++i) a[i] = kFillValue;
      return 0;
  }
  return 0;
}

}  // namespace

double host_stream_run(StreamOp op, double* a, double* b, double* c, std::size_t n) {
  std::vector<double> part(static_cast<std::size_t>(HostPool::shared().threads()), 0.0);
  parallel_slices(n, [&](int t, std::size_t begin, std::size_t end) {
    part[static_cast<std::size_t>(t)] = stream_slice(op, a, b, c, begin, end);
  });
  double sum = 0;
  for (double p : part) sum += p;
  return sum;
}

int host_threads() { return HostPool::shared().threads(); }

}  // namespace gpubench::kernels
