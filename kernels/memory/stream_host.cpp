#include <omp.h>

#include <cmath>

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

DotReference stream_dot_reference(std::size_t n) {
  double sum = 0, abs_sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum, abs_sum)
  for (std::size_t i = 0; i < n; ++i) {
    const double p = stream_initial(0, i) * stream_initial(1, i);
    sum += p;
    abs_sum += std::fabs(p);
  }
  return {sum, abs_sum};
}

void host_stream_init(double* a, double* b, double* c, std::size_t n) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = stream_initial(0, i);
    b[i] = stream_initial(1, i);
    c[i] = stream_initial(2, i);
  }
}

double host_stream_run(StreamOp op, double* __restrict a, double* __restrict b, double* __restrict c, std::size_t n) {
  const double s = kStreamScalar;
  switch (op) {
    case StreamOp::Copy:
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
      return 0;
    case StreamOp::Scale:
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n; ++i) b[i] = s * c[i];
      return 0;
    case StreamOp::Add:
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
      return 0;
    case StreamOp::Triad:
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
      return 0;
    case StreamOp::Dot: {
      double sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
      for (std::size_t i = 0; i < n; ++i) sum += a[i] * b[i];
      return sum;
    }
    case StreamOp::Fill:
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n; ++i) a[i] = kFillValue;
      return 0;
  }
  return 0;
}

int host_threads() { return omp_get_max_threads(); }

}  // namespace gpubench::kernels
