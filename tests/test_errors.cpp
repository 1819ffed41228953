// Errors a user meets with a default-constructed (empty) Array: every public function that takes an Array throws
// lazyfuse::Error naming the function and the operand ("add: operand b is an empty (default-constructed) Array"),
// never dereferences the missing node. Backend-agnostic: nothing here reaches a kernel.
#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::slice;

namespace {

struct Case {
  std::string what;          // the call, for the failure message
  std::function<void()> run; // must throw lf::Error
  std::string op, operand;   // the message must be exactly "<op>: <operand> is an empty (default-constructed) Array"
};

void expect_cases(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    const std::string want = c.op + ": " + c.operand + " is an empty (default-constructed) Array";
    try {
      c.run();
      ADD_FAILURE() << c.what << ": no exception; expected \"" << want << "\"";
    } catch (const lf::Error& e) {
      EXPECT_EQ(std::string(e.what()), want) << c.what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.what << ": threw a non-lazyfuse exception: " << e.what();
    }
  }
}

// A Case for `expr`, which may use `e` (the empty Array) and `x` (a valid one).
#define CASE(expr, op, operand)                                                                                        \
  Case {                                                                                                               \
#expr, [=] { (void)(expr); }, op, operand                                                                          \
  }

const Array e;

Array valid() {
  return lf::arange(6).astype(DType::Float32).reshape({2, 3});
}

} // namespace

TEST(EmptyArray, ValidReportsIt) {
  EXPECT_FALSE(e.valid());
  EXPECT_TRUE(valid().valid());
}

TEST(EmptyArray, Properties) {
  expect_cases({
      CASE(e.dtype(), "dtype", "the array"),
      CASE(e.shape(), "shape", "the array"),
      CASE(e.ndim(), "ndim", "the array"),
      CASE(e.size(), "size", "the array"),
      CASE(e.is_materialized(), "is_materialized", "the array"),
  });
}

