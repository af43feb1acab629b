// The custom GEMM kernels without a GPU: their support matrix and skip reasons, launch shapes,
// and each kernel's index math and per-thread arithmetic (custom_gemm_tiles.hpp, the functions
// the kernels call) run on the CPU by emulating every thread of a block, checked against the
// plain C++ reference (check_gemm) on every entry.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "bench/core/plan.hpp"
#include "bench/suites/gemm/gemm.hpp"
#include "fake_suite.hpp"
#include "kernels/common/grid.hpp"
#include "kernels/gemm/custom_gemm.hpp"
#include "kernels/gemm/custom_gemm_tiles.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench {
namespace {

using kernels::CustomGemm;
using kernels::GemmPrecision;
using kernels::GemmProblem;
namespace tiles = kernels::tiles;

std::vector<std::pair<std::int64_t, std::int64_t>> every_entry(std::int64_t m, std::int64_t n) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) out.emplace_back(i, j);
  return out;
}

// Inputs as the device fill stores them (values of gemm_reference.hpp), as float.
struct HostOperands {
  std::vector<float> a, b, c;
  explicit HostOperands(const GemmProblem& p) : a(p.m * p.k), b(p.k * p.n), c(p.m * p.n) {
    for (std::int64_t l = 0; l < p.k; ++l)
      for (std::int64_t i = 0; i < p.m; ++i) a[i + l * p.m] = static_cast<float>(kernels::gemm_a(p, i, l));
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t l = 0; l < p.k; ++l) b[l + j * p.k] = static_cast<float>(kernels::gemm_b(p, l, j));
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t i = 0; i < p.m; ++i) c[i + j * p.m] = static_cast<float>(kernels::gemm_c(p, i, j));
  }
};

kernels::GemmCheckResult check_all(const GemmProblem& p, const std::vector<float>& d) {
  return kernels::check_gemm(p, every_entry(p.m, p.n), [&](std::int64_t i, std::int64_t j) {
    const double v = d[static_cast<std::size_t>(i + j * p.m)];
    return p.precision == GemmPrecision::FP32 ? v : kernels::round_to_storage(kernels::gemm_storage(p.precision), static_cast<float>(v));
  });
}

TEST(CustomGemm, LadderOrderNamesAndTilesMatchTheKernels) {
  std::vector<std::string> names;
  for (const auto& s : kernels::custom_gemm_specs()) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "tiled", "regblock", "wmma", "wgmma"}));
  EXPECT_EQ(suites::gemm::custom_variants(), (std::vector<std::string>{"naive", "tiled", "regblock", "wmma", "wgmma"}));
  EXPECT_EQ(kernels::find_custom_gemm("nope"), nullptr);

  const auto& naive = *kernels::find_custom_gemm("naive");
  EXPECT_EQ(naive.tile_m, tiles::kNaiveBlock);
  EXPECT_EQ(naive.threads, unsigned(tiles::kNaiveBlock * tiles::kNaiveBlock));
  const auto& tiled = *kernels::find_custom_gemm("tiled");
  EXPECT_EQ(tiled.tile_m, tiles::kTiledTile);
  EXPECT_EQ(tiled.threads, unsigned(tiles::kTiledTile * tiles::kTiledTile));
  const auto& rb = *kernels::find_custom_gemm("regblock");
  EXPECT_EQ(rb.tile_m, tiles::RegBlock::kBM);
  EXPECT_EQ(rb.tile_n, tiles::RegBlock::kBN);
  EXPECT_EQ(rb.tile_k, tiles::RegBlock::kBK);
  EXPECT_EQ(rb.threads, unsigned(tiles::RegBlock::kThreads));
  const auto& wm = *kernels::find_custom_gemm("wmma");
  EXPECT_EQ(wm.tile_m, tiles::Wmma::kBM);
  EXPECT_EQ(wm.tile_n, tiles::Wmma::kBN);
  EXPECT_EQ(wm.tile_k, tiles::Wmma::kBK);
  EXPECT_EQ(wm.threads, unsigned(tiles::Wmma::kThreads));
  const auto& wg = *kernels::find_custom_gemm("wgmma");
  EXPECT_EQ(wg.tile_m, tiles::Wgmma::kBM);
  EXPECT_EQ(wg.tile_n, tiles::Wgmma::kBN);
  EXPECT_EQ(wg.tile_k, tiles::Wgmma::kBK);
  EXPECT_EQ(wg.threads, unsigned(tiles::Wgmma::kThreads));
  // Shared memory: WMMA needs the opt-in above 48 KiB and fits the 99 KiB of sm_86/89/120;
  // WGMMA fits Hopper's 227 KiB.
  EXPECT_GT(tiles::Wmma::kSmemBytes, 48 * 1024);
  EXPECT_LE(tiles::Wmma::kSmemBytes, 99 * 1024);
  EXPECT_LE(tiles::Wgmma::kSmemBytes, 227 * 1024);
}

