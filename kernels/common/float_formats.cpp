#include "float_formats.hpp"

#include <cmath>
#include <limits>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace gpubench::kernels {
namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

std::size_t storage_bytes(Storage s) {
  switch (s) {
    case Storage::F64: return 8;
    case Storage::F32: return 4;
    case Storage::F16:
    case Storage::BF16: return 2;
    case Storage::E4M3:
    case Storage::E5M2:
    case Storage::I8: return 1;
    case Storage::I32: return 4;
  }
  return 0;
}

std::string_view storage_name(Storage s) {
  switch (s) {
    case Storage::F64: return "f64";
    case Storage::F32: return "f32";
    case Storage::F16: return "f16";
    case Storage::BF16: return "bf16";
    case Storage::E4M3: return "e4m3";
    case Storage::E5M2: return "e5m2";
    case Storage::I8: return "i8";
    case Storage::I32: return "i32";
  }
  return "?";
}

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t u = bits_of(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t abs = u & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    return sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u);
  }
  if (abs >= 0x477FF000u) return sign | 0x7C00u;  // rounds to >= 65520: overflow to inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero) in half: value = mantissa * 2^-24. Round abs / 2^-24.
    const float scaled = float_of(abs) * 16777216.0f;  // exact: power-of-two scaling
    const float r = std::nearbyint(scaled);            // default rounding mode: ties to even
    return sign | static_cast<std::uint16_t>(r);       // 1024 (=0x400) carries into the exponent
  }
  // Normal: rebias exponent (127 -> 15) and round the 23-bit mantissa to 10 bits.
  std::uint32_t h = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may bump the exponent
  return sign | static_cast<std::uint16_t>(h);
}

#if defined(__x86_64__)
namespace {
// CPUID leaf 1 says AVX, F16C and OSXSAVE, and XGETBV says the OS saves the YMM registers.
// (Not __builtin_cpu_supports("f16c"): the clang of the fuzz build does not know that name.)
bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  if ((c & bit_AVX) == 0 || (c & bit_F16C) == 0 || (c & bit_OSXSAVE) == 0) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 6u) == 6u;
}

// vcvtps2ph rounds to nearest even (immediate 0) with IEEE subnormals, overflow to infinity:
// float_to_half_bits's rules. Compiled for F16C whatever the build's target; called only where
// the CPU has it.
__attribute__((target("avx,f16c"))) void floats_to_half_f16c(const float* in, std::uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = float_to_half_bits(in[i]);
}
}  // namespace
#endif

