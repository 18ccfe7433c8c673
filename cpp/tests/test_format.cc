// format_number: the shortest decimal that reads back as the same double,
// and the messages that print a user's value with it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "core/error.h"
#include "core/format.h"
#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

TEST(FormatNumber, ShortestFormThatReadsBack) {
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(2.5), "2.5");
  EXPECT_EQ(format_number(-1.0), "-1");
  EXPECT_EQ(format_number(1e-9), "1e-09");
  EXPECT_EQ(format_number(1e39), "1e+39");
  EXPECT_EQ(format_number(2147483648.0), "2147483648");
  EXPECT_EQ(format_number(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_number(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_number(std::nan("")).find("nan"), 0u);
}

TEST(FormatNumber, RandomDoublesReadBackExactly) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int k = 0; k < 2000; ++k) {
    const double x = std::ldexp(mantissa(gen), exponent(gen));
    const std::string s = format_number(x);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), x) << s;
    EXPECT_LE(s.size(), 24u) << s;  // 17 digits, sign, point, exponent
  }
}

// A value far below 1e-6 is printed as itself, not as std::to_string's
// "-0.000000".
TEST(FormatNumber, SmallConfigValueInMessage) {
  auto A = testing::random_dominant<double>(10, 2, 1);
  try {
    testing::build_solver<double>(testing::solver_json("BLOCK_JACOBI", "\"relaxation_factor\": -1e-9"), A);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("relaxation_factor = -1e-09 in scope 'main'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace jaxamg
