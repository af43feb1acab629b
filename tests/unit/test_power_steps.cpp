// --power-limits and --lock-clocks parsing (bench/core/power_control.hpp).
#include <gtest/gtest.h>

#include "bench/core/errors.hpp"
#include "bench/core/power_control.hpp"

namespace gpubench {
namespace {

TEST(PowerSteps, PercentsAndWatts) {
  const auto s = parse_power_limits("100%,90%,72.5%,300,250W");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].kind, PowerStep::Kind::PercentOfDefault);
  EXPECT_EQ(s[0].value, 100);
  EXPECT_EQ(s[2].value, 72.5);
  EXPECT_EQ(s[2].label(), "72.5%");
  EXPECT_EQ(s[3].kind, PowerStep::Kind::Watts);
  EXPECT_EQ(s[4].value, 250);
  EXPECT_EQ(s[4].label(), "250 W");
}

TEST(PowerSteps, BadItemsAreUsageErrorsNamingThem) {
  // The command line's one number and list syntax (bench/core/numbers.hpp): spaces on either
  // side, hex, an item twice are refused like everywhere else.
  for (const char* bad : {"", "90%,", "abc", "0%", "101%", "-5", "90%%", "20000", "nan", "1e999", " 90%", "90% ",
                          "0x10", "90%,90%", "-5W"}) {
    try {
      (void)parse_power_limits(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--power-limits '", 0), 0u) << e.what();
    }
  }
  // An item is quoted back as typed: "-5W", not "-5".
  try {
    (void)parse_power_limits("-5W");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'-5W'"), std::string::npos) << e.what();
  }
}

TEST(PowerSteps, Clocks) {
  const auto s = parse_lock_clocks("1980,1410");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].kind, PowerStep::Kind::ClockMhz);
  EXPECT_EQ(s[1].label(), "1410 MHz");
  for (const char* bad : {"", "1410.5", "0", "99999", "fast"}) {
    EXPECT_THROW((void)parse_lock_clocks(bad), UsageError) << bad;
  }
}

}  // namespace
}  // namespace gpubench
