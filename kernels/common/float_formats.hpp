#pragma once
// The element types benchmarks store, and host-side conversions to and from the 16-bit
// formats, so a CPU reference sees exactly the values a GPU kernel stored.
// Conversions round to nearest, ties to even, like __float2half_rn / __float2bfloat16_rn.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpubench::kernels {

enum class Storage { F64, F32, F16, BF16 };

std::size_t storage_bytes(Storage s);
std::string_view storage_name(Storage s);

std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
std::uint16_t float_to_bfloat16_bits(float f);
float bfloat16_bits_to_float(std::uint16_t b);

// The value `f` becomes once stored as `s` (identity for F32/F64).
double round_to_storage(Storage s, float f);

// Reads element `index` of a host buffer holding `s` values.
double load_element(Storage s, const void* buffer, std::size_t index);

}  // namespace gpubench::kernels
