// Advanced indexing, take and take_along_axis against NumPy (the interpreter LAZYFUSE_TEST_PYTHON names) over
// random shapes and index patterns: negative, repeated, broadcast and empty index arrays, mixed with integers,
// slices, new axes and an ellipsis (NumPy's placement rule), and index arrays that do not broadcast (an IndexError in
// both). Values are exact: the source is arange, so each result element names the source element it read.
#include <lazyfuse/lazyfuse.hpp>

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <variant>
#include <vector>

using namespace lazyfuse;

namespace {

constexpr const char* kScript = R"PY(
import sys
import numpy as np
out = open(sys.argv[2], 'w')
# NumPy's writes are in place; these return the written copy, as lazyfuse's functions do.
def put(a, ind, v, mode='raise'):
    a = a.copy(); np.put(a, ind, v, mode=mode); return a
def put_along_axis(a, ind, v, axis):
    a = a.copy(); np.put_along_axis(a, ind, v, axis); return a
def at(ufunc, a, ind, v):
    a = a.copy(); ufunc.at(a, ind, v); return a
for line in open(sys.argv[1]):
    shape, expr = line.rstrip('\n').split('\t')
    shape = tuple(int(d) for d in shape.split(',') if d)
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    try:
        r = np.asarray(eval(expr, {'np': np, 'x': x, 'put': put, 'put_along_axis': put_along_axis, 'at': at}))
        out.write('ok|' + ','.join(str(d) for d in r.shape) + '|' + ' '.join(str(int(v)) for v in r.ravel()) + '\n')
    except IndexError as e:
        out.write('IndexError\n')
    except ValueError as e:
        out.write('ValueError\n')
out.close()
print('ok')
)PY";

struct Case {
  Shape shape;                            // of x = arange(size).reshape(shape), float64
  std::string python;                     // the expression over x, in NumPy
  std::function<Array(const Array&)> run; // the same in lazyfuse
};

std::string list_text(const std::vector<std::int64_t>& v, const Shape& shape) {
  std::ostringstream os;
  os << "np.array([";
  for (std::size_t k = 0; k < v.size(); ++k) os << (k ? "," : "") << v[k];
  os << "], dtype=np.int64).reshape((";
  for (auto d : shape) os << d << ",";
  os << "))";
  return os.str();
}

// A random integer index array of `shape` for an axis of `size` (in range, negative ones included, repeats likely).
std::pair<Array, std::string> index_array(std::mt19937_64& rng, const Shape& shape, std::int64_t size) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<std::int64_t> v(std::size_t(n), 0);
  for (auto& x : v) x = size == 0 ? 0 : std::int64_t(rng() % std::uint64_t(2 * size)) - size;
  const DType types[] = {DType::Int64, DType::Int32, DType::Int16, DType::UInt8};
  DType t = types[rng() % 4];
  if (t == DType::UInt8)
    for (auto& x : v) x = x < 0 ? x + size : x;
  std::vector<double> as(v.begin(), v.end());
  return {asarray_as(t, as, shape), list_text(v, shape)};
}

Shape random_shape(std::mt19937_64& rng, int max_rank, std::int64_t max_dim) {
  Shape s(std::size_t(rng() % std::uint64_t(max_rank + 1)), 0);
  for (auto& d : s) d = std::int64_t(rng() % std::uint64_t(max_dim + 1));
  return s;
}

