// Host side of the Hopper GEMM: TMA descriptors. cuTensorMapEncodeTiled is a driver API
// function; gpubench never links libcuda (it must start without a driver), so the function is
// looked up at run time through the runtime's cudaGetDriverEntryPoint[ByVersion].
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <string>

#include "kernels/gemm/custom_gemm_tiles.hpp"
#include "kernels/gemm/wgmma_gemm.cuh"

namespace gpubench::kernels {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_function(std::string* why) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t err = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    *why = std::string("the driver has no cuTensorMapEncodeTiled (") + cudaGetErrorString(err) + ")";
    return nullptr;
  }
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

// A 2-D column-major matrix of `rows` x `cols` 16-bit elements, boxes of box_rows x box_cols.
std::string encode(PFN_cuTensorMapEncodeTiled_v12000 fn, CUtensorMap* map, CUtensorMapDataType type, const void* base,
                   int rows, int cols, int box_rows, int box_cols) {
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(cols)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(rows) * 2};  // bytes between columns
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_rows), static_cast<cuuint32_t>(box_cols)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = fn(map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed with CUresult " + std::to_string(static_cast<int>(r));
  return "";
}

}  // namespace

std::string encode_wgmma_tensor_maps(const CustomGemmArgs& g, WgmmaTensorMaps* maps) {
  if (g.storage != Storage::F16 && g.storage != Storage::BF16) return "wgmma GEMM takes fp16 or bf16";
  std::string why;
  const auto fn = encode_function(&why);
  if (fn == nullptr) return why;
  const CUtensorMapDataType type =
      g.storage == Storage::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  using W = tiles::Wgmma;
  why = encode(fn, &maps->a, type, g.a, g.m, g.k, W::kBoxA, W::kBK);
  if (why.empty()) why = encode(fn, &maps->b, type, g.b, g.k, g.n, W::kBK, W::kBN);
  return why;
}

}  // namespace gpubench::kernels
