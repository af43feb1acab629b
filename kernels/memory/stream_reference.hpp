#pragma once
// The bandwidth kernels (BabelStream's five operations plus a write-only fill), their byte
// accounting and their plain C++ reference. Shared by the GPU kernels (stream.cu), the CPU
// implementation (stream_host.cpp) and the tests.
//
// Three arrays a, b, c of n doubles; s = kStreamScalar.
//   copy  c[i] = a[i]          reads a,   writes c    2 n * 8 bytes
//   scale b[i] = s * c[i]      reads c,   writes b    2 n * 8 bytes
//   add   c[i] = a[i] + b[i]   reads a b, writes c    3 n * 8 bytes
//   triad a[i] = b[i] + s c[i] reads b c, writes a    3 n * 8 bytes
//   dot   sum a[i] * b[i]      reads a b              2 n * 8 bytes (per-block partials ignored)
//   fill  a[i] = kFillValue    writes a               1 n * 8 bytes
// Each operation alone is idempotent (it never reads what it writes), so repeated runs leave
// the same answer and one reference value per index checks any number of runs. Bytes count
// what the program asks for (read + written), as BabelStream and STREAM count them; a cache
// that allocates on write may move more.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gpubench::kernels {

enum class StreamOp { Copy, Scale, Add, Triad, Dot, Fill };

inline constexpr double kStreamScalar = 0.4;
inline constexpr double kFillValue = 0.5;
inline constexpr std::uint64_t kStreamSeed[3] = {0x5151, 0x5252, 0x5353};  // a, b, c

std::optional<StreamOp> parse_stream_op(const std::string& name);
const char* stream_op_name(StreamOp op);

struct StreamTraffic {
  int reads = 0;   // arrays read per element
  int writes = 0;  // arrays written per element
};
StreamTraffic stream_traffic(StreamOp op);
// Bytes one run moves over arrays of `bytes_per_array` bytes each.
double stream_bytes(StreamOp op, double bytes_per_array);

// Initial value of array 0 (a), 1 (b) or 2 (c) at index i: random in [-1, 1).
double stream_initial(int array, std::size_t i);
// Which array an element-wise operation writes (0 a, 1 b, 2 c); -1 for dot.
int stream_output(StreamOp op);
// The value the written array holds at i after a run (from the initial values); not for dot.
double stream_expected(StreamOp op, std::size_t i);
// The dot product of the initial a and b over n elements, and the sum of |a_i b_i| (for the
// tolerance). Computed from the generator, without the arrays.
struct DotReference {
  double value = 0;
  double abs_sum = 0;
};
DotReference stream_dot_reference(std::size_t n);

// CPU implementation over every thread of HostPool::shared() (static slices; the first touch
// in init uses the same slices).
void host_stream_init(double* a, double* b, double* c, std::size_t n);
// Returns the dot product for StreamOp::Dot, 0 otherwise.
double host_stream_run(StreamOp op, double* a, double* b, double* c, std::size_t n);
int host_threads();  // threads of the shared host pool

}  // namespace gpubench::kernels
