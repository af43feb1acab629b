#pragma once
// Launch-grid arithmetic shared by the kernels: CUDA limits gridDim.x to 2^31 - 1 and gridDim.y
// and gridDim.z to 65535 (CUDA C++ Programming Guide, "Compute Capabilities", technical
// specifications). A grid computed as ceil(items / per_block) exceeds those limits at large
// sizes (y = ceil(rows / 256) past 16.7M rows; a GEMM's n / 16 tiles past n = 1,048,560), and
// the launch then fails. Every kernel therefore loops over its blocks' work with a stride of
// the grid it was given (grid-stride), and its launch caps the grid with these helpers. Plain
// C++ (host and device), unit-tested on the CPU (tests/unit/test_grid.cpp).
#include <cstdint>

#include "kernels/common/random.hpp"  // GPUBENCH_HD

namespace gpubench::kernels {

inline constexpr std::int64_t kMaxGridX = 2147483647;
inline constexpr std::int64_t kMaxGridYZ = 65535;

// ceil(n / per), 0 for n <= 0.
GPUBENCH_HD inline std::int64_t blocks_for(std::int64_t n, std::int64_t per) { return n <= 0 ? 0 : (n + per - 1) / per; }

// Blocks for `n` units of work (items, rows, tiles) at `per` units per block, at least 1 and at
// most `cap`: the kernel strides by gridDim over the rest.
GPUBENCH_HD inline unsigned capped_grid(std::int64_t n, std::int64_t per, std::int64_t cap) {
  const std::int64_t b = blocks_for(n, per);
  return static_cast<unsigned>(b < 1 ? 1 : b > cap ? cap : b);
}

// Column reductions (a bias or layernorm gradient): each block sums a slice of rows for its
// columns, one slice per blockIdx.y. Slices of at least `min_rows` rows, and as many more as
// keep the slice count within gridDim.y's limit.
struct RowSlices {
  std::int64_t rows_per = 1;
  unsigned slices = 1;
};
GPUBENCH_HD inline RowSlices row_slices(std::int64_t rows, std::int64_t min_rows) {
  RowSlices s;
  s.rows_per = min_rows < 1 ? 1 : min_rows;
  const std::int64_t needed = blocks_for(rows, kMaxGridYZ);  // rows per slice for at most 65535 slices
  if (needed > s.rows_per) s.rows_per = needed;
  const std::int64_t n = blocks_for(rows, s.rows_per);
  s.slices = static_cast<unsigned>(n < 1 ? 1 : n);
  return s;
}

}  // namespace gpubench::kernels