TEST(CustomGemm, SupportMatrixAndSkipReasons) {
  auto reason = [](const char* name, GemmProblem p, int major, int minor, bool built = true) {
    return kernels::custom_gemm_unsupported(*kernels::find_custom_gemm(name), p, major, minor, built);
  };
  const GemmProblem f32{4096, 4096, 4096, GemmPrecision::FP32};
  const GemmProblem f16{4096, 4096, 4096, GemmPrecision::FP16};
  const GemmProblem b16{4096, 4096, 4096, GemmPrecision::BF16};
  for (const char* simt : {"naive", "tiled", "regblock"}) {
    EXPECT_FALSE(reason(simt, f32, 8, 0)) << simt;
    EXPECT_EQ(reason(simt, f16, 8, 0), std::string("custom:") + simt + " computes fp32 only");
    EXPECT_TRUE(reason(simt, GemmProblem{64, 64, 64, GemmPrecision::FP64}, 9, 0));
    EXPECT_TRUE(reason(simt, GemmProblem{64, 64, 64, GemmPrecision::TF32}, 9, 0));
  }
  EXPECT_FALSE(reason("wmma", f16, 8, 0));
  EXPECT_FALSE(reason("wmma", b16, 12, 0));
  EXPECT_EQ(reason("wmma", f32, 8, 0), "custom:wmma computes fp16 and bf16 only");
  EXPECT_NE(reason("wmma", f16, 7, 5)->find("needs compute capability 8.0"), std::string::npos);

  EXPECT_FALSE(reason("wgmma", b16, 9, 0));
  EXPECT_NE(reason("wgmma", b16, 8, 0)->find("needs compute capability 9.0, this GPU is 8.0"), std::string::npos);
  EXPECT_NE(reason("wgmma", b16, 10, 0)->find("this GPU is 10.0"), std::string::npos);  // Blackwell has no wgmma
  EXPECT_NE(reason("wgmma", b16, 9, 0, false)->find("no sm_90a code"), std::string::npos);

  // Sizes: naive and tiled take any; the others need whole tiles.
  EXPECT_FALSE(reason("naive", GemmProblem{37, 5, 3, GemmPrecision::FP32}, 8, 0));
  EXPECT_FALSE(reason("tiled", GemmProblem{37, 5, 3, GemmPrecision::FP32}, 8, 0));
  EXPECT_EQ(reason("regblock", GemmProblem{200, 256, 64, GemmPrecision::FP32}, 8, 0),
            "custom:regblock needs m a multiple of 128, n of 128 and k of 8 (its tile; no edge handling)");
  EXPECT_TRUE(reason("wmma", GemmProblem{128, 128, 48, GemmPrecision::FP16}, 8, 0));
  EXPECT_TRUE(reason("wgmma", GemmProblem{128, 128, 64, GemmPrecision::FP16}, 9, 0));  // n must be a multiple of 256
  EXPECT_FALSE(reason("wgmma", GemmProblem{256, 256, 128, GemmPrecision::FP16}, 9, 0));
  // 32-bit indexing.
  EXPECT_NE(reason("naive", GemmProblem{65536, 65536, 16, GemmPrecision::FP32}, 8, 0)->find("2^31"), std::string::npos);
}

