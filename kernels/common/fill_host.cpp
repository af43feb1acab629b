#include <cstring>

#include "kernels/common/fill_host.hpp"
#include "kernels/common/random.hpp"

namespace gpubench::kernels {

void fill_uniform_host(void* dst, Storage storage, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = 0; i < count; ++i) {
    const float v = uniform_value(seed, i);
    switch (storage) {
      case Storage::F64: static_cast<double*>(dst)[i] = v; break;
      case Storage::F32: static_cast<float*>(dst)[i] = v; break;
      case Storage::F16: static_cast<std::uint16_t*>(dst)[i] = float_to_half_bits(v); break;
      case Storage::BF16: static_cast<std::uint16_t*>(dst)[i] = float_to_bfloat16_bits(v); break;
      case Storage::E4M3:
      case Storage::E5M2: static_cast<std::uint8_t*>(dst)[i] = float_to_fp8_bits(v, storage); break;
      case Storage::I8: static_cast<std::int8_t*>(dst)[i] = static_cast<std::int8_t>(uniform_to_int(v)); break;
      case Storage::I32: static_cast<std::int32_t*>(dst)[i] = uniform_to_int(v); break;
    }
  }
}

}  // namespace gpubench::kernels