void floats_to_half_bits(const float* in, std::uint16_t* out, std::size_t n) {
#if defined(__x86_64__)
  static const bool f16c = cpu_has_f16c();
  if (f16c) {
    floats_to_half_f16c(in, out, n);
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_half_bits(in[i]);
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  const std::uint32_t man = h & 0x3FFu;
  if (exp == 0) {
    const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return float_of(sign | 0x7F800000u | (man << 13));
  return float_of(sign | ((exp + 112u) << 23) | (man << 13));
}

// bfloat16: the upper 16 bits of a float, rounded to nearest even.
std::uint16_t float_to_bfloat16_bits(float f) {
  const std::uint32_t u = bits_of(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float bfloat16_bits_to_float(std::uint16_t b) { return float_of(static_cast<std::uint32_t>(b) << 16); }

namespace {
struct Fp8Format {
  int mantissa_bits, bias;
  double max_finite;
};
Fp8Format fp8_format(Storage s) {
  if (s == Storage::E4M3) return {3, 7, 448.0};
  return {2, 15, 57344.0};
}
}  // namespace

// Round |f| to a multiple of the format's quantum at its binade (2^(e - mantissa bits), or the
// subnormal step below the smallest normal), ties to even, saturate, then encode.
std::uint8_t float_to_fp8_bits(float f, Storage format) {
  const Fp8Format fmt = fp8_format(format);
  const std::uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  if (std::isnan(f)) return format == Storage::E4M3 ? 0x7F : 0x7E;
  double a = std::fabs(static_cast<double>(f));
  if (a == 0) return sign;
  // Saturating as __NV_SATFINITE: +-inf becomes the largest finite code (ilogb of inf would make
  // the quantum inf and the result 0).
  if (std::isinf(a)) a = fmt.max_finite;
  const int min_exp = 1 - fmt.bias;  // exponent of the smallest normal
  int e = std::ilogb(a);
  if (e < min_exp) e = min_exp;
  const double quantum = std::ldexp(1.0, e - fmt.mantissa_bits);
  a = std::nearbyint(a / quantum) * quantum;  // power-of-two scaling: exact; default mode ties to even
  if (a > fmt.max_finite) a = fmt.max_finite;  // saturating, as __NV_SATFINITE
  if (a == 0) return sign;
  e = std::ilogb(a);
  if (e < min_exp) {  // subnormal: exponent field 0
    return sign | static_cast<std::uint8_t>(a / std::ldexp(1.0, min_exp - fmt.mantissa_bits));
  }
  const int mant = static_cast<int>(a / std::ldexp(1.0, e - fmt.mantissa_bits)) - (1 << fmt.mantissa_bits);
  return sign | static_cast<std::uint8_t>(((e + fmt.bias) << fmt.mantissa_bits) | mant);
}

float fp8_bits_to_float(std::uint8_t b, Storage format) {
  const Fp8Format fmt = fp8_format(format);
  const int exp_bits = 7 - fmt.mantissa_bits;
  const int exp = (b >> fmt.mantissa_bits) & ((1 << exp_bits) - 1);
  const int mant = b & ((1 << fmt.mantissa_bits) - 1);
  const bool negative = (b & 0x80) != 0;
  if (format == Storage::E4M3 && exp == 15 && mant == 7) return NAN;
  if (format == Storage::E5M2 && exp == 31) return mant == 0 ? (negative ? -INFINITY : INFINITY) : NAN;
  const double v = exp == 0 ? std::ldexp(static_cast<double>(mant), 1 - fmt.bias - fmt.mantissa_bits)
                            : std::ldexp(static_cast<double>(mant + (1 << fmt.mantissa_bits)), exp - fmt.bias - fmt.mantissa_bits);
  return static_cast<float>(negative ? -v : v);
}

int uniform_to_int(float u) { return static_cast<int>(std::floor(u * 16.0f)); }

double round_to_storage(Storage s, float f) {
  switch (s) {
    case Storage::F16: return half_bits_to_float(float_to_half_bits(f));
    case Storage::BF16: return bfloat16_bits_to_float(float_to_bfloat16_bits(f));
    case Storage::E4M3:
    case Storage::E5M2: return fp8_bits_to_float(float_to_fp8_bits(f, s), s);
    case Storage::I8:
    case Storage::I32: return uniform_to_int(f);
    case Storage::F32:
    case Storage::F64: return f;
  }
  return f;
}

double load_element(Storage s, const void* buffer, std::size_t index) {
  switch (s) {
    case Storage::F64: return static_cast<const double*>(buffer)[index];
    case Storage::F32: return static_cast<const float*>(buffer)[index];
    case Storage::F16: return half_bits_to_float(static_cast<const std::uint16_t*>(buffer)[index]);
    case Storage::BF16: return bfloat16_bits_to_float(static_cast<const std::uint16_t*>(buffer)[index]);
    case Storage::E4M3:
    case Storage::E5M2: return fp8_bits_to_float(static_cast<const std::uint8_t*>(buffer)[index], s);
    case Storage::I8: return static_cast<const std::int8_t*>(buffer)[index];
    case Storage::I32: return static_cast<const std::int32_t*>(buffer)[index];
  }
  return 0;
}

// The 8 E2M1 magnitudes, by code (sign bit clear).
constexpr float kE2M1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

std::uint8_t float_to_e2m1_bits(float f) {
  const std::uint8_t sign = std::signbit(f) ? 0x8 : 0x0;
  if (std::isnan(f)) return 0x7;  // no NaN in E2M1: the largest positive value
  const float a = std::fabs(f);
  if (a >= 6.0f) return sign | 0x7;
  // Nearest of the 8 magnitudes; on a tie the code with an even mantissa bit (an even code).
  std::uint8_t best = 0;
  for (std::uint8_t c = 1; c < 8; ++c) {
    const float d = std::fabs(a - kE2M1Magnitudes[c]), db = std::fabs(a - kE2M1Magnitudes[best]);
    if (d < db || (d == db && (c % 2) == 0)) best = c;
  }
  return sign | best;
}

float e2m1_bits_to_float(std::uint8_t code) {
  const float m = kE2M1Magnitudes[code & 0x7];
  return (code & 0x8) ? -m : m;
}

double ue8m0_to_double(std::uint8_t code) {
  if (code == 0xFF) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(code) - 127);
}

}  // namespace gpubench::kernels
