#include <gtest/gtest.h>

#include "bench/core/axis.hpp"
#include "bench/core/errors.hpp"

namespace gpubench {
namespace {

const AxisSpec kInt{"m", AxisKind::Int, "", {}, 1};
const AxisSpec kEnum{"dtype", AxisKind::Enum, "", {"fp32", "fp16", "bf16"}, 1};

std::vector<std::int64_t> ints(const std::string& text) {
  std::vector<std::int64_t> out;
  for (const AxisValue& v : parse_axis_values(kInt, text)) out.push_back(std::get<std::int64_t>(v));
  return out;
}

TEST(Axis, ListsRangesAndSuffixes) {
  EXPECT_EQ(ints("1024,4096"), (std::vector<std::int64_t>{1024, 4096}));
  EXPECT_EQ(ints("1024:4096:1024"), (std::vector<std::int64_t>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(ints("1000:3500:1000"), (std::vector<std::int64_t>{1000, 2000, 3000}));  // stop not reached
  EXPECT_EQ(ints("256:4096:x2"), (std::vector<std::int64_t>{256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(ints("1:100:x10"), (std::vector<std::int64_t>{1, 10, 100}));
  EXPECT_EQ(ints("4k, 1M"), (std::vector<std::int64_t>{4096, 1048576}));
  EXPECT_EQ(ints("2G,4K"), (std::vector<std::int64_t>{std::int64_t{2} << 30, 4096}));
  EXPECT_EQ(ints("8:1G:x2").back(), std::int64_t{1} << 30);  // the collectives' standard preset
  EXPECT_EQ(ints("8,8,16"), (std::vector<std::int64_t>{8, 16}));  // duplicates dropped
  EXPECT_EQ(ints("64,1:4:x2"), (std::vector<std::int64_t>{64, 1, 2, 4}));  // order kept
}

TEST(Axis, EnumValues) {
  auto v = parse_axis_values(kEnum, "bf16,fp16");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(std::get<std::string>(v[0]), "bf16");
  EXPECT_EQ(to_string(v[1]), "fp16");
}

TEST(Axis, BadValuesNameTheProblem) {
  auto message = [](const AxisSpec& spec, const std::string& text) {
    try {
      parse_axis_values(spec, text);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(kInt, "").find("empty value list"), std::string::npos);
  EXPECT_NE(message(kInt, "abc").find("'abc' is not an integer"), std::string::npos);
  EXPECT_NE(message(kInt, "12x").find("not an integer"), std::string::npos);
  EXPECT_NE(message(kInt, "1,,2").find("empty item"), std::string::npos);
  EXPECT_NE(message(kInt, "0").find("below the smallest"), std::string::npos);
  EXPECT_NE(message(kInt, "-5").find("below the smallest"), std::string::npos);
  EXPECT_NE(message(kInt, "10:1:1").find("stop < start"), std::string::npos);
  EXPECT_NE(message(kInt, "1:10:0").find("step of at least 1"), std::string::npos);
  EXPECT_NE(message(kInt, "1:10:x1").find("factor of at least 2"), std::string::npos);
  EXPECT_NE(message(kInt, "1:10").find("start:stop:step"), std::string::npos);
  EXPECT_NE(message(kInt, "1:100000000:1").find("more than"), std::string::npos);
  EXPECT_NE(message(kInt, "99999999999999999999").find("not an integer"), std::string::npos);
  // A size suffix past int64 either way (fuzz_axis found the negative side overflowing).
  EXPECT_NE(message(kInt, "9609302223022207M").find("out of range"), std::string::npos);
  EXPECT_NE(message(kInt, "-9609302223022207M").find("out of range"), std::string::npos);
  EXPECT_NE(message(kInt, "9609302223022207G").find("out of range"), std::string::npos);
  EXPECT_NE(message(kInt, "1g").find("not an integer"), std::string::npos);  // suffixes are k, K, M, G only
  EXPECT_NE(message(kEnum, "fp8").find("unknown value 'fp8' (accepted: fp32, fp16, bf16)"), std::string::npos);
}

TEST(Axis, GeometricRangeDoesNotOverflow) {
  auto v = ints("1:9223372036854775807:x2");
  EXPECT_EQ(v.size(), 63u);
  EXPECT_EQ(v.back(), std::int64_t{1} << 62);
}

// Found by tests/fuzz/fuzz_axis (UBSan: signed overflow stepping past stop near INT64_MAX).
TEST(Axis, LinearRangeDoesNotOverflow) {
  EXPECT_EQ(ints("9223372036854775800:9223372036854775807:5"),
            (std::vector<std::int64_t>{9223372036854775800, 9223372036854775805}));
  EXPECT_EQ(ints("9223372036854775807:9223372036854775807:9223372036854775807"),
            (std::vector<std::int64_t>{9223372036854775807}));
  EXPECT_EQ(ints("1:9223372036854775807:9223372036854775807"), (std::vector<std::int64_t>{1}));
}

TEST(Axis, SplitAssignment) {
  AxisAssignment a = split_axis_assignment("m=1024,4096");
  EXPECT_EQ(a.name, "m");
  EXPECT_EQ(a.values, "1024,4096");
  EXPECT_THROW(split_axis_assignment("m"), UsageError);
  EXPECT_THROW(split_axis_assignment("=1"), UsageError);
  EXPECT_THROW(split_axis_assignment("m="), UsageError);
}

}  // namespace
}  // namespace gpubench
