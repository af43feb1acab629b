#pragma once
// The index math and per-thread arithmetic of the custom GEMM kernels as host/device
// functions: the kernels call them on the GPU, and tests/unit/test_custom_gemm.cpp runs the
// same functions on the CPU, emulating every thread of a block, to check that each kernel's
// loads cover its tiles exactly once and that its arithmetic gives the product.
// Column-major everywhere: A(i, l) is a[i + l * m], B(l, j) is b[l + j * k], D(i, j) is d[i + j * m].
#include <cstdint>

#include "kernels/common/random.hpp"  // GPUBENCH_HD

namespace gpubench::kernels::tiles {

// D(i, j) = alpha * acc + beta * C(i, j); C is not read when beta == 0 (BLAS semantics).
GPUBENCH_HD inline float epilogue(float acc, float alpha, float beta, float c) {
  return beta == 0.0f ? alpha * acc : alpha * acc + beta * c;
}

// Block `block` of a custom GEMM launch computes output tile (tile_row, tile_col): the grid is
// linear (custom_gemm_grid), numbered as a 2-D grid of tiles_m x tiles_n blocks would be (row
// tiles fastest), so the blocks run in the same order, without gridDim.y's limit of 65535.
GPUBENCH_HD inline void block_tile(unsigned block, int m, int tile_m, int& tile_row, int& tile_col) {
  const unsigned tiles_m = static_cast<unsigned>((m + tile_m - 1) / tile_m);
  tile_row = static_cast<int>(block % tiles_m);
  tile_col = static_cast<int>(block / tiles_m);
}

// ---- naive: one thread per D(i, j), a k-long dot product -----------------------------------
constexpr int kNaiveBlock = 16;  // 16x16 threads; threadIdx.x walks i so warps read A coalesced

GPUBENCH_HD inline float naive_dot(const float* a, const float* b, int m, int k, int i, int j) {
  float acc = 0.0f;
  for (int l = 0; l < k; ++l) acc += a[i + static_cast<std::int64_t>(l) * m] * b[l + static_cast<std::int64_t>(j) * k];
  return acc;
}

// ---- tiled: 32x32 threads, 32x32 tiles of A and B in shared memory -------------------------
constexpr int kTiledTile = 32;
constexpr int kTiledLd = kTiledTile + 1;  // +1: the bs[ty][l] walk of a warp is conflict-free
// Thread (tx, ty) loads A(row0 + tx, k0 + ty) into as[ty][tx] and B(k0 + tx, col0 + ty) into
// bs[ty][tx] (consecutive tx read consecutive addresses). Out-of-range elements load as 0, so
// edge tiles of any m, n, k add nothing.
GPUBENCH_HD inline void tiled_load(const float* a, const float* b, int m, int n, int k, int row0, int col0, int k0, int tx,
                                   int ty, float& a_val, float& b_val) {
  const int i = row0 + tx, ak = k0 + ty, bk = k0 + tx, bj = col0 + ty;
  a_val = (i < m && ak < k) ? a[i + static_cast<std::int64_t>(ak) * m] : 0.0f;
  b_val = (bk < k && bj < n) ? b[bk + static_cast<std::int64_t>(bj) * k] : 0.0f;
}
// Then sum_l as[l][tx] * bs[ty][l]: thread (tx, ty)'s share of D(row0 + tx, col0 + ty).
GPUBENCH_HD inline float tiled_step(const float (*as)[kTiledLd], const float (*bs)[kTiledLd], int tx, int ty, float acc) {
  for (int l = 0; l < kTiledTile; ++l) acc += as[l][tx] * bs[ty][l];
  return acc;
}

// ---- register-blocked: 128x128 block tile, 8 k per step, 256 threads of 8x8 outputs --------
struct RegBlock {
  static constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8, kThreads = 256;
  static constexpr int kBPad = 4;  // bs rows of kBN + 4 floats: the k-contiguous B loads hit 32 banks
  static constexpr int kLoadsPerThread = kBM * kBK / kThreads;  // 4 of A and 4 of B
};

// Element `e` (0..3) of thread `tid`'s share of the A tile (kBM x kBK): row r, column c.
// Consecutive threads take consecutive rows: coalesced reads of column-major A.
GPUBENCH_HD inline void regblock_a_load(int tid, int e, int& r, int& c) {
  const int linear = tid + e * RegBlock::kThreads;
  r = linear % RegBlock::kBM;
  c = linear / RegBlock::kBM;
}
// The same for the B tile (kBK x kBN): row r (along k, contiguous in memory), column c.
GPUBENCH_HD inline void regblock_b_load(int tid, int e, int& r, int& c) {
  const int linear = tid + e * RegBlock::kThreads;
  r = linear % RegBlock::kBK;
  c = linear / RegBlock::kBK;
}
// First row and column of thread `tid`'s 8x8 output block inside the 128x128 tile.
GPUBENCH_HD inline void regblock_thread_origin(int tid, int& row, int& col) {
  row = (tid % (RegBlock::kBM / RegBlock::kTM)) * RegBlock::kTM;
  col = (tid / (RegBlock::kBM / RegBlock::kTM)) * RegBlock::kTN;
}
// acc += a_frag (column) x b_frag (row): kTM * kTN FMAs from kTM + kTN loaded values.
GPUBENCH_HD inline void regblock_outer_product(const float (&a)[RegBlock::kTM], const float (&b)[RegBlock::kTN],
                                               float (&acc)[RegBlock::kTM][RegBlock::kTN]) {
  for (int i = 0; i < RegBlock::kTM; ++i)
    for (int j = 0; j < RegBlock::kTN; ++j) acc[i][j] += a[i] * b[j];
}

// ---- WMMA: 128x256x32 block tile, 8 warps of 64x64, 16x16x16 fragments ----------------------
struct Wmma {
  static constexpr int kBM = 128, kBN = 256, kBK = 32, kStages = 3, kThreads = 256;
  static constexpr int kWarpM = 64, kWarpN = 64;          // 2 x 4 warps
  static constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 16;
  static constexpr int kPad = 8;                           // 16 bytes: keeps cp.async and wmma alignment
  static constexpr int kALd = kBM + kPad;                  // as[k][m]: column-major A tile
  static constexpr int kBLd = kBK + kPad;                  // bs[n][k]: column-major B tile
  static constexpr int kAStageElems = kBK * kALd, kBStageElems = kBN * kBLd;
  static constexpr int kChunk = 8;                         // 16-bit elements per 16-byte cp.async
  static constexpr int kAChunksPerThread = kBM * kBK / kChunk / kThreads;  // 2
  static constexpr int kBChunksPerThread = kBK * kBN / kChunk / kThreads;  // 4
  static constexpr int kSmemBytes = kStages * (kAStageElems + kBStageElems) * 2;
};
// 16-byte chunk `e` of thread `tid` in the A tile (kBM x kBK): 8 rows from r, column c.
GPUBENCH_HD inline void wmma_a_chunk(int tid, int e, int& r, int& c) {
  const int linear = tid + e * Wmma::kThreads;
  r = (linear % (Wmma::kBM / Wmma::kChunk)) * Wmma::kChunk;
  c = linear / (Wmma::kBM / Wmma::kChunk);
}
// The same in the B tile (kBK x kBN): 8 k from r, column c.
GPUBENCH_HD inline void wmma_b_chunk(int tid, int e, int& r, int& c) {
  const int linear = tid + e * Wmma::kThreads;
  r = (linear % (Wmma::kBK / Wmma::kChunk)) * Wmma::kChunk;
  c = linear / (Wmma::kBK / Wmma::kChunk);
}
// First row and column of warp `warp`'s 64x64 output tile.
GPUBENCH_HD inline void wmma_warp_origin(int warp, int& row, int& col) {
  row = (warp % (Wmma::kBM / Wmma::kWarpM)) * Wmma::kWarpM;
  col = (warp / (Wmma::kBM / Wmma::kWarpM)) * Wmma::kWarpN;
}

// ---- WGMMA (Hopper): 128x256x64 block tile, 2 consumer warpgroups of 64x256 ------------------
struct Wgmma {
  static constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kThreads = 256;
  static constexpr int kWgM = 64;                                  // rows per warpgroup
  static constexpr int kInstK = 16;                                // k of one wgmma.m64n256k16
  static constexpr int kBoxA = 64;                                 // TMA box: 64 m x 64 k (128 B rows)
  static constexpr int kAStageBytes = kBM * kBK * 2, kBStageBytes = kBN * kBK * 2;
  static constexpr int kStageBytes = kAStageBytes + kBStageBytes;  // 48 KiB
  static constexpr int kAccPerThread = kWgM * kBN / 128;           // 128 fp32 registers
  static constexpr int kOutLd = kBM + 4;                           // epilogue staging: out[col][row]
  static constexpr int kSmemBytes = kStages * kStageBytes + 1024 /* alignment */ + 64 /* barriers */;
  // wgmma descriptors (see wgmma_gemm.cu). A, M-major: SBO = next 8 k-rows, LBO = next 64 m
  // (the other half's box); a k-step of 16 moves 16 rows of 128 bytes. B, K-major: SBO = next 8
  // n-rows, LBO unused ("assumed 1", i.e. 16 bytes); a k-step moves 16 elements in the row.
  static constexpr unsigned kASbo = 1024, kALbo = kAStageBytes / 2, kAKStep = kInstK * 128;
  static constexpr unsigned kBSbo = 1024, kBLbo = 16, kBKStep = kInstK * 2;
  static constexpr unsigned kSwizzle128 = 1;  // descriptor swizzle mode: 128-byte
  static_assert(kBN * kOutLd * 4 <= kStages * kStageBytes, "the epilogue tile fits in the stage ring");
};

// Accumulator register `r` (0..127) of thread `t` (0..127) of a warpgroup after
// wgmma.m64nNk16 with fp32 D (PTX ISA, "Matrix fragments for wgmma .m64nNk16", accumulator D):
// each 8-column slice holds 4 registers per thread, rows lane/4 and lane/4 + 8 of the warp's
// 16 rows, columns 2 * (lane % 4) and the next.
GPUBENCH_HD inline void wgmma_acc_coord(int t, int r, int& row, int& col) {
  const int warp = t / 32, lane = t % 32;
  row = warp * 16 + lane / 4 + 8 * ((r / 2) % 2);
  col = (r / 4) * 8 + (lane % 4) * 2 + (r % 2);
}

// Shared-memory matrix descriptor of wgmma (PTX ISA, "Matrix Descriptor Format"): start address,
// leading and stride byte offsets, each encoded as (x & 0x3FFFF) >> 4, and the swizzle mode in
// bits 62-63 (1 = 128-byte swizzle).
GPUBENCH_HD inline std::uint64_t wgmma_descriptor_field(std::uint32_t x) {
  return static_cast<std::uint64_t>((x & 0x3FFFF) >> 4);
}
GPUBENCH_HD inline std::uint64_t wgmma_descriptor(std::uint32_t smem_addr, std::uint32_t leading_bytes,
                                                  std::uint32_t stride_bytes, std::uint32_t swizzle_mode) {
  return wgmma_descriptor_field(smem_addr) | (wgmma_descriptor_field(leading_bytes) << 16) |
         (wgmma_descriptor_field(stride_bytes) << 32) | (static_cast<std::uint64_t>(swizzle_mode & 3) << 62);
}

// The 128-byte swizzle TMA applies and wgmma expects (CU_TENSOR_MAP_SWIZZLE_128B, Swizzle<3,4,3>
// in CuTe terms): inside each 1024-byte atom of eight 128-byte rows, 16-byte chunk c of row r
// lands at chunk c ^ (r % 8). Returns the swizzled byte offset of `offset` in a 1024-aligned tile.
GPUBENCH_HD inline std::uint32_t swizzle128(std::uint32_t offset) {
  return offset ^ (((offset >> 7) & 7u) << 4);
}

}  // namespace gpubench::kernels::tiles
