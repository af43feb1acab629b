#pragma once
// The element types benchmarks store, and host-side conversions to and from the 16-bit
// formats, so a CPU reference sees exactly the values a GPU kernel stored.
// Conversions round to nearest, ties to even, like __float2half_rn / __float2bfloat16_rn, and
// for fp8 like cuda_fp8.h's __nv_fp8_e4m3 / __nv_fp8_e5m2 constructors (saturating to the
// largest finite value).
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpubench::kernels {

// E4M3 / E5M2: OCP 8-bit floats (E4M3: bias 7, 3 mantissa bits, max 448, no infinity; E5M2:
// bias 15, 2 mantissa bits, max 57344), as CUDA's __nv_fp8_e4m3 / __nv_fp8_e5m2.
// I8 / I32: integers. Random fills store floor(16 u) for u uniform in [-1, 1): integers in
// [-16, 15], so int32 GEMM sums stay exact for any k below 2^23.
enum class Storage { F64, F32, F16, BF16, E4M3, E5M2, I8, I32 };

std::size_t storage_bytes(Storage s);
std::string_view storage_name(Storage s);

std::uint16_t float_to_half_bits(float f);
float half_bits_to_float(std::uint16_t h);
// float_to_half_bits over an array: the same bits for every non-NaN input (a NaN stays a NaN,
// its payload may differ), with the CPU's F16C conversion where it has one (8 at a time,
// several times faster than the portable code, which it falls back to elsewhere).
void floats_to_half_bits(const float* in, std::uint16_t* out, std::size_t n);
std::uint16_t float_to_bfloat16_bits(float f);
float bfloat16_bits_to_float(std::uint16_t b);

std::uint8_t float_to_fp8_bits(float f, Storage format);  // format: E4M3 or E5M2
float fp8_bits_to_float(std::uint8_t b, Storage format);

// E2M1 (OCP Microscaling Formats (MX) v1.0, FP4): 1 sign, 2 exponent bits (bias 1), 1 mantissa
// bit; the 8 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (0.5 is the subnormal); no infinity or NaN.
// A code is 4 bits; two share a byte, the first value in the low nibble (as __nv_fp4x2_e2m1).
std::uint8_t float_to_e2m1_bits(float f);     // round to nearest even, saturate to +-6; NaN -> +6
float e2m1_bits_to_float(std::uint8_t code);  // the low 4 bits
// UE8M0 (MX's block scale): an unsigned 8-bit exponent, 2^(code - 127); 0xFF is NaN.
double ue8m0_to_double(std::uint8_t code);

// The integer a random fill stores for uniform value `u` (I8 and I32 storage): floor(16 u).
// (u * 16 is exact, so floorf on the device gives the same integer.)
int uniform_to_int(float u);

// The value `f` becomes once stored as `s` (identity for F32/F64).
double round_to_storage(Storage s, float f);

// Reads element `index` of a host buffer holding `s` values.
double load_element(Storage s, const void* buffer, std::size_t index);

}  // namespace gpubench::kernels