TEST(CustomGemm, GridsCoverTheOutput) {
  auto g = kernels::custom_gemm_grid(*kernels::find_custom_gemm("naive"), 100, 33);
  EXPECT_EQ(g.tiles_m, 7u);  // ceil(100 / 16)
  EXPECT_EQ(g.tiles_n, 3u);
  EXPECT_EQ(g.x, 21u);  // one linear grid
  g = kernels::custom_gemm_grid(*kernels::find_custom_gemm("wgmma"), 4096, 4096);
  EXPECT_EQ(g.x, 32u * 16u);
  EXPECT_EQ(g.threads, 256u);
  // Past n = 1,048,560 a 2-D grid's y (n / 16 tiles) would exceed 65535; the linear grid holds it.
  g = kernels::custom_gemm_grid(*kernels::find_custom_gemm("naive"), 16, 2000000);
  EXPECT_EQ(g.x, 125000u);
  EXPECT_LE(g.x, static_cast<unsigned>(kernels::kMaxGridX));
}

// Every block of the linear grid maps to a distinct tile, in 2-D grid order, and all tiles are covered.
TEST(CustomGemm, BlockTilesCoverEveryTileOnce) {
  for (const auto& [m, n] : std::vector<std::pair<int, int>>{{100, 33}, {16, 40000}, {1, 1}, {129, 257}}) {
    const auto g = kernels::custom_gemm_grid(*kernels::find_custom_gemm("naive"), m, n);
    std::vector<int> seen(g.x, 0);
    for (unsigned b = 0; b < g.x; ++b) {
      int tr = -1, tc = -1;
      kernels::tiles::block_tile(b, m, kernels::tiles::kNaiveBlock, tr, tc);
      ASSERT_GE(tr, 0);
      ASSERT_LT(tr, static_cast<int>(g.tiles_m));
      ASSERT_LT(tc, static_cast<int>(g.tiles_n));
      EXPECT_EQ(static_cast<unsigned>(tr) + static_cast<unsigned>(tc) * g.tiles_m, b);  // 2-D grid order
      ++seen[static_cast<std::size_t>(tr) + static_cast<std::size_t>(tc) * g.tiles_m];
    }
    for (int s : seen) EXPECT_EQ(s, 1);
  }
}

TEST(CustomGemm, NaiveAndEpilogueMatchTheReference) {
  for (double beta : {0.0, 0.5}) {
    GemmProblem p{37, 29, 41, GemmPrecision::FP32};
    p.alpha = 1.5;
    p.beta = beta;
    HostOperands x(p);
    std::vector<float> d(x.c);
    for (int j = 0; j < p.n; ++j)
      for (int i = 0; i < p.m; ++i)
        d[i + j * p.m] = tiles::epilogue(tiles::naive_dot(x.a.data(), x.b.data(), int(p.m), int(p.k), i, j), float(p.alpha),
                                         float(p.beta), x.c[i + j * p.m]);
    auto r = check_all(p, d);
    EXPECT_TRUE(r.passed) << r.detail;
  }
  // beta == 0 never reads C: a NaN there does not leak into D.
  EXPECT_EQ(tiles::epilogue(2.0f, 1.0f, 0.0f, std::nanf("")), 2.0f);
}

// Emulates tiled_gemm_kernel on sizes that are not multiples of its 32x32 tile: edge tiles load
// zeros and add nothing.
TEST(CustomGemm, TiledEmulationHandlesEdges) {
  constexpr int T = tiles::kTiledTile;
  GemmProblem p{37, 45, 70, GemmPrecision::FP32};
  HostOperands x(p);
  std::vector<float> d(p.m * p.n, NAN);
  const int m = int(p.m), n = int(p.n), k = int(p.k);
  for (int row0 = 0; row0 < m; row0 += T)
    for (int col0 = 0; col0 < n; col0 += T) {
      std::vector<float> acc(T * T, 0.0f);
      for (int k0 = 0; k0 < k; k0 += T) {
        float as[T][tiles::kTiledLd], bs[T][tiles::kTiledLd];
        for (int ty = 0; ty < T; ++ty)
          for (int tx = 0; tx < T; ++tx) tiles::tiled_load(x.a.data(), x.b.data(), m, n, k, row0, col0, k0, tx, ty, as[ty][tx], bs[ty][tx]);
        for (int ty = 0; ty < T; ++ty)
          for (int tx = 0; tx < T; ++tx) acc[tx + ty * T] = tiles::tiled_step(as, bs, tx, ty, acc[tx + ty * T]);
      }
      for (int ty = 0; ty < T; ++ty)
        for (int tx = 0; tx < T; ++tx)
          if (row0 + tx < m && col0 + ty < n) d[(row0 + tx) + (col0 + ty) * m] = tiles::epilogue(acc[tx + ty * T], 1.0f, 0.0f, 0.0f);
    }
  auto r = check_all(p, d);
  EXPECT_TRUE(r.passed) << r.detail;
}

