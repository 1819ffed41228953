// The public API as a user sees it: every row of the op table (lazyfuse/ops.def) is a documented public function of
// the signature the table promises, the Array class exposes no internals, and the operators `<<` and `>>` are
// NumPy's left_shift and right_shift while `std::cout << x` still prints. (test_numpy_types compares the values of
// every op and operator with NumPy's.)
#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;

namespace {

// ---- the op table's functions -------------------------------------------------------------------------------------

// The signatures the op table promises. Taking each row's function as one of these does not compile when a row has
// no public function, or one of another signature.
using Unary = Array (*)(const Array&);
using Binary = Array (*)(lf::Operand, lf::Operand);
using Combine = Array (*)(const Array&, lf::Axes, bool);
using ArgReduction = Array (*)(const Array&, std::optional<int>, bool);

struct Row {
  const char* kind; // UNARY, BINARY or REDUCE
  std::string name;
};
const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) {"UNARY", #name},
#define LAZYFUSE_BINARY(Enum, name, rule, cost) {"BINARY", #name},
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) {"REDUCE", #name},
#include <lazyfuse/ops.def>
  };
  return r;
}

#define LAZYFUSE_REDUCE_SIGNATURE_Combine Combine
#define LAZYFUSE_REDUCE_SIGNATURE_Arg ArgReduction
[[maybe_unused]] const std::map<std::string, const void*> kFunctions = {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) {#name, reinterpret_cast<const void*>(Unary(&lf::name))},
#define LAZYFUSE_BINARY(Enum, name, rule, cost) {#name, reinterpret_cast<const void*>(Binary(&lf::name))},
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost)                                                           \
  {#name, reinterpret_cast<const void*>(LAZYFUSE_REDUCE_SIGNATURE_##kind(&lf::name))},
#include <lazyfuse/ops.def>
};

TEST(OpTable, EveryRowIsAFunction) {
  EXPECT_EQ(kFunctions.size(), rows().size()) << "two rows of ops.def share a name";
  for (const Row& r : rows()) EXPECT_NE(kFunctions.at(r.name), nullptr) << r.name;
}

