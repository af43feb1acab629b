#include "kernels/gemm/custom_gemm.hpp"

#include <limits>
#include <sstream>

namespace gpubench::kernels {

const std::vector<CustomGemmSpec>& custom_gemm_specs() {
  // Tile sizes are those of the kernels (naive_gemm.cu ... wgmma_gemm.cu); a unit test checks
  // them against the constants the kernels use.
  static const std::vector<CustomGemmSpec> specs = {
      {CustomGemm::Naive, "naive", 16, 16, 1, true, 256, true, false, 8, false,
       "one thread per output entry, operands read from global memory (L1/L2) for every product"},
      {CustomGemm::Tiled, "tiled", 32, 32, 32, true, 1024, true, false, 8, false,
       "32x32 tiles of A and B staged in shared memory: each global element is read once per tile, "
       "not once per product (32x less global traffic)"},
      {CustomGemm::RegBlock, "regblock", 128, 128, 8, false, 256, true, false, 8, false,
       "each thread computes an 8x8 block of outputs from registers: 16 shared-memory loads feed "
       "64 FMAs (outer product), so the FMA units, not shared memory, set the pace"},
      {CustomGemm::Wmma, "wmma", 128, 256, 32, false, 256, false, true, 8, false,
       "Tensor Cores through nvcuda::wmma (16x16x16 fp16/bf16 MMAs, fp32 accumulate), 64x64 per "
       "warp, tiles copied with cp.async into a 3-stage shared-memory ring so loads overlap the math"},
      {CustomGemm::Wgmma, "wgmma", 128, 256, 64, false, 256, false, true, 9, true,
       "Hopper: TMA copies 128-byte-swizzled tiles into a 4-stage ring under mbarriers, and "
       "asynchronous warpgroup MMAs (wgmma, 64x256x16) read them straight from shared memory"},
  };
  return specs;
}

const CustomGemmSpec* find_custom_gemm(std::string_view name) {
  for (const CustomGemmSpec& s : custom_gemm_specs())
    if (name == s.name) return &s;
  return nullptr;
}

std::optional<std::string> custom_gemm_unsupported(const CustomGemmSpec& spec, const GemmProblem& p, int cc_major,
                                                   int cc_minor, bool sm90a_built) {
  const std::string who = std::string("custom:") + spec.name;
  const bool fp32 = p.precision == GemmPrecision::FP32;
  const bool half = p.precision == GemmPrecision::FP16 || p.precision == GemmPrecision::BF16;
  if (!((fp32 && spec.fp32_inputs) || (half && spec.half_inputs))) {
    return who + (spec.fp32_inputs ? " computes fp32 only" : " computes fp16 and bf16 only");
  }
  if (spec.needs_sm90a) {
    if (cc_major != 9 || cc_minor != 0) {
      std::ostringstream os;
      os << who << " uses Hopper-only wgmma and TMA (sm_90a): needs compute capability 9.0, this GPU is " << cc_major
         << "." << cc_minor;
      return os.str();
    }
    if (!sm90a_built) {
      return who + ": this binary has no sm_90a code (built without a 90 architecture or with a CUDA toolkit "
                   "older than 12.0)";
    }
  } else if (cc_major < spec.min_cc_major) {
    std::ostringstream os;
    os << who << " needs compute capability " << spec.min_cc_major << ".0 or newer";
    return os.str();
  }
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (p.m > kIntMax || p.n > kIntMax || p.k > kIntMax || p.m * p.k > kIntMax || p.k * p.n > kIntMax ||
      p.m * p.n > kIntMax) {
    return who + " indexes with 32-bit integers: every matrix must have fewer than 2^31 elements";
  }
  if (!spec.any_size && (p.m % spec.tile_m != 0 || p.n % spec.tile_n != 0 || p.k % spec.tile_k != 0)) {
    std::ostringstream os;
    os << who << " needs m a multiple of " << spec.tile_m << ", n of " << spec.tile_n << " and k of " << spec.tile_k
       << " (its tile; no edge handling)";
    return os.str();
  }
  return std::nullopt;
}

CustomGemmGrid custom_gemm_grid(const CustomGemmSpec& spec, std::int64_t m, std::int64_t n) {
  auto tiles = [](std::int64_t extent, int tile) { return static_cast<unsigned>((extent + tile - 1) / tile); };
  const unsigned tm = tiles(m, spec.tile_m), tn = tiles(n, spec.tile_n);
  return {tm * tn, spec.threads, tm, tn};
}

}  // namespace gpubench::kernels
