// Launch-grid arithmetic (kernels/common/grid.hpp): grids within CUDA's limits at any size,
// and covering all of the work.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/common/grid.hpp"

namespace gpubench::kernels {
namespace {

TEST(Grid, BlocksForIsCeil) {
  EXPECT_EQ(blocks_for(0, 256), 0);
  EXPECT_EQ(blocks_for(-5, 256), 0);
  EXPECT_EQ(blocks_for(1, 256), 1);
  EXPECT_EQ(blocks_for(256, 256), 1);
  EXPECT_EQ(blocks_for(257, 256), 2);
}

TEST(Grid, CappedGridStaysWithinTheLimitAndAtLeastOne) {
  EXPECT_EQ(capped_grid(0, 256, kMaxGridYZ), 1u);  // a launch needs one block; the loop does nothing
  EXPECT_EQ(capped_grid(1000, 256, kMaxGridYZ), 4u);
  EXPECT_EQ(capped_grid(std::int64_t{1} << 40, 256, kMaxGridYZ), 65535u);
  EXPECT_EQ(capped_grid(std::int64_t{1} << 40, 1, kMaxGridX), 2147483647u);
  // The training kernels' one block per row: past 2^31 - 1 rows the blocks stride.
  EXPECT_EQ(capped_grid(std::int64_t{3} << 31, 1, kMaxGridX), static_cast<unsigned>(kMaxGridX));
}

// The layernorm/bias gradient's slices: gridDim.y = ceil(rows / 256) was 65,536 at 16,776,961
// rows (a launch error where the largest-micro-batch search expected "does not fit").
TEST(Grid, RowSlicesFitGridYAndCoverEveryRow) {
  for (std::int64_t rows : {std::int64_t{1}, std::int64_t{255}, std::int64_t{256}, std::int64_t{257},
                            std::int64_t{65535} * 256, std::int64_t{65535} * 256 + 1, std::int64_t{16777216},
                            std::int64_t{1} << 31, (std::int64_t{1} << 40) + 12345}) {
    const RowSlices s = row_slices(rows, 256);
    EXPECT_GE(s.rows_per, 256) << rows;
    EXPECT_GE(s.slices, 1u) << rows;
    EXPECT_LE(static_cast<std::int64_t>(s.slices), kMaxGridYZ) << rows;
    // Slice y covers rows [y * rows_per, min(rows, (y + 1) * rows_per)): all rows, no empty slice.
    EXPECT_GE(static_cast<std::int64_t>(s.slices) * s.rows_per, rows) << rows;
    EXPECT_LT(static_cast<std::int64_t>(s.slices - 1) * s.rows_per, rows) << rows;
  }
  EXPECT_EQ(row_slices(1000, 256).rows_per, 256);  // small sizes keep the 256-row slices
  EXPECT_EQ(row_slices(1000, 256).slices, 4u);
  EXPECT_EQ(row_slices(16777216, 256).rows_per, 257);  // ceil(2^24 / 65535)
  EXPECT_EQ(row_slices(16777216, 256).slices, 65281u);
  EXPECT_EQ(row_slices(0, 256).slices, 1u);
}

}  // namespace
}  // namespace gpubench::kernels
