#pragma once
// Row permutations of a buffer of fixed-size rows (moe_dispatch's token pack and unpack): the
// host versions, which the MPI CPU backend runs and the GPU kernels (rows.cuh) are checked by.
#include <cstdint>
#include <cstring>

namespace gpubench::kernels {

// dst row p = src row index[p], for p < rows.
inline void gather_rows(void* dst, const void* src, const std::int64_t* index, std::int64_t rows, std::size_t row_bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::int64_t p = 0; p < rows; ++p) {
    std::memcpy(d + static_cast<std::size_t>(p) * row_bytes, s + static_cast<std::size_t>(index[p]) * row_bytes, row_bytes);
  }
}

// dst row index[p] = src row p, for p < rows (the inverse of gather_rows with the same index).
inline void scatter_rows(void* dst, const void* src, const std::int64_t* index, std::int64_t rows, std::size_t row_bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::int64_t p = 0; p < rows; ++p) {
    std::memcpy(d + static_cast<std::size_t>(index[p]) * row_bytes, s + static_cast<std::size_t>(p) * row_bytes, row_bytes);
  }
}

}  // namespace gpubench::kernels