Case index_case(std::mt19937_64& rng) {
  Case c;
  std::vector<std::variant<Index, Array>> index;
  c.shape = random_shape(rng, 4, 4);
  while (c.shape.empty()) c.shape = random_shape(rng, 4, 4);
  for (auto& d : c.shape)
    if (d == 0 && rng() % 3) d = 1 + std::int64_t(rng() % 4); // empty axes, but not too often
  const int ndim = int(c.shape.size());
  // The broadcast shape the arrays share (each array a suffix of it with some axes 1), sometimes a mismatch.
  Shape b = random_shape(rng, 2, 3);
  const bool mismatch = rng() % 12 == 0;
  std::ostringstream py;
  py << "x[";
  bool any_array = false, ellipsis_used = false;
  int axis = 0;
  auto sep = [&] { py << (py.tellp() > 2 ? ", " : ""); };
  while (axis < ndim) {
    const auto r = rng() % 10;
    if (r == 0 && !ellipsis_used && axis + 1 < ndim) {
      // An ellipsis standing for the axes up to one before the last.
      ellipsis_used = true;
      sep();
      py << "...";
      index.push_back(Index(Ellipsis{}));
      axis = ndim - 1;
      continue;
    }
    if (r == 1) {
      sep();
      py << "None";
      index.push_back(Index(NewAxis{}));
      continue;
    }
    const std::int64_t size = c.shape[std::size_t(axis)];
    if (r <= 5 || (!any_array && axis + 1 == ndim)) {
      Shape s = b;
      for (auto& d : s)
        if (rng() % 3 == 0) d = 1;
      if (!s.empty() && rng() % 2) s.erase(s.begin());
      if (mismatch && any_array && !s.empty()) s.back() += 1;
      auto [arr, text] = index_array(rng, s, size);
      sep();
      py << text;
      index.push_back(arr);
      any_array = true;
    } else if (r <= 7 && size > 0) {
      const std::int64_t i = std::int64_t(rng() % std::uint64_t(2 * size)) - size;
      sep();
      py << i;
      index.push_back(Index(i));
    } else {
      std::optional<std::int64_t> start, stop;
      if (rng() % 2) start = std::int64_t(rng() % 9) - 4;
      if (rng() % 2) stop = std::int64_t(rng() % 9) - 4;
      const std::int64_t step = rng() % 4 == 0 ? -1 - std::int64_t(rng() % 2) : 1 + std::int64_t(rng() % 2);
      sep();
      py << (start ? std::to_string(*start) : "") << ":" << (stop ? std::to_string(*stop) : "") << ":" << step;
      index.push_back(Index(Slice{start, stop, step}));
    }
    ++axis;
  }
  py << "]";
  c.python = py.str();
  c.run = [index](const Array& x) { return x.index_arrays(index); };
  return c;
}

Case take_case(std::mt19937_64& rng) {
  Case c;
  const bool along = rng() % 2;
  c.shape = random_shape(rng, 3, 4);
  for (auto& d : c.shape) d = std::max<std::int64_t>(d, 1);
  if (c.shape.empty()) c.shape = {3};
  const int ndim = int(c.shape.size());
  std::ostringstream py;
  std::optional<int> axis;
  Array indices;
  if (rng() % 4 == 0) {
    std::int64_t n = 1;
    for (auto d : c.shape) n *= d;
    Shape s = !along ? random_shape(rng, 2, 3) : Shape{std::int64_t(rng() % 5)};
    auto [arr, text] = index_array(rng, s, n);
    indices = arr;
    py << (!along ? "np.take(x, " : "np.take_along_axis(x, ") << text << ", axis=None)";
  } else {
    axis = int(rng() % std::uint64_t(ndim)) - (rng() % 2 ? ndim : 0);
    const int ax = *axis < 0 ? *axis + ndim : *axis;
    Shape s;
    if (!along) {
      s = random_shape(rng, 2, 3);
    } else {
      s = c.shape;
      for (auto& d : s)
        if (rng() % 3 == 0) d = 1;
      s[std::size_t(ax)] = std::int64_t(rng() % 4);
    }
    auto [arr, text] = index_array(rng, s, c.shape[std::size_t(ax)]);
    indices = arr;
    py << (!along ? "np.take(x, " : "np.take_along_axis(x, ") << text << ", axis=" << *axis << ")";
  }
  c.python = py.str();
  c.run = [=](const Array& x) { return along ? take_along_axis(x, indices, axis) : take(x, indices, axis); };
  return c;
}

