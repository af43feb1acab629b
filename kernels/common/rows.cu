#include "kernels/common/rows.cuh"

namespace gpubench::kernels {
namespace {

constexpr unsigned kBlock = 256;

// One block per row (grid-strided over rows); the block's threads copy the row's words.
// Gather reads row index[p] and writes row p; scatter reads row p and writes row index[p].
template <typename Word, bool Gather>
__global__ void permute_rows_kernel(Word* dst, const Word* src, const std::int64_t* index, std::int64_t rows,
                                    std::size_t words_per_row) {
  for (std::int64_t p = blockIdx.x; p < rows; p += gridDim.x) {
    const std::int64_t from = Gather ? index[p] : p;
    const std::int64_t to = Gather ? p : index[p];
    const Word* s = src + static_cast<std::size_t>(from) * words_per_row;
    Word* d = dst + static_cast<std::size_t>(to) * words_per_row;
    for (std::size_t w = threadIdx.x; w < words_per_row; w += blockDim.x) d[w] = s[w];
  }
}

template <bool Gather>
cudaError_t launch_permute(void* dst, const void* src, const std::int64_t* index, std::int64_t rows,
                           std::size_t row_bytes, cudaStream_t stream) {
  if (rows <= 0 || row_bytes == 0) return cudaSuccess;
  const unsigned grid = static_cast<unsigned>(rows < 65535 ? rows : 65535);
  const auto aligned = [&](std::size_t a) {
    return row_bytes % a == 0 && reinterpret_cast<std::uintptr_t>(dst) % a == 0 &&
           reinterpret_cast<std::uintptr_t>(src) % a == 0;
  };
  if (aligned(16)) {
    permute_rows_kernel<uint4, Gather><<<grid, kBlock, 0, stream>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src),
                                                                    index, rows, row_bytes / 16);
  } else if (aligned(4)) {
    permute_rows_kernel<std::uint32_t, Gather><<<grid, kBlock, 0, stream>>>(
        static_cast<std::uint32_t*>(dst), static_cast<const std::uint32_t*>(src), index, rows, row_bytes / 4);
  } else {
    permute_rows_kernel<unsigned char, Gather><<<grid, kBlock, 0, stream>>>(
        static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), index, rows, row_bytes);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gather_rows(void* dst, const void* src, const std::int64_t* index, std::int64_t rows,
                               std::size_t row_bytes, cudaStream_t stream) {
  return launch_permute<true>(dst, src, index, rows, row_bytes, stream);
}

cudaError_t launch_scatter_rows(void* dst, const void* src, const std::int64_t* index, std::int64_t rows,
                                std::size_t row_bytes, cudaStream_t stream) {
  return launch_permute<false>(dst, src, index, rows, row_bytes, stream);
}

}  // namespace gpubench::kernels
