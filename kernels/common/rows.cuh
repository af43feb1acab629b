#pragma once
// Row permutations on the GPU (moe_dispatch's token pack and unpack): the kernels of
// kernels/common/rows.hpp's gather_rows and scatter_rows, whose results they must equal.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpubench::kernels {

// dst row p = src row index[p] (gather), or dst row index[p] = src row p (scatter), for
// p < rows; `index` is in device memory. Rows move in 16-, 4- or 1-byte words, the widest that
// the row size and the pointers allow.
cudaError_t launch_gather_rows(void* dst, const void* src, const std::int64_t* index, std::int64_t rows,
                               std::size_t row_bytes, cudaStream_t stream);
cudaError_t launch_scatter_rows(void* dst, const void* src, const std::int64_t* index, std::int64_t rows,
                                std::size_t row_bytes, cudaStream_t stream);

}  // namespace gpubench::kernels