// Emulates regblock_gemm_kernel: for every block, every k-step, the 256 threads' loads into
// as/bs and their 8x8 outer products, then the epilogue.
TEST(CustomGemm, RegisterBlockedEmulationMatchesTheReference) {
  using RB = tiles::RegBlock;
  GemmProblem p{256, 128, 24, GemmPrecision::FP32};
  HostOperands x(p);
  std::vector<float> d(x.c);
  for (int bx = 0; bx < p.m / RB::kBM; ++bx)
    for (int by = 0; by < p.n / RB::kBN; ++by) {
      std::vector<std::array<std::array<float, RB::kTN>, RB::kTM>> acc(RB::kThreads);
      for (auto& t : acc)
        for (auto& row : t) row.fill(0.0f);
      for (int k0 = 0; k0 < p.k; k0 += RB::kBK) {
        float as[RB::kBK][RB::kBM];
        float bs[RB::kBK][RB::kBN + RB::kBPad];
        std::set<std::pair<int, int>> a_seen, b_seen;
        for (int tid = 0; tid < RB::kThreads; ++tid)
          for (int e = 0; e < RB::kLoadsPerThread; ++e) {
            int r, c;
            tiles::regblock_a_load(tid, e, r, c);
            ASSERT_TRUE(a_seen.insert({r, c}).second);
            as[c][r] = x.a[(bx * RB::kBM + r) + (k0 + c) * p.m];
            tiles::regblock_b_load(tid, e, r, c);
            ASSERT_TRUE(b_seen.insert({r, c}).second);
            bs[r][c] = x.b[(k0 + r) + (by * RB::kBN + c) * p.k];
          }
        ASSERT_EQ(a_seen.size(), std::size_t(RB::kBM * RB::kBK));  // every element exactly once
        ASSERT_EQ(b_seen.size(), std::size_t(RB::kBK * RB::kBN));
        for (int tid = 0; tid < RB::kThreads; ++tid) {
          int tr, tc;
          tiles::regblock_thread_origin(tid, tr, tc);
          float (&ac)[RB::kTM][RB::kTN] = reinterpret_cast<float (&)[RB::kTM][RB::kTN]>(acc[tid]);
          for (int l = 0; l < RB::kBK; ++l) {
            float af[RB::kTM], bf[RB::kTN];
            for (int i = 0; i < RB::kTM; ++i) af[i] = as[l][tr + i];
            for (int j = 0; j < RB::kTN; ++j) bf[j] = bs[l][tc + j];
            tiles::regblock_outer_product(af, bf, ac);
          }
        }
      }
      std::set<std::pair<int, int>> out_seen;
      for (int tid = 0; tid < RB::kThreads; ++tid) {
        int tr, tc;
        tiles::regblock_thread_origin(tid, tr, tc);
        for (int i = 0; i < RB::kTM; ++i)
          for (int j = 0; j < RB::kTN; ++j) {
            ASSERT_TRUE(out_seen.insert({tr + i, tc + j}).second);
            const int gi = bx * RB::kBM + tr + i, gj = by * RB::kBN + tc + j;
            d[gi + gj * p.m] = tiles::epilogue(acc[tid][i][j], 1.0f, 0.0f, 0.0f);
          }
      }
      ASSERT_EQ(out_seen.size(), std::size_t(RB::kBM * RB::kBN));
    }
  auto r = check_all(p, d);
  EXPECT_TRUE(r.passed) << r.detail;
}

