// Element types, and inputs whose collective results are exact.
//
// Every input is a small non-negative integer. A type stores every integer 0..max_exact
// exactly (2^(mantissa bits + 1)): fp64 2^53, fp32 2^24, fp16 2048, bf16 256, fp8 e4m3 16,
// fp8 e5m2 8 (IEEE 754 / OCP FP8 formats). Sums are exact when every partial sum stays within
// that range, in any order the library adds them, so inputs of a sum on n ranks stay below
// max_exact / n. Products multiply ones and a single small factor; max and min need no headroom.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "bench/suites/collectives/collectives.hpp"
#include "kernels/common/float_formats.hpp"

namespace gpubench::suites::collectives {
namespace {

// OCP FP8 (E4M3: bias 7, no infinities, S.1111.111 is NaN, max 448; E5M2: bias 15, IEEE-like).
double fp8_decode(std::uint8_t code, bool e4m3) {
  const int mant_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exp = (code >> mant_bits) & (e4m3 ? 0xF : 0x1F);
  const int mant = code & ((1 << mant_bits) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  if (e4m3 && exp == 0xF && mant == 0x7) return std::nan("");
  if (!e4m3 && exp == 0x1F) return mant == 0 ? sign * INFINITY : std::nan("");
  if (exp == 0) return sign * std::ldexp(mant, 1 - bias - mant_bits);
  return sign * std::ldexp((1 << mant_bits) + mant, exp - bias - mant_bits);
}

// Nearest code (ties to the even code), by search over the 128 non-negative codes: used only
// on host data, which is small integers or their averages.
std::uint8_t fp8_encode(double v, bool e4m3) {
  static const auto table = [] {
    std::array<std::array<double, 128>, 2> t{};
    for (int f = 0; f < 2; ++f) {
      for (int c = 0; c < 128; ++c)
        t[static_cast<std::size_t>(f)][static_cast<std::size_t>(c)] = fp8_decode(static_cast<std::uint8_t>(c), f == 1);
    }
    return t;
  }();
  const auto& t = table[e4m3 ? 1 : 0];
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(v);
  int best = 0;
  double best_err = INFINITY;
  for (int c = 0; c < 128; ++c) {
    const double x = t[static_cast<std::size_t>(c)];
    if (std::isnan(x) || std::isinf(x)) continue;
    const double err = std::fabs(x - a);
    if (err < best_err || (err == best_err && (c % 2) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<std::uint8_t>(sign | best);
}

}  // namespace

const std::vector<DtypeInfo>& dtypes() {
  static const std::vector<DtypeInfo> all = {
      {Dtype::F32, "fp32", 4, 16777216.0, 0x1p-23, true}, {Dtype::F16, "fp16", 2, 2048.0, 0x1p-10, true},
      {Dtype::BF16, "bf16", 2, 256.0, 0x1p-7, true},      {Dtype::F64, "fp64", 8, 9007199254740992.0, 0x1p-52, true},
      {Dtype::I32, "int32", 4, 2147483647.0, 0, false},   {Dtype::F8E4M3, "fp8_e4m3", 1, 16.0, 0x1p-3, true},
      {Dtype::F8E5M2, "fp8_e5m2", 1, 8.0, 0x1p-2, true},
  };
  return all;
}

const DtypeInfo& info(Dtype t) {
  for (const DtypeInfo& d : dtypes()) {
    if (d.type == t) return d;
  }
  throw std::logic_error("collectives: unknown dtype");
}

std::optional<Dtype> parse_dtype(const std::string& name) {
  for (const DtypeInfo& d : dtypes()) {
    if (name == d.name) return d.type;
  }
  return std::nullopt;
}

const std::vector<std::string>& redop_names() {
  static const std::vector<std::string> names = {"sum", "prod", "max", "min", "avg"};
  return names;
}

std::optional<RedOp> parse_redop(const std::string& name) {
  const auto& n = redop_names();
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i] == name) return static_cast<RedOp>(i);
  }
  return std::nullopt;
}

void store_element(Dtype t, void* buffer, std::int64_t i, double v) {
  const auto k = static_cast<std::size_t>(i);
  switch (t) {
    case Dtype::F32:
      static_cast<float*>(buffer)[k] = static_cast<float>(v);
      return;
    case Dtype::F64:
      static_cast<double*>(buffer)[k] = v;
      return;
    case Dtype::I32:
      static_cast<std::int32_t*>(buffer)[k] = static_cast<std::int32_t>(v);
      return;
    case Dtype::F16:
      static_cast<std::uint16_t*>(buffer)[k] = kernels::float_to_half_bits(static_cast<float>(v));
      return;
    case Dtype::BF16:
      static_cast<std::uint16_t*>(buffer)[k] = kernels::float_to_bfloat16_bits(static_cast<float>(v));
      return;
    case Dtype::F8E4M3:
      static_cast<std::uint8_t*>(buffer)[k] = fp8_encode(v, true);
      return;
    case Dtype::F8E5M2:
      static_cast<std::uint8_t*>(buffer)[k] = fp8_encode(v, false);
      return;
  }
}

double load_element(Dtype t, const void* buffer, std::int64_t i) {
  const auto k = static_cast<std::size_t>(i);
  switch (t) {
    case Dtype::F32:
      return static_cast<const float*>(buffer)[k];
    case Dtype::F64:
      return static_cast<const double*>(buffer)[k];
    case Dtype::I32:
      return static_cast<const std::int32_t*>(buffer)[k];
    case Dtype::F16:
      return kernels::half_bits_to_float(static_cast<const std::uint16_t*>(buffer)[k]);
    case Dtype::BF16:
      return kernels::bfloat16_bits_to_float(static_cast<const std::uint16_t*>(buffer)[k]);
    case Dtype::F8E4M3:
      return fp8_decode(static_cast<const std::uint8_t*>(buffer)[k], true);
    case Dtype::F8E5M2:
      return fp8_decode(static_cast<const std::uint8_t*>(buffer)[k], false);
  }
  return 0;
}

double round_to(Dtype t, double v) {
  unsigned char tmp[8];
  store_element(t, tmp, 0, v);
  return load_element(t, tmp, 0);
}

double input_value(const InputSpec& s, int rank, std::int64_t i) {
  const double max_exact = info(s.dtype).max_exact;
  const std::int64_t n = std::max(1, s.ranks);
  if (!s.reduces) {
    // Values only move: make them depend on rank and index so a misplaced block shows, with a
    // period (a prime, or the type's whole exact range) that strides of powers of two miss.
    const std::int64_t period = std::min<std::int64_t>(static_cast<std::int64_t>(max_exact) + 1, 1021);
    return static_cast<double>((i * 7 + rank * 13) % period);
  }
  switch (s.redop) {
    case RedOp::Sum:
    case RedOp::Avg: {
      // Values 0..a with a*n <= max_exact: every partial sum is exact. With too many ranks for
      // the type (bf16 past 256 ranks) one rank per element holds a 1 and the others 0.
      const std::int64_t a = std::min<std::int64_t>(3, static_cast<std::int64_t>(max_exact) / n);
      if (a >= 1) return static_cast<double>((i + rank) % (a + 1));
      return i % n == rank ? 1.0 : 0.0;
    }
    case RedOp::Prod:
      // One rank per element holds 1, 2 or 3, the others 1: the product is that factor.
      return i % n == rank ? static_cast<double>(1 + i % 3) : 1.0;
    case RedOp::Max:
    case RedOp::Min: {
      const std::int64_t period = std::min<std::int64_t>(static_cast<std::int64_t>(max_exact) + 1, 61);
      return static_cast<double>((i * 3 + rank * 5) % period);
    }
  }
  return 0;
}

double reduced_value(const InputSpec& s, std::int64_t i) {
  double acc = input_value(s, 0, i);
  for (int r = 1; r < s.ranks; ++r) {
    const double v = input_value(s, r, i);
    switch (s.redop) {
      case RedOp::Sum:
      case RedOp::Avg:
        acc += v;
        break;
      case RedOp::Prod:
        acc *= v;
        break;
      case RedOp::Max:
        acc = std::max(acc, v);
        break;
      case RedOp::Min:
        acc = std::min(acc, v);
        break;
    }
  }
  if (s.redop == RedOp::Avg) {
    // NCCL divides integers after the sum (truncating); floats are scaled by 1/n. The sum is
    // non-negative, so truncation is the floor.
    acc = info(s.dtype).is_float ? acc / s.ranks : std::floor(acc / s.ranks);
  }
  return round_to(s.dtype, acc);
}

bool matches(const InputSpec& s, double got, double expected) {
  if (got == expected) return true;
  const bool power_of_two = s.ranks > 0 && (s.ranks & (s.ranks - 1)) == 0;
  if (s.redop == RedOp::Avg && s.reduces && info(s.dtype).is_float && !power_of_two) {
    return std::fabs(got - expected) <= 2 * info(s.dtype).epsilon * std::max(std::fabs(expected), 1.0 / s.ranks);
  }
  return false;
}

}  // namespace gpubench::suites::collectives