std::string shape_text(const Shape& s) {
  std::string t = "(";
  for (std::size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + ")";
}

struct Answer {
  std::string error; // "IndexError", "ValueError" or empty
  Shape shape;
  std::vector<std::int64_t> values;
};

// Runs every case in lazyfuse and in NumPy and compares: the shape and exact values, or the same exception. Returns
// {cases that compared values, cases that raised}.
std::pair<int, int> compare_with_numpy(const std::vector<Case>& cases) {
  const char* python = lazyfuse_test::oracle_python();
  const std::string dir = lazyfuse_test::fresh_oracle_dir("gather");
  {
    std::ofstream list(dir + "/cases.txt");
    for (auto& c : cases) {
      for (std::size_t k = 0; k < c.shape.size(); ++k) list << (k ? "," : "") << c.shape[k];
      list << '\t' << c.python << '\n';
    }
  }
  const std::string why_not =
      lazyfuse_test::run_oracle_script(python, dir, kScript, {dir + "/cases.txt", dir + "/answers.txt"});
  if (!why_not.empty()) {
    ADD_FAILURE() << why_not;
    return {0, 0};
  }
  std::vector<Answer> answers;
  {
    std::ifstream in(dir + "/answers.txt");
    for (std::string line; std::getline(in, line);) {
      Answer a;
      // "ok|<shape, comma-separated>|<values>" or the exception's name.
      const auto bar1 = line.find('|'), bar2 = line.rfind('|');
      if (bar1 == std::string::npos) {
        a.error = line;
      } else {
        std::istringstream ss(line.substr(bar1 + 1, bar2 - bar1 - 1));
        for (std::string d; std::getline(ss, d, ',');) a.shape.push_back(std::stoll(d));
        std::istringstream vs(line.substr(bar2 + 1));
        for (std::int64_t v; vs >> v;) a.values.push_back(v);
      }
      answers.push_back(std::move(a));
    }
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(answers.size(), cases.size());
  if (answers.size() != cases.size()) return {0, 0};
  int errors = 0, checked = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const Answer& want = answers[k];
    SCOPED_TRACE("case " + std::to_string(k) + ": x of shape " + shape_text(c.shape) + ", " + c.python + ", " +
                 lazyfuse_test::seed_note());
    std::int64_t n = 1;
    for (auto d : c.shape) n *= d;
    const Array x = arange(n).astype(DType::Float64).reshape(c.shape);
    try {
      const Array r = c.run(x);
      const HostArray<double> got = r.astype(DType::Float64).get<double>();
      if (!want.error.empty()) {
        ADD_FAILURE() << "NumPy raised " << want.error << ", lazyfuse gave shape " << shape_text(r.shape());
        continue;
      }
      EXPECT_EQ(r.shape(), want.shape);
      EXPECT_EQ(got.size(), want.values.size());
      for (std::size_t e = 0; e < std::min(got.size(), want.values.size()); ++e)
        if (std::int64_t(got[e]) != want.values[e]) {
          ADD_FAILURE() << "element " << e << ": " << got[e] << ", NumPy " << want.values[e];
          break;
        }
      ++checked;
    } catch (const IndexError& e) {
      EXPECT_EQ(want.error, "IndexError") << "lazyfuse raised IndexError: " << e.what();
      ++errors;
    } catch (const ValueError& e) {
      EXPECT_EQ(want.error, "ValueError") << "lazyfuse raised ValueError: " << e.what();
      ++errors;
    }
  }
  return {checked, errors};
}

TEST(GatherNumPy, AgreesWithNumPyOnRandomIndexes) {
  LAZYFUSE_NEED_NUMPY(lazyfuse_test::python_missing());
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::vector<Case> cases;
  for (int k = 0; k < 400; ++k) cases.push_back(index_case(rng));
  for (int k = 0; k < 150; ++k) cases.push_back(take_case(rng));
  const auto [checked, errors] = compare_with_numpy(cases);
  EXPECT_GT(checked, 300) << "most cases compare values";
  EXPECT_GT(errors, 0) << "some cases check the errors";
}

// Compositions and masks, over fixed patterns and random shapes: each case is NumPy text and the same in lazyfuse.
TEST(GatherNumPy, CompositionsAndMasksAgreeWithNumPy) {
  LAZYFUSE_NEED_NUMPY(lazyfuse_test::python_missing());
  std::mt19937_64 rng(lazyfuse_test::seed() + 1);
  std::vector<Case> cases;
  auto add = [&](Shape shape, std::string python, std::function<Array(const Array&)> run) {
    cases.push_back({std::move(shape), std::move(python), std::move(run)});
  };
  for (int k = 0; k < 40; ++k) {
    Shape shape = random_shape(rng, 3, 4);
    if (shape.empty()) shape = {4};
    const int nd = int(shape.size());
    const int axis = int(rng() % std::uint64_t(nd)) - (rng() % 2 ? nd : 0);
    const int n = int(rng() % 3);
    const std::string ax = std::to_string(axis);
    add(shape, "np.diff(x, n=" + std::to_string(n) + ", axis=" + ax + ")",
        [=](const Array& x) { return diff(x, n, axis); });
    add(shape, "np.diff(x, axis=" + ax + ", prepend=7, append=np.float64(-1))",
        [=](const Array& x) { return diff(x, 1, axis, full({}, 7.0), full({}, -1.0)); });
    const std::int64_t r = std::int64_t(rng() % 3);
    add(shape, "np.repeat(x, " + std::to_string(r) + ", axis=" + ax + ")",
        [=](const Array& x) { return repeat(x, r, axis); });
    add(shape, "np.repeat(x, 2)", [=](const Array& x) { return repeat(x, 2); });
    const std::int64_t axis_len = shape[static_cast<std::size_t>(axis < 0 ? axis + nd : axis)];
    std::vector<std::int64_t> reps(static_cast<std::size_t>(axis_len), 0);
    std::string reps_text = "[";
    for (auto& v : reps) {
      v = std::int64_t(rng() % 3);
      reps_text += std::to_string(v) + ",";
    }
    reps_text += "]";
    add(shape, "np.repeat(x, " + reps_text + ", axis=" + ax + ")",
        [=](const Array& x) { return repeat(x, reps, axis); });
    std::vector<std::int64_t> tiles(std::size_t(rng() % 4), 0);
    std::string tiles_text = "(";
    for (auto& v : tiles) {
      v = std::int64_t(rng() % 3);
      tiles_text += std::to_string(v) + ",";
    }
    tiles_text += ")";
    add(shape, "np.tile(x, " + tiles_text + ")", [=](const Array& x) { return tile(x, tiles); });
    if (nd >= 2) {
      const std::int64_t d = std::int64_t(rng() % 5) - 2;
      add(shape, "np.tril(x, " + std::to_string(d) + ")", [=](const Array& x) { return tril(x, d); });
      add(shape, "np.triu(x, " + std::to_string(d) + ")", [=](const Array& x) { return triu(x, d); });
    }
    // Masks derived from x itself, so that both sides build the same one.
    const int m = 2 + int(rng() % 3);
    const std::string ms = std::to_string(m);
    add(shape, "x[x % " + ms + " == 1]", [=](const Array& x) { return x(x % double(m) == 1.0); });
    add(shape, "np.stack(np.nonzero(x % " + ms + " == 0))",
        [=](const Array& x) { return stack(nonzero(x % double(m) == 0.0), 0); });
    add(shape, "np.flatnonzero(x % " + ms + ")", [=](const Array& x) { return flatnonzero(x % double(m)); });
    add(shape, "np.argwhere(x % " + ms + " != 0)", [=](const Array& x) { return argwhere(x % double(m) != 0.0); });
    add(shape, "np.extract(x % " + ms + " == 0, x) * 2",
        [=](const Array& x) { return extract(x % double(m) == 0.0, x) * 2.0; });
    if (nd >= 2) {
      // A mask over the first axis, then a slice; and a mask over the leading two axes beside an index array.
      add(shape, "x[x[:, " + std::string(nd > 2 ? "0, 0" : "0") + "] % " + ms + " == 0, 1:]", [=](const Array& x) {
        Array first = nd > 2 ? x(all_of, 0, 0) : x(all_of, 0);
        return x(first % double(m) == 0.0, slice(1, none));
      });
      add(shape, "x[..., x[0, ...] % " + ms + " == 0]",
          [=](const Array& x) { return x(ellipsis, x(0, ellipsis) % double(m) == 0.0); });
      add(shape, "np.compress(np.arange(x.shape[" + ax + "]) % 2 == 0, x, axis=" + ax + ")", [=](const Array& x) {
        const std::int64_t len = x.shape()[std::size_t(axis < 0 ? axis + nd : axis)];
        return compress(arange(len) % 2 == 0, x, axis);
      });
    }
  }
  // Writes: put (every mode, cyclic values, out-of-range indices), put_along_axis and the ufunc.at family.
  for (int k = 0; k < 30; ++k) {
    Shape shape = random_shape(rng, 3, 4);
    if (shape.empty()) shape = {3};
    for (auto& d : shape) d = std::max<std::int64_t>(d, 1);
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    const int nd = int(shape.size());
    const std::int64_t m = 1 + std::int64_t(rng() % 6);
    std::vector<std::int64_t> wide(
        static_cast<std::size_t>(m)); // some out of range: wrap and clip bring them in, raise raises
    for (auto& v : wide) v = std::int64_t(rng() % std::uint64_t(4 * n)) - 2 * n;
    const Array wide_a = asarray(wide, {m});
    const std::string wide_t = list_text(wide, {m});
    const std::int64_t count = 1 + std::int64_t(rng() % 3);
    const std::string vals_t = "np.arange(" + std::to_string(count) + ") * 10 - 7";
    const Array vals = arange(count).astype(DType::Float64) * 10.0 - 7.0;
    for (const char* mode : {"raise", "wrap", "clip"})
      add(shape, "put(x, " + wide_t + ", " + vals_t + ", mode='" + mode + "')",
          [=](const Array& x) { return put(x, wide_a, vals, mode); });
    auto [idx, idx_t] = index_array(rng, {m}, n);
    add(shape, "put(x, " + idx_t + ", " + vals_t + ")", [=, idx = idx](const Array& x) { return put(x, idx, vals); });
    {
      const int axis = int(rng() % std::uint64_t(nd)) - (rng() % 2 ? nd : 0);
      const int ax = axis < 0 ? axis + nd : axis;
      Shape s = shape;
      for (auto& d : s)
        if (rng() % 3 == 0) d = 1;
      s[std::size_t(ax)] = std::int64_t(rng() % 4);
      auto [along, along_t] = index_array(rng, s, shape[std::size_t(ax)]);
      add(shape, "put_along_axis(x, " + along_t + ", -x.max() - 1, " + std::to_string(axis) + ")",
          [=, along = along](const Array& x) { return put_along_axis(x, along, -max(x) - 1.0, axis); });
      add(shape,
          "put_along_axis(x, " + along_t + ", np.arange(3).reshape((3,) + (1,) * " + std::to_string(nd - 1) +
              ")[:1] + 5, " + std::to_string(axis) + ")",
          [=, along = along](const Array& x) {
            Shape one(std::size_t(nd), 1);
            return put_along_axis(x, along, arange(1).reshape(one).astype(DType::Float64) + 5.0, axis);
          });
    }
    // ufunc.at over the first axis with repeated (and negative) indices; values broadcast over the rest.
    auto [rows, rows_t] = index_array(rng, {m}, shape[0]);
    Shape vshape = shape;
    vshape[0] = m;
    std::int64_t vn = 1;
    for (auto d : vshape) vn *= d;
    const std::string v_t = "(np.arange(" + std::to_string(vn) + ") % 7 - 3.0).reshape(" + shape_text(vshape) + ")";
    const auto v_of = [=] { return (arange(vn) % 7 - 3.0).reshape(vshape); };
    add(shape, "at(np.add, x, " + rows_t + ", " + v_t + ")",
        [=, rows = rows](const Array& x) { return x.at(rows).add(v_of()); });
    add(shape, "at(np.multiply, x, " + rows_t + ", " + v_t + ")",
        [=, rows = rows](const Array& x) { return x.at(rows).multiply(v_of()); });
    add(shape, "at(np.minimum, x, " + rows_t + ", " + v_t + ")",
        [=, rows = rows](const Array& x) { return x.at(rows).min(v_of()); });
    add(shape, "at(np.maximum, x, " + rows_t + ", " + v_t + " + 50)",
        [=, rows = rows](const Array& x) { return x.at(rows).max(v_of() + 50.0); });
  }
  add({3, 4}, "np.choose(np.array([[0, 1, 2, 0], [2, 2, 1, 0], [1, 0, 0, 2]]), [x, x * 10, -x])", [](const Array& x) {
    return choose(asarray<std::int64_t>({{0, 1, 2, 0}, {2, 2, 1, 0}, {1, 0, 0, 2}}), {x, x * 10.0, -x});
  });
  add({4}, "np.choose(np.array([[1], [0], [1]]), [x, x + 100])", [](const Array& x) {
    return choose(asarray<std::int64_t>({{1}, {0}, {1}}), {x, x + 100.0});
  });
  add({3}, "np.stack(np.meshgrid(x, x[:2] + 10, indexing='xy'))", [](const Array& x) {
    return stack(meshgrid({x, x(slice(none, 2)) + 10.0}, "xy"), 0);
  });
  add({3}, "np.stack(np.meshgrid(x, x[:2] + 10, x[:1], indexing='ij'))", [](const Array& x) {
    return stack(meshgrid({x, x(slice(none, 2)) + 10.0, x(slice(none, 1))}, "ij"), 0);
  });
  add({3}, "np.meshgrid(x, x[:2] + 10, sparse=True)[1] + np.zeros((1, 1))", [](const Array& x) {
    return meshgrid({x, x(slice(none, 2)) + 10.0}, "xy", true)[1] + zeros({1, 1});
  });
  add({1}, "np.indices((2, 3, 4)) + x", [](const Array& x) { return indices({2, 3, 4}) + x; });
  add({1}, "np.indices((2, 3), sparse=True)[1] + x", [](const Array& x) { return indices_sparse({2, 3})[1] + x; });
  add({3}, "np.compress([True, False, True, True], x)", [](const Array& x) {
    return compress(asarray(std::vector<bool>{true, false, true, true}, {4}), x);
  });
  add({2, 3}, "x[np.array([[True, False, True], [False, False, True]])] + 1", [](const Array& x) {
    return x(asarray(std::vector<bool>{true, false, true, false, false, true}, {2, 3})) + 1.0;
  });
  add({2, 3}, "x[np.array([True, False, True])]", [](const Array& x) {
    return x(asarray(std::vector<bool>{true, false, true}, {3}));
  });
  const auto [checked, errors] = compare_with_numpy(cases);
  EXPECT_GT(checked, 300) << "most cases compare values";
  EXPECT_GT(errors, 0) << "some cases check the errors (compress past the end, a mask of the wrong size)";
}

// sorting.hpp's searching, deduplication and counting, over random shapes with ties and NaNs, against NumPy.
TEST(GatherNumPy, SearchingUniqueAndCountingAgreeWithNumPy) {
  LAZYFUSE_NEED_NUMPY(lazyfuse_test::python_missing());
  std::mt19937_64 rng(lazyfuse_test::seed() + 2);
  std::vector<Case> cases;
  auto add = [&](Shape shape, std::string python, std::function<Array(const Array&)> run) {
    cases.push_back({std::move(shape), std::move(python), std::move(run)});
  };
  const auto nan_at = [](const Array& x, double m) { return where(x % m == 0.0, full({}, std::nan("")), x % 4.0); };
  for (int k = 0; k < 25; ++k) {
    Shape shape = random_shape(rng, 3, 5);
    if (shape.empty()) shape = {4};
    const int nd = int(shape.size());
    const int axis = int(rng() % std::uint64_t(nd));
    for (const char* side : {"left", "right"})
      add(shape, std::string("np.searchsorted(np.sort((x % 5).ravel()), x % 7 - 1, side='") + side + "')",
          [=](const Array& x) { return searchsorted(sort((x % 5.0).ravel(), std::nullopt), x % 7.0 - 1.0, side); });
    add(shape, "np.searchsorted(np.sort(np.where(x % 3 == 0, np.nan, x).ravel()), np.where(x % 2 == 0, np.nan, x))",
        [=](const Array& x) {
          return searchsorted(sort(where(x % 3.0 == 0.0, full({}, std::nan("")), x).ravel(), std::nullopt),
                              where(x % 2.0 == 0.0, full({}, std::nan("")), x));
        });
    for (bool right : {false, true}) {
      const std::string r = right ? "True" : "False";
      add(shape, "np.digitize(x % 9, np.array([1., 3., 3., 6.]), right=" + r + ")", [=](const Array& x) {
        return digitize(x % 9.0, asarray({1.0, 3.0, 3.0, 6.0}), right);
      });
      add(shape, "np.digitize(x % 9, np.array([6., 3., 1.]), right=" + r + ")", [=](const Array& x) {
        return digitize(x % 9.0, asarray({6.0, 3.0, 1.0}), right);
      });
    }
    add(shape, "np.digitize(x, np.array([1., 3., 2.]))", [=](const Array& x) {
      return digitize(x, asarray({1.0, 3.0, 2.0}));
    });
    add(shape, "np.isin(x % 6, np.array([1., 4., 4., 9.]))", [=](const Array& x) {
      return isin(x % 6.0, asarray({1.0, 4.0, 4.0, 9.0}));
    });
    add(shape, "np.isin(np.where(x % 4 == 0, np.nan, x), np.array([np.nan, 2., -0.]), invert=True)",
        [=](const Array& x) {
          return isin(where(x % 4.0 == 0.0, full({}, std::nan("")), x), asarray({std::nan(""), 2.0, -0.0}), true);
        });
    add(shape, "np.unique(x % 4 - 1)", [=](const Array& x) { return unique(x % 4.0 - 1.0); });
    add(shape, "np.unique_all(x % 5).indices", [=](const Array& x) { return unique_all(x % 5.0).indices; });
    add(shape, "np.unique_all(x % 5).inverse_indices",
        [=](const Array& x) { return unique_all(x % 5.0).inverse_indices; });
    add(shape, "np.unique_counts(x % 5).counts", [=](const Array& x) { return unique_counts(x % 5.0).counts; });
    add(shape, "np.unique_all(np.where(x % 3 == 0, np.nan, x % 4)).counts",
        [=](const Array& x) { return unique_all(nan_at(x, 3.0)).counts; });
    add(shape, "np.unique_all(np.where(x % 3 == 0, np.nan, x % 4)).indices",
        [=](const Array& x) { return unique_all(nan_at(x, 3.0)).indices; });
    // (NumPy's own unique_inverse sorts without stability, so the NaNs' inverse indices are its sort's; unique_all's
    // are the stable order's, which lazyfuse's unique_inverse returns.)
    add(shape, "np.unique_all(np.where(x % 3 == 0, np.nan, x % 4)).inverse_indices",
        [=](const Array& x) { return unique_inverse(nan_at(x, 3.0)).inverse_indices; });
    const std::int64_t minlength = std::int64_t(rng() % 9);
    add(shape, "np.bincount((x % 5).astype(np.int64).ravel(), minlength=" + std::to_string(minlength) + ")",
        [=](const Array& x) { return bincount((x % 5.0).astype(DType::Int64).ravel(), std::nullopt, minlength); });
    add(shape, "np.bincount((x % 5).astype(np.int32).ravel(), weights=(x.ravel() % 3) * 2)",
        [=](const Array& x) { return bincount((x % 5.0).astype(DType::Int32).ravel(), (x.ravel() % 3.0) * 2.0); });
    add(shape, "np.bincount((x - 2).astype(np.int64).ravel())",
        [=](const Array& x) { return bincount((x - 2.0).astype(DType::Int64).ravel()); });
    add(shape, "np.lexsort((x % 3, np.floor(x / 4) % 2, -x % 5))", [=](const Array& x) {
      return lexsort({x % 3.0, floor(x / 4.0) % 2.0, -x % 5.0});
    });
    const std::int64_t nbins = 1 + std::int64_t(rng() % 7);
    const std::string b = std::to_string(nbins);
    const auto data = [](const Array& x) { return x * 0.37 % 5.0; };
    add(shape, "np.histogram(x * 0.37 % 5, bins=" + b + ")[0]",
        [=](const Array& x) { return histogram(data(x), nbins).hist; });
    add(shape, "(np.histogram(x * 0.37 % 5, bins=" + b + ")[1] * 2.0**30).astype(np.int64)", [=](const Array& x) {
      return (histogram(data(x), nbins).bin_edges * std::ldexp(1.0, 30)).astype(DType::Int64);
    });
    add(shape, "np.histogram((x * 0.37 % 5).astype(np.float32), bins=" + b + ", range=(0.5, 3.3))[0]",
        [=](const Array& x) {
          return histogram(data(x).astype(DType::Float32), nbins, std::pair{0.5, 3.3}).hist;
        });
    add(shape, "np.histogram((x * 0.37 % 5).astype(np.float32), bins=" + b + ")[0]",
        [=](const Array& x) { return histogram(data(x).astype(DType::Float32), nbins).hist; });
    add(shape, "np.histogram((x % 13).astype(np.int64), bins=" + b + ")[0]",
        [=](const Array& x) { return histogram((x % 13.0).astype(DType::Int64), nbins).hist; });
    add(shape, "np.histogram(x * 0.37 % 5, bins=" + b + ", weights=x % 3)[0]",
        [=](const Array& x) { return histogram(data(x), nbins, std::nullopt, x % 3.0).hist; });
    // Given edges (a repeated edge, values on edges and outside), density, estimators.
    add(shape, "np.histogram(x * 0.37 % 5, bins=np.array([0.5, 1., 1., 2.22, 3.7]))[0]", [=](const Array& x) {
      return histogram(data(x), asarray({0.5, 1.0, 1.0, 2.22, 3.7})).hist;
    });
    add(shape, "np.histogram(x % 7, bins=np.array([0, 2, 3, 6]), weights=x % 3)[0]", [=](const Array& x) {
      return histogram(x % 7.0, asarray<std::int64_t>({0, 2, 3, 6}), x % 3.0).hist;
    });
    add(shape, "np.histogram(x % 7, bins=np.array([3., 2.]))[0]", [=](const Array& x) {
      return histogram(x % 7.0, asarray({3.0, 2.0})).hist;
    });
    // (Densities scaled and rounded; an empty histogram's NaNs as -1.)
    const auto scaled = [](const Array& d) { return where(isnan(d), -1.0, rint(d * 1048576.0)); };
    add(shape, "np.nan_to_num(np.round(np.histogram(x * 0.37 % 5, bins=" + b + ", density=True)[0] * 2.0**20), nan=-1)",
        [=](const Array& x) { return scaled(histogram(data(x), nbins, std::nullopt, std::nullopt, true).hist); });
    add(shape,
        "np.nan_to_num(np.round(np.histogram(x % 7, bins=np.array([0., 2., 3., 6.5]), density=True)[0] * 2.0**20), "
        "nan=-1)",
        [=](const Array& x) {
          return scaled(histogram(x % 7.0, asarray({0.0, 2.0, 3.0, 6.5}), std::nullopt, true).hist);
        });
    for (const char* estimator : {"auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"}) {
      const std::string e = std::string("'") + estimator + "'";
      add(shape, "np.histogram(x * 0.37 % 5, bins=" + e + ")[0]",
          [=](const Array& x) { return histogram(data(x), std::string(estimator)).hist; });
      add(shape, "(np.histogram_bin_edges(x * 0.37 % 5, bins=" + e + ", range=(0.5, 3.3)) * 2.0**30).astype(np.int64)",
          [=](const Array& x) {
            return (histogram_bin_edges(data(x), std::string(estimator), std::pair{0.5, 3.3}) * std::ldexp(1.0, 30))
                .astype(DType::Int64);
          });
      add(shape, "np.histogram((x % 13).astype(np.int64), bins=" + e + ")[0]",
          [=](const Array& x) { return histogram((x % 13.0).astype(DType::Int64), std::string(estimator)).hist; });
    }
    add(shape, "np.histogram(x, bins='blocks')[0]",
        [=](const Array& x) { return histogram(x, std::string("blocks")).hist; });
    const std::int64_t len = shape[std::size_t(axis)];
    const std::int64_t kth = len == 0 ? 0 : std::int64_t(rng() % std::uint64_t(len));
    add(shape,
        "np.take(np.partition(-x % 7, " + std::to_string(kth) + ", axis=" + std::to_string(axis) + "), [" +
            std::to_string(kth) + "], axis=" + std::to_string(axis) + ")",
        [=](const Array& x) { return take(partition(-x % 7.0, kth, axis), asarray<std::int64_t>({kth}), axis); });
  }
  const auto [checked, errors] = compare_with_numpy(cases);
  EXPECT_GT(checked, 400) << "most cases compare values";
  EXPECT_GT(errors, 0) << "some cases check the errors (non-monotonic bins, negative counts, kth out of bounds)";
}

} // namespace