// Emulates wmma_gemm_kernel's data movement: cp.async chunks into the padded shared tiles, and
// each warp's fragment pointers (as the kernel passes them to load_matrix_sync, column-major)
// for its 4x2 16x16 fragments; the 16x16x16 MMA is a plain product in fp32.
TEST(CustomGemm, WmmaEmulationMatchesTheReference) {
  using W = tiles::Wmma;
  for (GemmPrecision prec : {GemmPrecision::FP16, GemmPrecision::BF16}) {
    GemmProblem p{256, 256, 64, prec};
    HostOperands x(p);
    std::vector<float> d(p.m * p.n);
    for (int bx = 0; bx < p.m / W::kBM; ++bx)
      for (int by = 0; by < p.n / W::kBN; ++by) {
        std::vector<float> acc(W::kBM * W::kBN, 0.0f);  // block tile, column-major
        for (int k0 = 0; k0 < p.k; k0 += W::kBK) {
          std::vector<float> as(W::kAStageElems, NAN), bs(W::kBStageElems, NAN);
          for (int tid = 0; tid < W::kThreads; ++tid) {
            for (int e = 0; e < W::kAChunksPerThread; ++e) {
              int r, c;
              tiles::wmma_a_chunk(tid, e, r, c);
              for (int q = 0; q < W::kChunk; ++q) as[c * W::kALd + r + q] = x.a[(bx * W::kBM + r + q) + (k0 + c) * p.m];
            }
            for (int e = 0; e < W::kBChunksPerThread; ++e) {
              int r, c;
              tiles::wmma_b_chunk(tid, e, r, c);
              for (int q = 0; q < W::kChunk; ++q) bs[c * W::kBLd + r + q] = x.b[(k0 + r + q) + (by * W::kBN + c) * p.k];
            }
          }
          for (int warp = 0; warp < W::kThreads / 32; ++warp) {
            int wr, wc;
            tiles::wmma_warp_origin(warp, wr, wc);
            for (int kk = 0; kk < W::kBK; kk += 16)
              for (int i = 0; i < W::kFragsM; ++i)
                for (int j = 0; j < W::kFragsN; ++j) {
                  const float* fa = &as[kk * W::kALd + wr + i * 16];       // col-major, ld kALd
                  const float* fb = &bs[(wc + j * 16) * W::kBLd + kk];     // col-major, ld kBLd
                  for (int cc = 0; cc < 16; ++cc)
                    for (int rr = 0; rr < 16; ++rr) {
                      float s = 0;
                      for (int l = 0; l < 16; ++l) s += fa[rr + l * W::kALd] * fb[l + cc * W::kBLd];
                      acc[(wr + i * 16 + rr) + (wc + j * 16 + cc) * W::kBM] += s;
                    }
                }
          }
        }
        for (int c = 0; c < W::kBN; ++c)
          for (int r = 0; r < W::kBM; ++r) d[(bx * W::kBM + r) + (by * W::kBN + c) * p.m] = acc[r + c * W::kBM];
      }
    auto r = check_all(p, d);  // a NaN (an unloaded shared element) or a misplaced tile fails
    EXPECT_TRUE(r.passed) << r.detail;
  }
  // The 8 warps' 64x64 tiles cover the 128x256 block tile exactly.
  std::set<std::pair<int, int>> origins;
  for (int w = 0; w < 8; ++w) {
    int r, c;
    tiles::wmma_warp_origin(w, r, c);
    origins.insert({r, c});
  }
  EXPECT_EQ(origins, (std::set<std::pair<int, int>>{{0, 0}, {64, 0}, {0, 64}, {64, 64}, {0, 128}, {64, 128}, {0, 192}, {64, 192}}));
}