// Every unary and binary function of the op table, in each of its forms; the message names the function.
TEST(EmptyArray, EveryElementwiseOp) {
  const Array x = valid();
  std::vector<Case> cases;
#define LAZYFUSE_UNARY(Enum, fn, ...) cases.push_back(CASE(lf::fn(e), #fn, "the array"));
#define LAZYFUSE_BINARY(Enum, fn, ...)                                                                                 \
  cases.push_back(CASE(lf::fn(e, x), #fn, "operand a"));                                                               \
  cases.push_back(CASE(lf::fn(x, e), #fn, "operand b"));                                                               \
  cases.push_back(CASE(lf::fn(e, e), #fn, "operand a"));                                                               \
  cases.push_back(CASE(lf::fn(e, 2.0), #fn, "operand a"));                                                             \
  cases.push_back(CASE(lf::fn(2, e), #fn, "operand b"));
#include <lazyfuse/ops.def>
  expect_cases(cases);
  EXPECT_GE(cases.size(), 30u); // the op table was included
}

TEST(EmptyArray, OperatorsAndAliases) {
  const Array x = valid();
  expect_cases({
      CASE(x + e, "add", "operand b"),
      CASE(e - x, "subtract", "operand a"),
      CASE(e * 2.0f, "multiply", "operand a"),
      CASE(1 / e, "true_divide", "operand b"),
      CASE(lf::divide(e, x), "true_divide", "operand a"),
      CASE(lf::mod(x, e), "remainder", "operand b"),
      CASE(lf::pow(e, 2), "power", "operand a"),
      CASE(e % 2, "remainder", "operand a"),
      CASE(e == x, "equal", "operand a"),
      CASE(x < e, "less", "operand b"),
      CASE(e && x, "logical_and", "operand a"),
      CASE(x | e, "bitwise_or", "operand b"),
      CASE(e ^ true, "bitwise_xor", "operand a"),
      CASE(-e, "negative", "the array"),
      CASE(!e, "logical_not", "the array"),
      CASE(~e, "invert", "the array"),
      CASE(lf::absolute(e), "abs", "the array"),
      CASE(lf::fabs(e), "abs", "the array"),
  });
  // Compound assignment rebinds the left handle to the sum: the message is the op's.
  Array a;
  EXPECT_THROW(a += x, lf::Error);
  Array b = valid();
  EXPECT_THROW(b *= e, lf::Error);
  EXPECT_THROW(a -= 1.0, lf::Error);
  try {
    b /= e;
  } catch (const lf::Error& err) {
    EXPECT_STREQ(err.what(), "true_divide: operand b is an empty (default-constructed) Array");
  }
  EXPECT_TRUE(b.valid()) << "a failed compound assignment leaves the handle as it was";
}

TEST(EmptyArray, WhereClipAstype) {
  const Array x = valid(), m = x > 1.0;
  expect_cases({
      CASE(lf::where(e, x, x), "where", "operand cond"),
      CASE(lf::where(e, e, e), "where", "operand cond"),
      CASE(lf::where(m, e, e), "where", "operand a"),
      CASE(lf::where(m, e, x), "where", "operand a"),
      CASE(lf::where(m, x, e), "where", "operand b"),
      CASE(lf::where(e, x, 0.0), "where", "operand cond"),
      CASE(lf::where(m, e, 0.0), "where", "operand a"),
      CASE(lf::where(m, 0, e), "where", "operand b"),
      CASE(lf::where(e, 1, 0.0), "where", "operand cond"),
      CASE(lf::clip(e, x, x), "clip", "operand a"),
      CASE(lf::clip(x, e, x), "clip", "operand lo"),
      CASE(lf::clip(x, x, e), "clip", "operand hi"),
      CASE(lf::clip(e, 0, 1.0), "clip", "the array"),
      CASE(e.astype(DType::Int32), "astype", "the array"),
      CASE(lf::astype(e, DType::Int32), "astype", "the array"),
  });
}

TEST(EmptyArray, ViewsAndShapeOps) {
  const Array x = valid();
  expect_cases({
      CASE(e.reshape({1}), "reshape", "the array"),
      CASE(e.ravel(), "reshape", "the array"),
      CASE(lf::reshape(e, {1}), "reshape", "the array"),
      CASE(e.transpose(), "transpose", "the array"),
      CASE(e.T(), "transpose", "the array"),
      CASE(e.transpose({1, 0}), "transpose", "the array"),
      CASE(lf::transpose(e), "transpose", "the array"),
      CASE(lf::transpose(e, {1, 0}), "transpose", "the array"),
      CASE(lf::permute(e, {1, 0}), "permute", "the array"),
      CASE(lf::expand_dims(e, 0), "expand_dims", "the array"),
      CASE(lf::squeeze(e), "squeeze", "the array"),
      CASE(lf::broadcast_to(e, {2, 3}), "broadcast_to", "the array"),
      CASE(lf::flip(e), "flip", "the array"),
      CASE(lf::roll(e, 1), "roll", "the array"),
      CASE(lf::pad(e, {{1, 1}}), "pad", "the array"),
      CASE(lf::concatenate({x, e}), "concatenate", "array 1"),
      CASE(lf::stack({e, x}), "stack", "array 0"),
  });
}

TEST(EmptyArray, IndexingAndSliceAssignment) {
  const Array x = valid();
  expect_cases({
      CASE(e(0), "index", "the array"),
      CASE(e(slice(0, 1), lf::newaxis), "index", "the array"),
      CASE(e.index_with({lf::Index(lf::ellipsis)}), "index", "the array"),
      CASE(e.at(0).set(x), "at().set", "the array"),
      CASE(e.at(0).set(1.0), "at().set", "the array"),
      CASE(x.at(0).set(e), "at().set", "the value"),
      CASE(Array(e).set_at({lf::Index(std::int64_t(0))}, x), "set_at", "the array"),
      CASE(Array(x).set_at({lf::Index(std::int64_t(0))}, e), "set_at", "the value"),
  });
}

TEST(EmptyArray, CreationLike) {
  expect_cases({
      CASE(lf::zeros_like(e), "zeros_like", "the array"),
      CASE(lf::ones_like(e), "ones_like", "the array"),
      CASE(lf::full_like(e, 1.0), "full_like", "the array"),
      CASE(lf::empty_like(e), "empty_like", "the array"),
  });
}

TEST(EmptyArray, Materialization) {
  const Array x = valid();
  expect_cases({
      CASE(e.get<float>(), "get", "the array"),
      CASE(e.item<double>(), "item", "the array"),
      CASE(e.eval(), "eval", "the array"),
      CASE(lf::eval(x, e), "eval", "array 1"),
      CASE(e.data_ptr(), "data_ptr", "the array"),
  });
}

TEST(EmptyArray, Reductions) {
  const Array x = valid();
  expect_cases({
      CASE(lf::sum(e), "sum", "the array"),
      CASE(lf::prod(e, 0), "prod", "the array"),
      CASE(lf::min(e), "min", "the array"),
      CASE(lf::max(e, {0, 1}, true), "max", "the array"),
      CASE(lf::amin(e), "min", "the array"),
      CASE(lf::amax(e), "max", "the array"),
      CASE(lf::argmax(e), "argmax", "the array"),
      CASE(lf::argmin(e, 1), "argmin", "the array"),
      CASE(lf::any(e), "any", "the array"),
      CASE(lf::all(e), "all", "the array"),
      CASE(lf::mean(e), "mean", "the array"),
      CASE(lf::var(e), "var", "the array"),
      CASE(lf::stddev(e), "stddev", "the array"),
      CASE(lf::count_nonzero(e), "count_nonzero", "the array"),
      CASE(lf::logsumexp(e), "logsumexp", "the array"),
      CASE(lf::isclose(e, x), "isclose", "operand a"),
      CASE(lf::isclose(x, e), "isclose", "operand b"),
      CASE(lf::allclose(e, x), "allclose", "operand a"),
      CASE(lf::allclose(x, e), "allclose", "operand b"),
      CASE(lf::array_equal(e, x), "array_equal", "operand a"),
      CASE(lf::array_equal(x, e), "array_equal", "operand b"),
      CASE(lf::linalg::norm(e), "linalg.norm", "the array"),
      CASE(lf::linalg::norm(e, 1), "linalg.norm", "the array"),
      CASE(lf::linalg::norm(e, "fro"), "linalg.norm", "the array"),
  });
}

// Printing is for looking at a value: an empty handle prints as such instead of throwing (docs/semantics.md).
TEST(EmptyArray, PrintsAsEmpty) {
  EXPECT_EQ(lf::to_string(e), "Array(<empty>)");
  std::ostringstream os;
  os << e;
  EXPECT_EQ(os.str(), "Array(<empty>)");
}

// A literal 0 is a number (the count of non-zeros), never the string overload's null pointer; a null string throws.
TEST(Errors, NormOrderNullPointer) {
  EXPECT_EQ(lf::linalg::norm(lf::asarray({0.0, 2.0, -3.0}), 0).item<double>(), 2.0);
  const char* ord = nullptr;
  try {
    (void)lf::linalg::norm(valid(), ord);
    ADD_FAILURE() << "no exception";
  } catch (const lf::Error& err) {
    EXPECT_NE(std::string(err.what()).find("linalg.norm: the norm order is a null pointer"), std::string::npos)
        << err.what();
  }
}
