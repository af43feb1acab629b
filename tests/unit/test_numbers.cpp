// The command line's one number and list syntax (bench/core/numbers.hpp), which every numeric
// option of every command goes through (issue 26: 0x10, ' 8', -1 for a count, 1e30 durations).
#include <gtest/gtest.h>

#include "bench/core/errors.hpp"
#include "bench/core/numbers.hpp"

namespace gpubench {
namespace {

TEST(Numbers, RealsOfTheOneSyntax) {
  for (const auto& [text, value] : std::vector<std::pair<const char*, double>>{
           {"12", 12}, {"-0.5", -0.5}, {".5", 0.5}, {"5.", 5}, {"1e3", 1000}, {"2.5E-3", 0.0025}, {"+7", 7}, {"1e30", 1e30}}) {
    ASSERT_TRUE(read_real(text).has_value()) << text;
    EXPECT_DOUBLE_EQ(*read_real(text), value) << text;
  }
  for (const char* bad : {"", " 8", "8 ", "0x10", "0x500", "inf", "nan", "-inf", "1e999", "1e", "e5", ".", "+", "8s",
                          "1,5", "--1", "1e+", "0x1p3", "\t8"}) {
    EXPECT_FALSE(read_real(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(Numbers, IntegersOfTheOneSyntax) {
  EXPECT_EQ(read_integer("42"), 42);
  EXPECT_EQ(read_integer("-1"), -1);
  EXPECT_EQ(read_integer("+8"), 8);
  EXPECT_EQ(read_integer("9223372036854775807"), 9223372036854775807LL);
  for (const char* bad : {"", " 8", "8 ", "0x10", "8.0", "1e3", "9223372036854775808", "-", "+-1", "08a"}) {
    EXPECT_FALSE(read_integer(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(Numbers, ParseNamesTheOptionAndTheText) {
  try {
    (void)parse_integer("-1", "--seed", 0, 100);
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--seed '-1': expected a whole number from 0 to 100");
  }
  EXPECT_THROW((void)parse_real("0x10", "--budget", "seconds"), UsageError);
  EXPECT_EQ(parse_real("1.5", "--budget", "seconds"), 1.5);
}

TEST(Numbers, ListsRefuseEmptyAndRepeatedItemsAndKeepItemsAsTyped) {
  EXPECT_EQ(parse_list("8,16,32", "--gpus"), (std::vector<std::string>{"8", "16", "32"}));
  EXPECT_EQ(parse_list(" 8", "--gpus"), (std::vector<std::string>{" 8"}));  // the number syntax then refuses it
  for (const char* bad : {"", ",", "8,", ",8", "8,,16", "8,8,8", "md,md"}) {
    EXPECT_THROW((void)parse_list(bad, "--x"), UsageError) << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace gpubench