std::string read_header(const std::string& name) {
  std::ifstream in(std::string(LAZYFUSE_TEST_SOURCE_DIR) + "/../include/lazyfuse/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A reader finds each op where its topic's header declares it, once, under a `///` comment of its own.
TEST(OpTable, EveryRowIsDeclaredOnceWithItsDocumentation) {
  const std::map<std::string, std::string> header_of = {
      {"UNARY", "elementwise.hpp"}, {"BINARY", "elementwise.hpp"}, {"REDUCE", "reductions.hpp"}};
  std::map<std::string, std::vector<std::string>> lines_of;
  for (auto& [kind, file] : header_of) {
    if (lines_of.count(file)) continue;
    std::istringstream in(read_header(file));
    for (std::string line; std::getline(in, line);) lines_of[file].push_back(line);
    ASSERT_GT(lines_of[file].size(), 10u) << "cannot read include/lazyfuse/" << file;
  }
  for (const Row& r : rows()) {
    const auto& lines = lines_of[header_of.at(r.kind)];
    // A unary row's own signature: an overload beside it (gelu's approximate argument) is declared apart.
    const std::string declaration = "Array " + r.name + (std::string(r.kind) == "UNARY" ? "(const Array& a)" : "(");
    int found = 0;
    for (std::size_t k = 0; k < lines.size(); ++k) {
      if (lines[k].rfind(declaration, 0) != 0) continue;
      ++found;
      EXPECT_TRUE(k > 0 && lines[k - 1].rfind("/// ", 0) == 0)
          << r.name << " is declared in " << header_of.at(r.kind) << " without a `///` line above it";
    }
    EXPECT_EQ(found, 1) << r.name << ": declarations in include/lazyfuse/" << header_of.at(r.kind);
  }
}

// ---- no internals in the public API -------------------------------------------------------------------------------

template <class A>
concept ExposesItsNode = requires(const A& a) {
  a.node();
};
static_assert(!ExposesItsNode<Array>, "an Array's graph node is the library's (api/ApiAccess.h)");
static_assert(!std::is_constructible_v<Array, std::shared_ptr<lf::graph::Node>>,
              "only the library makes an Array of a graph node");
static_assert(std::is_convertible_v<Array, lf::Operand> && std::is_convertible_v<float, lf::Operand> &&
                  std::is_convertible_v<unsigned long long, lf::Operand> && std::is_convertible_v<bool, lf::Operand>,
              "an Operand is an Array or any C++ number");
static_assert(!std::is_convertible_v<const char*, lf::Operand> && !std::is_convertible_v<DType, lf::Operand>);

// ---- << and >> ------------------------------------------------------------------------------------------------------

template <class T> std::vector<T> values(const Array& a) {
  return a.get<T>().to_vector();
}

TEST(ShiftOperators, AreLeftShiftAndRightShift) {
  Array x = lf::asarray<std::int32_t>({1, -8, 3, 1 << 30});
  Array n = lf::asarray<std::int32_t>({0, 1, 2, 3});
  EXPECT_EQ(values<std::int32_t>(x << n), values<std::int32_t>(lf::left_shift(x, n)));
  EXPECT_EQ(values<std::int32_t>(x >> n), values<std::int32_t>(lf::right_shift(x, n)));
  EXPECT_EQ(values<std::int32_t>(x << 2), (std::vector<std::int32_t>{4, -32, 12, 0}));
  EXPECT_EQ(values<std::int32_t>(x >> 1), (std::vector<std::int32_t>{0, -4, 1, 1 << 29}));
  // A number on the left shifts by each element; a weak scalar takes the array's type.
  Array by = 1 << n;
  EXPECT_EQ(by.dtype(), DType::Int32);
  EXPECT_EQ(values<std::int32_t>(by), (std::vector<std::int32_t>{1, 2, 4, 8}));
  EXPECT_EQ(values<std::int32_t>(-64 >> n), (std::vector<std::int32_t>{-64, -32, -16, -8}));
  // Counts below 0 or of the width or more: NumPy's 0 for <<, the sign for >>.
  Array counts = lf::asarray<std::int32_t>({-1, 32, 40, 31});
  EXPECT_EQ(values<std::int32_t>(lf::full({4}, -5, DType::Int32) << counts),
            (std::vector<std::int32_t>{0, 0, 0, std::int32_t(0x80000000u)}));
  EXPECT_EQ(values<std::int32_t>(lf::full({4}, -5, DType::Int32) >> counts),
            (std::vector<std::int32_t>{-1, -1, -1, -1}));
}

TEST(ShiftOperators, CompoundAssignmentRebinds) {
  Array x = lf::asarray<std::uint8_t>({1, 2, 128});
  const Array before = x;
  x <<= 1;
  EXPECT_EQ(values<std::uint8_t>(x), (std::vector<std::uint8_t>{2, 4, 0}));
  x >>= lf::asarray<std::uint8_t>({1, 2, 0});
  EXPECT_EQ(values<std::uint8_t>(x), (std::vector<std::uint8_t>{1, 1, 0}));
  EXPECT_EQ(values<std::uint8_t>(before), (std::vector<std::uint8_t>{1, 2, 128})) << "other handles keep the value";
  EXPECT_EQ(x.dtype(), DType::UInt8);
}

TEST(ShiftOperators, FloatsAndOutOfRangeNumbersAreDTypeErrors) {
  Array f = lf::asarray({1.0f, 2.0f});
  Array i = lf::asarray<std::uint8_t>({1, 2});
  EXPECT_THROW(f << 1, lf::DTypeError);
  EXPECT_THROW(1 >> f, lf::DTypeError);
  EXPECT_THROW(i << f, lf::DTypeError);
  EXPECT_THROW(i << 1.5, lf::DTypeError);
  EXPECT_THROW(i >> 300, lf::DTypeError) << "300 is out of uint8's range, as NumPy's OverflowError";
  Array g = f;
  EXPECT_THROW(g <<= 1, lf::DTypeError);
}

TEST(ShiftOperators, StreamingStillPrints) {
  Array x = lf::asarray<std::int64_t>({1, 2, 3});
  std::ostringstream os;
  os << x << " " << (x << 2) << " " << (x >> 1) << " " << 7;
  EXPECT_EQ(os.str(), "[1, 2, 3] [ 4,  8, 12] [0, 1, 1] 7");
  std::ostringstream empty;
  empty << Array();
  EXPECT_EQ(empty.str(), "Array(<empty>)");
  EXPECT_EQ(lf::to_string(lf::asarray({true, false})), "[ True, False]");
}

// ---- Operand ------------------------------------------------------------------------------------------------------

TEST(Operand, TwoNumbersGiveAZeroDArrayAsNumPy) {
  Array s = lf::add(1, 2.5);
  EXPECT_EQ(s.dtype(), DType::Float64);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.item<double>(), 3.5);
  Array i = lf::left_shift(3, 4);
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_EQ(i.item<std::int64_t>(), 48);
  EXPECT_EQ(lf::logical_and(true, false).dtype(), DType::Bool);
  EXPECT_EQ(lf::where(lf::asarray({true, false}), 1, 2.5).dtype(), DType::Float64);
}

TEST(Operand, EmptyArraysAreNamed) {
  Array empty;
  try {
    (void)(lf::asarray({1.0}) + empty);
    FAIL() << "no exception";
  } catch (const lf::Error& e) {
    EXPECT_EQ(std::string(e.what()), "add: operand b is an empty (default-constructed) Array");
  }
  try {
    (void)(empty << 1);
    FAIL() << "no exception";
  } catch (const lf::Error& e) {
    EXPECT_EQ(std::string(e.what()), "left_shift: operand a is an empty (default-constructed) Array");
  }
  EXPECT_THROW((void)(+empty), lf::Error) << "unary + of an empty Array throws, as every other operation";
}

TEST(Operand, SliceAssignmentTakesArraysAndNumbers) {
  Array x = lf::zeros({4}, DType::Int16);
  EXPECT_EQ(values<std::int16_t>(x.at(lf::slice(1, 3)).set(7)), (std::vector<std::int16_t>{0, 7, 7, 0}));
  x.set_at({lf::slice(2, lf::none)}, lf::asarray<std::int16_t>({5, 6}));
  EXPECT_EQ(values<std::int16_t>(x), (std::vector<std::int16_t>{0, 0, 5, 6}));
  x.set_at({lf::slice(0, 1)}, 9);
  EXPECT_EQ(values<std::int16_t>(x), (std::vector<std::int16_t>{9, 0, 5, 6}));
  EXPECT_EQ(x.dtype(), DType::Int16) << "a number keeps the array's type";
  EXPECT_THROW(x.at(0).set(40000), lf::DTypeError) << "40000 is out of int16's range";
}

} // namespace