TEST(CustomGemm, WgmmaAccumulatorLayoutCoversTheWarpgroupTile) {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < tiles::Wgmma::kAccPerThread; ++r) {
      int row, col;
      tiles::wgmma_acc_coord(t, r, row, col);
      ASSERT_GE(row, 0);
      ASSERT_LT(row, 64);
      ASSERT_LT(col, tiles::Wgmma::kBN);
      ASSERT_TRUE(seen.insert({row, col}).second);
    }
  EXPECT_EQ(seen.size(), std::size_t(64 * tiles::Wgmma::kBN));
  // PTX ISA figure for .m64nNk16 D: thread 0 holds (0,0) (0,1) (8,0) (8,1); thread 5 starts at row 1, column 2.
  int row, col;
  tiles::wgmma_acc_coord(0, 2, row, col);
  EXPECT_EQ(std::make_pair(row, col), std::make_pair(8, 0));
  tiles::wgmma_acc_coord(5, 0, row, col);
  EXPECT_EQ(std::make_pair(row, col), std::make_pair(1, 2));
  tiles::wgmma_acc_coord(32, 4, row, col);  // warp 1, second 8-column slice
  EXPECT_EQ(std::make_pair(row, col), std::make_pair(16, 8));
}

TEST(CustomGemm, WgmmaDescriptorEncoding) {
  // PTX ISA "Matrix Descriptor Format": fields are (x & 0x3FFFF) >> 4; its K-major no-swizzle
  // tf32 example has LBO 256 bytes -> 16 and SBO 128 bytes -> 8.
  const std::uint64_t d = tiles::wgmma_descriptor(0x1400, 256, 128, 0);
  EXPECT_EQ(d & 0x3FFF, 0x140u);
  EXPECT_EQ((d >> 16) & 0x3FFF, 16u);
  EXPECT_EQ((d >> 32) & 0x3FFF, 8u);
  EXPECT_EQ(d >> 62, 0u);
  EXPECT_EQ(tiles::wgmma_descriptor(0, 16, 1024, 1) >> 62, 1u);  // 128-byte swizzle
}

// The shared-memory address wgmma reads for each operand element (PTX ISA canonical layouts for
// 128-byte swizzle, with the kernel's descriptor strides and per-k-step start offsets) must be
// where TMA wrote that element (box rows of 128 bytes, swizzled within 1024-byte atoms).
TEST(CustomGemm, WgmmaDescriptorsReadWhereTmaWrote) {
  using W = tiles::Wgmma;
  auto swz = [](std::uint32_t off) { return off ^ (((off >> 7) & 7u) << 4); };
  // A, M-major: ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO)), T = 8 elements of 2 bytes.
  for (int half = 0; half < 2; ++half)
    for (int kk = 0; kk < W::kBK / W::kInstK; ++kk)
      for (int m = 0; m < W::kWgM; ++m)
        for (int kl = 0; kl < W::kInstK; ++kl) {
          const std::uint32_t start = half * W::kALbo + kk * W::kAKStep;
          const std::uint32_t read = swz(start + (m % 64) * 2 + (m / 64) * W::kALbo + (kl % 8) * 128 + (kl / 8) * W::kASbo);
          const int k = kk * W::kInstK + kl, row = half * W::kBoxA + m;  // element A(row, k) of the stage
          const std::uint32_t written = (row / W::kBoxA) * (W::kBoxA * W::kBK * 2) + swz(k * 128 + (row % W::kBoxA) * 2);
          ASSERT_EQ(read, written) << "A m=" << row << " k=" << k;
        }
  // B, K-major: ((8,n),(T,2k)) : ((8T,SBO),(1,T)).
  for (int kk = 0; kk < W::kBK / W::kInstK; ++kk)
    for (int n = 0; n < W::kBN; ++n)
      for (int kl = 0; kl < W::kInstK; ++kl) {
        const std::uint32_t read = swz(kk * W::kBKStep + (n % 8) * 128 + (n / 8) * W::kBSbo + kl * 2);
        const std::uint32_t written = swz(n * 128 + (kk * W::kInstK + kl) * 2);
        ASSERT_EQ(read, written) << "B n=" << n << " k=" << kk * W::kInstK + kl;
      }
}

