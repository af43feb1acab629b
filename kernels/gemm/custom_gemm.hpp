#pragma once
// gpubench's own GEMM kernels, a ladder from the textbook loop to Hopper's asynchronous Tensor
// Cores, each rung adding one idea (README "Our GEMM kernels"). All compute the suite's
// problem D = alpha * A * B + beta * C, column-major, no transposes (NN), C read from D in
// place (and not read at all when beta == 0, as in BLAS).
//
// This header is host-only: the support matrix and launch shapes the suite and the unit tests
// use without a GPU. The kernels are declared in one .cuh per rung.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/float_formats.hpp"
#include "kernels/gemm/gemm_reference.hpp"

namespace gpubench::kernels {

enum class CustomGemm { Naive, Tiled, RegBlock, Wmma, Wgmma };

struct CustomGemmSpec {
  CustomGemm id;
  const char* name;  // the variant in `provider=custom:<name>`
  // Output tile of one thread block, and the k step of its main loop. The tiled and naive
  // kernels handle any size; the others need m, n, k multiples of these (checked below).
  int tile_m, tile_n, tile_k;
  bool any_size;
  unsigned threads;          // per block
  bool fp32_inputs;          // fp32 in, fp32 accumulate, fp32 out
  bool half_inputs;          // fp16 and bf16 in, fp32 accumulate, fp16/bf16 out
  int min_cc_major;          // oldest GPU it runs on
  bool needs_sm90a;          // Hopper-only instructions (wgmma, TMA): compute capability 9.0 exactly
  const char* idea;          // what this rung adds over the previous one
};

const std::vector<CustomGemmSpec>& custom_gemm_specs();
// nullptr when `name` is not a variant.
const CustomGemmSpec* find_custom_gemm(std::string_view name);

// Why `spec` cannot compute `problem` on a GPU of compute capability cc_major.cc_minor, or
// nullopt. `sm90a_built`: whether this binary carries sm_90a code for the Hopper kernel.
std::optional<std::string> custom_gemm_unsupported(const CustomGemmSpec& spec, const GemmProblem& problem, int cc_major,
                                                   int cc_minor, bool sm90a_built);

// A launch: a linear grid of x = tiles_m * tiles_n blocks (block b computes tile
// (b % tiles_m, b / tiles_m), tiles::block_tile), block of spec.threads. Linear because
// gridDim.y stops at 65535 (n / 16 tiles past n = 1,048,560); gridDim.x (2^31 - 1) holds every
// problem custom_gemm_unsupported accepts (m * n < 2^31).
struct CustomGemmGrid {
  unsigned x = 0, threads = 0;
  unsigned tiles_m = 0, tiles_n = 0;
};
CustomGemmGrid custom_gemm_grid(const CustomGemmSpec& spec, std::int64_t m, std::int64_t n);

// What a launch needs: column-major A (m x k), B (k x n) and D (m x n) stored as `storage`
// (F32 or F16/BF16), leading dimensions m, k and m. D holds C on entry.
struct CustomGemmArgs {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  float alpha = 1, beta = 0;
  Storage storage = Storage::F32;
};

}  // namespace gpubench::kernels
