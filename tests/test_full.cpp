// full() and full_like() of integer arrays (docs/semantics.md, "Integer and conversion corner cases"): a fill value
// an integer dtype cannot hold, NaN, an infinity or a number out of range once truncated toward zero, throws
// DTypeError, where NumPy 2.4 fills with INT_MIN and warns; values it can hold are truncated toward zero, as NumPy
// does. Runs on every backend.
#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lf::DType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string dtype_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const lf::DTypeError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("another exception: ") + e.what();
  }
  return "no exception";
}

TEST(Full, NonFiniteAndOutOfRangeIntegerFillsThrow) {
  struct Case {
    double value;
    DType type;
    const char* shown;
  };
  for (const Case& c : std::vector<Case>{{kNaN, DType::Int32, "nan"},
                                         {kInf, DType::Int32, "inf"},
                                         {-kInf, DType::Int64, "-inf"},
                                         {kNaN, DType::Int64, "nan"},
                                         {kInf, DType::Int64, "inf"},
                                         {3e9, DType::Int32, "3000000000"},
                                         {-2147483649.0, DType::Int32, "-2147483649"},
                                         {9223372036854775808.0, DType::Int64, "9.2233720368547758e+18"},
                                         {-1e19, DType::Int64, "-1e+19"},
                                         {128.0, DType::Int8, "128"},
                                         {-32769.0, DType::Int16, "-32769"},
                                         {256.0, DType::UInt8, "256"},
                                         {-1.0, DType::UInt16, "-1"},
                                         {4294967296.0, DType::UInt32, "4294967296"},
                                         {kNaN, DType::UInt64, "nan"},
                                         {18446744073709551616.0, DType::UInt64, "1.8446744073709552e+19"}}) {
    const std::string name(lf::dtype_name(c.type));
    const std::string m = dtype_error([&] { (void)lf::full({2}, c.value, c.type); });
    EXPECT_NE(m.find("full: cannot fill an " + name + " array with " + c.shown), std::string::npos) << m;
    EXPECT_NE(m.find("NumPy"), std::string::npos) << m;
    const lf::Array like = lf::zeros({3}, c.type);
    const std::string m2 = dtype_error([&] { (void)lf::full_like(like, c.value); });
    EXPECT_NE(m2.find("full_like: cannot fill an " + name + " array with " + c.shown), std::string::npos) << m2;
  }
}

TEST(Full, IntegerFillsInRangeTruncateTowardZero) {
  EXPECT_EQ(lf::full({2}, 2.9, DType::Int32).get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{2, 2}));
  EXPECT_EQ(lf::full({2}, -2.9, DType::Int32).get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{-2, -2}));
  // The edges: the largest and smallest values, and a fraction beyond them that truncates back inside.
  EXPECT_EQ(lf::full({1}, 2147483647.5, DType::Int32).item<std::int32_t>(), 2147483647);
  EXPECT_EQ(lf::full({1}, -2147483648.9, DType::Int32).item<std::int32_t>(), -2147483647 - 1);
  EXPECT_EQ(lf::full({1}, -9223372036854775808.0, DType::Int64).item<std::int64_t>(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(lf::full({1}, 9223372036854774784.0, DType::Int64).item<std::int64_t>(), 9223372036854774784LL);
  EXPECT_EQ(lf::full_like(lf::zeros({1}, DType::Int64), -7.5).item<std::int64_t>(), -7);
  // Every integer type's ends (the largest double below 2^64 for uint64), and a negative fraction into unsigned.
  EXPECT_EQ(lf::full({1}, -128.0, DType::Int8).item<std::int8_t>(), -128);
  EXPECT_EQ(lf::full({1}, 32767.0, DType::Int16).item<std::int16_t>(), 32767);
  EXPECT_EQ(lf::full({1}, 255.0, DType::UInt8).item<std::uint8_t>(), 255);
  EXPECT_EQ(lf::full({1}, 65535.0, DType::UInt16).item<std::uint16_t>(), 65535);
  EXPECT_EQ(lf::full({1}, 4294967295.0, DType::UInt32).item<std::uint32_t>(), 4294967295u);
  EXPECT_EQ(lf::full({1}, 18446744073709549568.0, DType::UInt64).item<std::uint64_t>(), 18446744073709549568ull);
  EXPECT_EQ(lf::full({1}, -0.5, DType::UInt8).item<std::uint8_t>(), 0);
}

TEST(Full, FloatAndBoolFillsTakeAnyValue) {
  EXPECT_TRUE(std::isnan(lf::full({1}, kNaN, DType::Float32).item<float>()));
  EXPECT_EQ(lf::full({1}, -kInf, DType::Float64).item<double>(), -kInf);
  EXPECT_EQ(lf::full({1}, 3e9, DType::Float64).item<double>(), 3e9);
  // Any number converts to bool as != 0, NaN included (NumPy gives True too).
  EXPECT_TRUE(lf::full({1}, kNaN, DType::Bool).item<bool>());
  EXPECT_TRUE(lf::full({1}, kInf, DType::Bool).item<bool>());
  EXPECT_FALSE(lf::full({1}, 0.0, DType::Bool).item<bool>());
}

} // namespace