TEST(CustomGemm, SuiteSkipsWithReasonsAndDropsGpuProvidersOnTheCpu) {
  auto suite = suites::gemm::make_suite();
  PlanRequest r;
  r.axis_overrides = {"m=256", "dtype=fp32,bf16", "provider=cublas,custom:regblock,custom:wmma,custom:wgmma"};
  DeviceInfo a100 = testing::fake_gpu(0);
  a100.cc_major = 8;
  a100.cc_minor = 0;
  auto plan = make_plan({suite.get()}, r, {a100, testing::fake_cpu()});
  ASSERT_EQ(plan.size(), 8u);  // GPU only: the CPU has no GPU providers
  std::map<std::string, std::string> skips;
  for (const PlannedCase& c : plan) {
    EXPECT_TRUE(c.device.is_cuda());
    if (c.skip_reason) skips[c.point.text("provider") + "/" + c.point.text("dtype")] = *c.skip_reason;
  }
  EXPECT_EQ(skips.size(), 4u);
  EXPECT_EQ(skips["custom:regblock/bf16"], "custom:regblock computes fp32 only");
  EXPECT_EQ(skips["custom:wmma/fp32"], "custom:wmma computes fp16 and bf16 only");
  EXPECT_NE(skips["custom:wgmma/bf16"].find("needs compute capability 9.0"), std::string::npos);
  EXPECT_FALSE(skips.count("custom:wmma/bf16"));
  EXPECT_FALSE(suites::gemm::custom_unsupported(a100, GemmProblem{256, 256, 256, GemmPrecision::BF16}, "wmma"));
  EXPECT_EQ(*suites::gemm::custom_unsupported(testing::fake_cpu(), GemmProblem{256, 256, 256, GemmPrecision::FP32}, "naive"),
            "custom:naive runs on CUDA devices only");
  EXPECT_NE(suites::gemm::custom_unsupported(a100, GemmProblem{}, "fastest")->find("known: naive, tiled"), std::string::npos);
}

nlohmann::ordered_json entry(const std::string& device, const std::string& provider, std::int64_t m, const std::string& dtype,
                             double tflops, const std::string& status = "ok") {
  nlohmann::ordered_json e;
  e["run_type"] = "iteration";
  e["gpubench"]["suite"] = "gemm";
  e["gpubench"]["device"] = device;
  e["gpubench"]["axes"] = {{"m", m}, {"n", m}, {"k", m}, {"dtype", dtype}, {"provider", provider}};
  e["gpubench"]["status"] = status;
  if (status == "ok") e["gpubench"]["metrics"] = {{"tflops", tflops}};
  return e;
}

TEST(CustomGemm, SummaryGivesPercentOfCublasOnTheSameCase) {
  std::vector<nlohmann::ordered_json> entries = {
      entry("cuda:0", "cublas", 4096, "fp16", 600.0),
      entry("cuda:0", "custom:wmma", 4096, "fp16", 330.0),
      entry("cuda:0", "custom:wgmma", 4096, "fp16", 480.0),
      entry("cuda:0", "custom:wmma", 4096, "bf16", 300.0),   // no cuBLAS bf16 case: no row
      entry("cuda:1", "custom:wmma", 4096, "fp16", 300.0),   // other device: no row
      entry("cuda:0", "custom:naive", 4096, "fp32", 0, "skipped"),
  };
  auto s = suites::gemm::summarize_custom_vs_cublas(entries);
  ASSERT_TRUE(s.contains("custom_vs_cublas"));
  const auto& rows = s["custom_vs_cublas"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["provider"], "custom:wmma");
  EXPECT_DOUBLE_EQ(rows[0]["pct_of_cublas"].get<double>(), 55.0);
  EXPECT_DOUBLE_EQ(rows[0]["cublas_tflops"].get<double>(), 600.0);
  EXPECT_FALSE(rows[0]["axes"].contains("provider"));
  EXPECT_DOUBLE_EQ(rows[1]["pct_of_cublas"].get<double>(), 80.0);
  // Nothing to compare: no summary at all.
  EXPECT_TRUE(suites::gemm::summarize_custom_vs_cublas({entry("cuda:0", "cublas", 64, "fp32", 1.0)}).empty());
}

}  // namespace
}  // namespace gpubench
