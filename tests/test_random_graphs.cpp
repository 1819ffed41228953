// Randomized differential test: random programs built through the public API, checked against two oracles:
//  * an independent reference evaluator written here from scratch (tests/random_graphs/reference.h: float64
//    values with a per-element forward error bound; integers and booleans exact). Nothing here calls the
//    library's op table, interpreter or dtype rules;
//  * NumPy 2 (tests/numpy_oracle.py), which decides dtypes, shapes, promotion, indexing and NaN rules on its own:
//    each program is also written as Python and evaluated by NumPy, in batches of programs per Python process.
//
// Each case makes 1-4 random leaves (float32, float64, int32, int64, bool, float16, bfloat16, complex64,
// complex128; rank 0-4; sometimes large so the CPU backend's chunking and threading run), then either
//  * (an "elementwise/view" program) applies 3-25 random operations: elementwise ops with broadcasting and weak
//    C++ scalars, astype, views, concatenate / stack / pad / at().set, eval() of intermediates; a tenth of them
//    start from the transpose of a matrix with both axes of 16-150 elements (the GPU's transposed tiles); or
//  * (a reduction program) a few random operations, then 2-4 reductions (sum, prod, min, max, mean, var, std with
//    ddof 0 or 1, argmin, argmax, any, all, count_nonzero; over all axes, some, one, or none, with and without
//    keepdims), each consumed in the shapes users write around reductions: through views (index, slices,
//    transpose, flip, roll), broadcasts (binary ops with arrays of other shapes and ranks, broadcast_to), reshapes,
//    joins (concatenate, stack, pad), at().set (the reduction as value or as base), or evaluated with
//    lazyfuse::eval beside roots of other shapes and ranks;
// or (an "index" program, issues 17 and 18) a few random operations, then 2-3 gathers (take, take_along_axis, x(index
// arrays), x(mask)), index writes (x.at(index arrays or mask).add(v)), scans (cumsum, cumprod, nancumsum along an axis
// or flattened, sometimes with a dtype) or sorts (sort, argsort; take_along_axis of an argsort), each of an
// elementwise expression, a view or a broadcast (or of a pool value as it is), and consumed by elementwise work, a
// reduction, a view or join, or evaluated with lazyfuse::eval beside its input. Index arrays are int64 (sometimes
// int32) leaves in range, negative indices and repeats included; a mask is a comparison of an array of the program
// with a threshold, and is generated only where every element of it is certain (its true positions decide the
// result's size). Their inputs are sometimes new leaves with a long axis (scans across the library's tiles) or with
// NaNs and infinities (nancumsum, NumPy's sort order). The other programs make these operations now and then too;
// and compares dtype, shape and values of the results. Every reduction program counts in the categories
// "reduce-<full|partial|keepdims> x <consumer>" it exercised, every program in the categories of the gathers, scans
// and sorts it made and of their contexts; the test prints how many programs of each category and of each reduction
// ran, and fails when one ran fewer times than its minimum (a share of the case count).
//
// Tolerances. The reference rounds to float32 after every op that the library computes in float32 (the library
// computes each op in its promoted dtype). Each element carries an absolute error bound, propagated op by op:
//  * correctly rounded ops (+ - * / sqrt, casts) whose result is exact on exact inputs stay exact (error 0);
//    otherwise they add 1 ulp of the result (covers GPU fma contraction and the reference's double rounding);
//  * exp, log, sin, cos, tanh, erf add 4 ulps (CUDA's are within 2 ulps, glibc's within 1, NumPy's float32 SIMD
//    functions within 4);
//  * sums add gamma(d) * sum(|x_i| + e_i) to the sum of the input bounds, d the deepest addition chain of the
//    orders the library uses (sum_depth in reference.h: pairwise on the CPU, strided shares then trees on the GPU);
//    a sum of exact terms whose partial sums are all representable is exact; products likewise (ref_fprod);
//  * min, max, argmin, argmax, any, all, count_nonzero are exact unless an input's bound makes them ambiguous
//    (argmax: another element could be the first maximum within the bounds);
//  * errors of the inputs propagate through each op's Lipschitz bound on the interval [x - e, x + e].
//  * gathers copy elements with their bounds (an index with a nonzero bound makes its elements uncertain);
//    x.at(index).add(v) sums the values meeting at one element as a sum does (gamma of their count: any order),
//    adds that to x once and converts to x's type, as docs/semantics.md has it;
//  * a scan's element k combines the k + 1 terms of its prefix along some tree, of depth at most k, whatever the
//    library's order (codegen/Schedule.h, "The scan order"; no tile size is assumed): a cumulative sum adds
//    gamma(k) * sum(|x_i| + e_i) over the prefix to the sum of the prefix's bounds, a cumulative product bounds as a
//    product does; integer scans are exact (int64, wrapping as NumPy's);
//  * a sort is 1-Lipschitz in the max norm: each sorted element is within the largest bound of its line; an argsort
//    index is exact where the element of that rank is certain (its interval meets no other element's; exact equal
//    elements keep their stable order), and uncertain elsewhere.
// Discrete ops (floor, ceil, trunc, comparisons, float->int/bool casts, where's condition, arg reductions) give an
// exact result when the interval of their input cannot cross a discontinuity, and otherwise mark the element
// "uncertain" (error = inf): uncertain elements are skipped, and their share is reported, and a run fails when
// over 10% of its cases are "blind" (mostly uncertain). So integer/bool results are compared exactly, float
// results within a bound that is a few ulps per op. NumPy's own error is taken as that same bound: the oracle
// accepts |lazyfuse - numpy| <= 2 * bound, skips uncertain elements, and requires NaN at the same places.
//
// The new types (docs/semantics.md, "Half-precision types" and "Complex numbers"):
//  * float16 and bfloat16 values are rounded to the type after every op (the reference rounds the op's exact
//    result once; the library computes in float32 and rounds, which the op's one ulp covers); their sums and
//    products accumulate in float32 (gamma of float32's unit roundoff) and round once (one ulp of the half type);
//  * complex values are pairs of parts, computed in long double and rounded per part, with ONE bound per element
//    on the modulus of the error, |z_library - z_reference| <= bound (NaN and infinities compared per part):
//    + and - add 2 ulps of the part type at the result's modulus, * and square 3 (at |x| |y|), true_divide 12
//    (Smith's quotient with a rounded reciprocal, normwise), exp 8, abs 2; ordering comparisons, minimum,
//    maximum, min, max, argmin and argmax are lexicographic (real parts first) and certain when the real parts
//    are farther apart than their bounds (or all inputs are exact); sums bound the modulus by gamma(depth) times
//    the sum of the moduli, products by gamma(3 n) of the largest possible product. The generator makes the
//    complex ops the reference models (arithmetic, abs, exp, square, real, imag, conj (also of real arrays),
//    comparisons, logical ops, where, casts to and from every type, views, joins, assignments, sum, prod, mean,
//    min, max, argmin, argmax, any, all, count_nonzero) and no sin, cos, tanh, var or std of complex values;
//    floor, ceil and trunc of complex values must throw DTypeError (NumPy raises TypeError).
//
// Environment: LAZYFUSE_TEST_RANDOM_GRAPHS = number of cases (default 300), LAZYFUSE_TEST_RANDOM_SEED = base seed
// (default: random, printed), LAZYFUSE_TEST_RANDOM_CASE = run only that case number (to reproduce one failure),
// LAZYFUSE_TEST_RANDOM_VERBOSE=1 prints every case's program, LAZYFUSE_TEST_PYTHON = a Python with NumPy >= 2
// (without it the NumPy oracle is skipped, and under CI=true that is a failure).
#include <lazyfuse/lazyfuse.hpp>

#include "random_graphs/numpy_oracle.h"
#include "random_graphs/reference.h"
#include "runtime/LlvmCodegen.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <unistd.h>
#include <variant>
#include <vector>

namespace {

using namespace random_graphs;

// ---------------------------------------------------------------------------------------------------------
// Python text of the same program (NumPy; `nx` is NumPy with lazyfuse's documented differences, numpy_oracle.py)
// ---------------------------------------------------------------------------------------------------------

std::string py_dtype(DType t) {
  switch (t) {
  case DType::Bool: return "np.bool_";
  case DType::Int32: return "np.int32";
  case DType::Int64: return "np.int64";
  case DType::Float16: return "np.float16";
  case DType::BFloat16: return "ml_dtypes.bfloat16";
  case DType::Float32: return "np.float32";
  case DType::Float64: return "np.float64";
  case DType::Complex64: return "np.complex64";
  case DType::Complex128: return "np.complex128";
  default: break; // a type these graphs do not generate
  }
  return "?";
}

std::string py_tuple(const std::vector<i64>& s) {
  std::string out = "(";
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}
std::string py_tuple(const std::vector<int>& s) {
  return py_tuple(std::vector<i64>(s.begin(), s.end()));
}

// The components of an index as Python writes them inside [].
std::string py_index(const std::vector<lf::Index>& idx) {
  std::string out;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (k) out += ", ";
    if (auto* i = std::get_if<i64>(&idx[k])) {
      out += std::to_string(*i);
    } else if (auto* s = std::get_if<lf::Slice>(&idx[k])) {
      out += (s->start ? std::to_string(*s->start) : "") + ":" + (s->stop ? std::to_string(*s->stop) : "");
      if (s->step != 1) out += ":" + std::to_string(s->step);
    } else if (std::holds_alternative<lf::NewAxis>(idx[k])) {
      out += "None";
    } else {
      out += "...";
    }
  }
  return out;
}
std::string py_subscript(const std::string& x, const std::vector<lf::Index>& idx) {
  return x + "[" + (idx.empty() ? std::string("()") : py_index(idx)) + "]";
}
std::string py_index_object(const std::vector<lf::Index>& idx) {
  return idx.empty() ? std::string("()") : "np.s_[" + py_index(idx) + "]";
}

// ---------------------------------------------------------------------------------------------------------
// the generator
// ---------------------------------------------------------------------------------------------------------

// x.at(i0, i1, ...) for a run-time list of index components.
Array::At at_of(const Array& x, const std::vector<lf::Index>& i) {
  switch (i.size()) {
  case 0: return x.at();
  case 1: return x.at(i[0]);
  case 2: return x.at(i[0], i[1]);
  case 3: return x.at(i[0], i[1], i[2]);
  case 4: return x.at(i[0], i[1], i[2], i[3]);
  case 5: return x.at(i[0], i[1], i[2], i[3], i[4]);
  case 6: return x.at(i[0], i[1], i[2], i[3], i[4], i[5]);
  case 7: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6]);
  case 8: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7]);
  case 9: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7], i[8]);
  default: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7], i[8], i[9]);
  }
}

// How a reduction's result is shaped: all axes reduced, some (or one) of them, or kept as 1 (any axes).
enum class RKind { Full, Partial, Keepdims };
const char* kind_name(RKind k) {
  return k == RKind::Full ? "reduce-full" : (k == RKind::Partial ? "reduce-partial" : "reduce-keepdims");
}
// How a program consumes a reduction's result.
enum class Consumer { View, Broadcast, Reshape, Join, AtSet, MultiOutput };
constexpr Consumer kConsumers[] = {Consumer::View, Consumer::Broadcast, Consumer::Reshape,
                                   Consumer::Join, Consumer::AtSet,     Consumer::MultiOutput};
const char* consumer_name(Consumer c) {
  static const char* names[] = {"view", "broadcast", "reshape", "join", "at-set", "multi-output"};
  return names[int(c)];
}
std::string category(RKind k, Consumer c) {
  return std::string(kind_name(k)) + " x " + consumer_name(c);
}
const char* kPlainCategory = "elementwise/view (no reduction)";
const char* kLaterOps = "(ops after the reductions)";
const char* kEmptyReduction = "(empty min/max/argmin/argmax: an error)";

// The operations of issues 17 and 18, each a category of its own (the programs that made one).
enum class Fam { Take, TakeAlong, IndexArrays, Mask, AddAt, Cumsum, Cumprod, Nancumsum, Sort, Argsort };
constexpr int kFamilies = 10;
const char* family_name(Fam f) {
  static const char* names[] = {
      "gather take", "gather take_along_axis", "gather x(index arrays)", "gather x(mask)", "at(index arrays).add",
      "scan cumsum", "scan cumprod",           "scan nancumsum",         "sort",           "argsort"};
  return names[int(f)];
}
// Where an index program puts them: what they read, and what reads them.
enum class FamIn { Plain, Elementwise, View, Broadcast };
enum class FamOut { Root, Elementwise, Reduction, ViewJoin, MultiOutput };
const char* fam_in_name(FamIn c) {
  static const char* names[] = {"", "gather/scan/sort of an elementwise expression", "gather/scan/sort of a view",
                                "gather/scan/sort of a broadcast"};
  return names[int(c)];
}
const char* fam_out_name(FamOut c) {
  static const char* names[] = {"", "gather/scan/sort then elementwise", "gather/scan/sort then a reduction",
                                "gather/scan/sort then a view or join", "gather/scan/sort evaluated with its input"};
  return names[int(c)];
}

// An advanced index (integer arrays, integers, slices; or a mask's positions) as the library, the reference, C++
// and Python take it.
struct AdvIndex {
  std::vector<std::variant<lf::Index, Array>> lib;
  std::vector<AdvComp> ref;
  std::string cpp, py; // the components, as written inside x(...) and x[...]
};

// x.at(c...) for a run-time list of at most 4 components, each an Index or an Array.
template <class... P>
Array::At at_adv(const Array& x, const std::vector<std::variant<lf::Index, Array>>& c, std::size_t k, const P&... p) {
  if (k == c.size()) return x.at(p...);
  if constexpr (sizeof...(P) < 4) {
    if (const Array* a = std::get_if<Array>(&c[k])) return at_adv(x, c, k + 1, p..., *a);
    return at_adv(x, c, k + 1, p..., std::get<lf::Index>(c[k]));
  } else {
    throw std::logic_error("at_adv: more than 4 index components");
  }
}

// What a checked result belongs to: the category of the program part that made it, and that part's reduction.
struct Label {
  std::string category, reduction;
};

struct Val {
  Array a;
  HT r;
  std::string name;
  std::optional<RKind> kind;      // set on a reduction's result
  std::optional<ReduceSpec> spec; // and how it was reduced
};

// Per result dtype: ops that made it, elements checked, uncertain ones skipped, and the largest error / tolerance.
struct TypeStats {
  i64 ops = 0, checked = 0, uncertain = 0;
  double worst_ratio = 0;
  std::string worst_where;
};

struct Stats {
  i64 cases = 0, blind_cases = 0, ops = 0, checked = 0, uncertain = 0, float32_checked = 0, exact_checked = 0;
  double worst_ratio = 0;                        // largest |library - reference| / tolerance seen
  std::string worst_where;                       // and where
  std::map<std::string, i64> categories, failed; // programs per category, and those that failed
  std::map<std::string, i64> reductions;         // programs per reduction function
  std::map<std::string, TypeStats> per_type;     // per result dtype
  std::map<std::string, i64> leaf_types;         // cases with a leaf of each dtype
};

bool env_flag(const char* name) {
  const char* s = std::getenv(name);
  return s && *s && std::string(s) != "0";
}

// An internal error of the library aborts the process (LAZYFUSE_ASSERT): a handler of SIGABRT and SIGSEGV names the
// case that was running, then hands the signal to the handler it replaced (the default, or a sanitizer's, which
// then reports as it would have).
char g_crash_note[4096];
struct sigaction g_previous[2];
void set_crash_note(const std::string& s) {
  std::snprintf(g_crash_note, sizeof g_crash_note, "%s", s.c_str());
}
extern "C" void on_crash(int sig) {
  const ssize_t written = write(2, g_crash_note, std::strlen(g_crash_note));
  (void)written;
  sigaction(sig, &g_previous[sig == SIGABRT ? 0 : 1], nullptr);
  raise(sig); // delivered once this handler returns (a fault: the instruction faults again)
}
// Installs the handlers for a run of cases.
struct CrashNote {
  CrashNote() {
    g_crash_note[0] = 0;
    struct sigaction a {};
    a.sa_handler = on_crash;
    sigemptyset(&a.sa_mask);
    sigaction(SIGABRT, &a, &g_previous[0]);
    sigaction(SIGSEGV, &a, &g_previous[1]);
  }
  ~CrashNote() {
    sigaction(SIGABRT, &g_previous[0], nullptr);
    sigaction(SIGSEGV, &g_previous[1], nullptr);
  }
  CrashNote(const CrashNote&) = delete;
  CrashNote& operator=(const CrashNote&) = delete;
};

// Views, joins and assignments a generator may pick from.
enum ViewSet { kViews = 1, kBroadcastTo = 2, kReshapes = 4, kAnyView = 7 };
enum CombineSet { kConcat = 1, kStack = 2, kPad = 4, kSet = 8, kAnyCombine = 15 };

class Case {
public:
  // `record`: this run counts categories and writes the NumPy program (the replay run of a case does neither).
  Case(std::uint64_t seed, Stats& stats, bool record) : rng_(seed), stats_(stats), record_(record) {}

  void run();
  std::string program() const { return prog_.str(); }
  // The categories and reduction functions this program exercised (so far, if it failed).
  const std::set<std::string>& categories() const { return categories_; }
  const std::set<std::string>& reductions() const { return reductions_; }
  // The dtypes of this program's leaves.
  const std::set<std::string>& leaf_types() const { return leaf_types_; }
  // What the crash handler says about this case: how to rerun it, and what it was checking.
  void set_note(std::string repro) {
    repro_ = std::move(repro);
    update_note();
  }
  const Label& current() const { return current_; }
  // A result of `l` failed (or threw): its category and reduction count as failed.
  void mark_failed(const Label& l) {
    if (!l.category.empty()) failed_.insert(l.category);
    if (!l.reduction.empty()) failed_.insert(std::string("reduction ") + l.reduction);
  }
  const std::set<std::string>& failed_labels() const { return failed_; }
  // Whether run() got to its end (no exception).
  bool finished() const { return finished_; }
  // The program as one JSON line for tests/numpy_oracle.py.
  std::string numpy_record(i64 case_no, const std::string& seed_text) const;
  // Every checked result's values, in the order checked, as exact float64 conversions (a complex result: its real
  // parts, then its imaginary parts); int64 beyond 2^53 rounds.
  const std::vector<std::vector<double>>& checked_values() const { return checked_values_; }

private:
  std::mt19937_64 rng_;
  Stats& stats_;
  bool record_;
  std::vector<Val> pool_;
  std::ostringstream prog_;
  std::vector<std::string> py_;     // Python statements
  std::vector<std::string> data_;   // JSON arrays: the leaves' values (D[k] in the Python text)
  std::vector<std::string> checks_; // JSON objects: lazyfuse's results with the reference's bounds
  std::set<std::string> categories_, reductions_, leaf_types_;
  std::vector<std::pair<std::size_t, Label>> roots_;               // values to check, one at a time
  std::vector<std::pair<std::vector<std::size_t>, Label>> groups_; // to evaluate together with lazyfuse::eval
  Label current_;                // what the result being evaluated or checked belongs to
  std::set<std::string> failed_; // the categories and reductions ("reduction sum") of results that failed
  bool finished_ = false;
  std::vector<std::vector<double>> checked_values_;
  int counter_ = 0;
  std::string repro_;
  const bool stream_ = record_ && env_flag("LAZYFUSE_TEST_RANDOM_VERBOSE");

  void update_note() {
    if (repro_.empty()) return;
    std::string cats;
    for (auto& c : categories_) cats += (cats.empty() ? "" : ", ") + c;
    const std::string doing = current_.category.empty()
                                  ? std::string("building the program")
                                  : "checking a result of [" + current_.category + "]" +
                                        (current_.reduction.empty() ? "" : " [reduction " + current_.reduction + "]");
    set_crash_note("test_random_graphs: crashed in " + repro_ + " while " + doing + "; the program's categories: " +
                   cats + "\nrerun it with LAZYFUSE_TEST_RANDOM_VERBOSE=1 to see its program up to the crash\n");
  }
  // One line of the C++ program (verbose: printed as it is built, so that a crash shows the program up to it).
  void emit(const std::string& line) {
    prog_ << "  " << line << "\n";
    if (stream_) {
      std::printf("  %s\n", line.c_str());
      std::fflush(stdout);
    }
  }
  void note_category(const std::string& c) {
    if (!record_) return;
    categories_.insert(c);
    update_note();
  }

  i64 uni(i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng_); }
  double unif(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <class T> const T& pick(const std::vector<T>& v) { return v[std::size_t(uni(0, i64(v.size()) - 1))]; }

  DType rand_dtype() {
    static const DType all[] = {DType::Float32, DType::Float64,  DType::Int32,     DType::Int64,     DType::Bool,
                                DType::Float16, DType::BFloat16, DType::Complex64, DType::Complex128};
    static const int weights[] = {24, 19, 13, 11, 11, 6, 6, 6, 4};
    int w = int(uni(0, 99));
    for (int k = 0; k < 9; ++k) {
      if (w < weights[k]) return all[k];
      w -= weights[k];
    }
    return DType::Float32;
  }

  Shape rand_shape() {
    if (chance(0.06)) {
      // Large: several CPU chunks (256), sometimes several threads (32768 elements per thread).
      i64 total = chance(0.08) ? uni(66000, 80000) : uni(300, 4000);
      int rank = int(uni(1, 3));
      if (rank == 1) return {total};
      i64 a = uni(2, 40);
      if (rank == 2) return {a, std::max<i64>(1, total / a)};
      i64 b = uni(2, 9);
      return {a, b, std::max<i64>(1, total / (a * b))};
    }
    static const int rank_w[] = {8, 22, 30, 22, 18};
    int w = int(uni(0, 99)), rank = 0;
    while (w >= rank_w[rank]) w -= rank_w[rank++];
    Shape s;
    for (int k = 0; k < rank; ++k) s.push_back(chance(0.2) ? 1 : uni(1, 7));
    return s;
  }

  std::string fresh() { return "v" + std::to_string(counter_++); }

  // Adds a value built by the library (a), the reference (r), its C++ text and its NumPy text.
  Val& add(Array a, HT r, const std::string& expr, const std::string& py) {
    Val v{std::move(a), std::move(r), fresh(), std::nullopt, std::nullopt};
    emit("auto " + v.name + " = " + expr + ";  // " + dname(v.r.dt) + " " + shape_str(v.r.shape));
    py_.push_back(v.name + " = " + py);
    ++stats_.ops;
    ++stats_.per_type[dname(v.r.dt)].ops;
    pool_.push_back(std::move(v));
    return pool_.back();
  }

  // Adds x with the array `value` assigned at idx, written either way the API offers (the functional
  // x.at(idx).set(value), or set_at on a copy of the handle, which rebinds it).
  void add_assignment(const Val& x, const std::vector<lf::Index>& idx, const Val& value) {
    Array out;
    if (chance(0.5)) {
      out = x.a;
      out.set_at(idx, value.a);
    } else {
      out = at_of(x.a, idx).set(value.a);
    }
    add(out, ref_set(x.r, idx, value.r), x.name + ".at(" + index_text(idx) + ").set(" + value.name + ")",
        "nx.set(" + x.name + ", " + py_index_object(idx) + ", " + value.name + ")");
  }

  double rand_value(DType t, bool wide) {
    if (t == DType::Bool) return chance(0.5) ? 1 : 0;
    if (isi(t)) {
      i64 m = wide ? 500 : 9, x = 0;
      while (x == 0) x = uni(-m, m);
      return double(x);
    }
    double mag = wide ? unif(0.5, 100) : unif(0.1, 4);
    return rnd(part_of(t), chance(0.5) ? mag : -mag);
  }

  // The leaves' values for the program text (complex ones as (re, im) pairs).
  static std::string value_text(DType t, double re, double im) {
    std::ostringstream os;
    os.precision(17);
    switch (t) {
    case DType::Bool: os << (re != 0 ? "true" : "false"); break;
    case DType::Float32: os << float(re) << "f"; break;
    case DType::Float16: os << "lf::float16(" << re << ")"; break;
    case DType::BFloat16: os << "lf::bfloat16(" << re << ")"; break;
    case DType::Complex64: os << "{" << float(re) << "f, " << float(im) << "f}"; break;
    case DType::Complex128: os << "{" << re << ", " << im << "}"; break;
    default: os << re; break;
    }
    return os.str();
  }

  std::string values_text(const HT& h) {
    if (h.size() > 48) return "/* " + std::to_string(h.size()) + " values */";
    std::string out;
    for (std::size_t i = 0; i < h.v.size(); ++i)
      out += (i ? ", " : "") + value_text(h.dt, h.v[i], h.im.empty() ? 0.0 : h.im[i]);
    return out;
  }

  Val& leaf(Shape shape, DType t) {
    if (record_) leaf_types_.insert(dname(t));
    const i64 n = numel(shape);
    HT h = make_ht(t, shape);
    const int kind = int(uni(0, 99));
    if (kind < 8 && n > 0) {
      // full(): a fill node (views and casts of fills fold at build time).
      double c = rand_value(t, chance(0.3));
      std::fill(h.v.begin(), h.v.end(), c);
      std::ostringstream os;
      os.precision(17);
      os << "lf::full(" << shape_str(shape) << ", " << c << ", " << dcpp(t) << ")";
      return add(lf::full(shape, c, t), h, os.str(),
                 "np.full(" + py_tuple(shape) + ", " + py_float(c) + ", dtype=" + py_dtype(t) + ")");
    }
    if (kind < 15 && t != DType::Bool && !isc(t) && (!is_half(t) || n <= 64)) {
      // (Halves: at most 64 values, which both half types hold exactly.)
      // arange(...).reshape(shape): an iota node.
      const double step = isf(t) ? 0.25 : 1,
                   start = isf(t) ? -0.375 * double(std::min<i64>(n, 16)) : double(uni(-5, 5));
      for (i64 i = 0; i < n; ++i) h.v[std::size_t(i)] = rnd(t, start + double(i) * step);
      std::ostringstream os;
      os.precision(17);
      os << "lf::arange(" << start << ", " << start + double(n) * step << ", " << step << ", " << dcpp(t)
         << ").reshape(" << shape_str(shape) << ")";
      const std::string args = isf(t)
                                   ? py_float(start) + ", " + py_float(start + double(n) * step) + ", " + py_float(step)
                                   : std::to_string(i64(start)) + ", " + std::to_string(i64(start) + n);
      // NumPy's arange has no bfloat16 loop: the (exact) float64 values converted.
      const std::string py = is_half(t) ? "np.arange(" + args + ").astype(" + py_dtype(t) + ")"
                                        : "np.arange(" + args + ", dtype=" + py_dtype(t) + ")";
      return add(lf::arange(start, start + double(n) * step, step, t).reshape(shape), h, os.str(),
                 py + ".reshape(" + py_tuple(shape) + ")");
    }
    const bool wide = chance(0.3);
    for (auto& x : h.v) x = rand_value(t, wide);
    // Complex: an imaginary part of its own (sometimes 0, so that real-valued complex numbers come too).
    const bool real_valued = chance(0.15);
    for (auto& y : h.im) y = real_valued ? 0.0 : rand_value(t, wide);
    return data_leaf(h);
  }

  // A leaf holding h's values (lf::asarray of host data; D[k] in the Python text).
  Val& data_leaf(const HT& h) {
    const DType t = h.dt;
    const Shape& shape = h.shape;
    Array a;
    std::string text = values_text(h);
    std::string expr;
    switch (t) {
    case DType::Bool: {
      std::vector<bool> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<bool>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Int32: {
      std::vector<std::int32_t> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<std::int32_t>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Int64: {
      std::vector<std::int64_t> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<std::int64_t>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Float32: {
      std::vector<float> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<float>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Float64: {
      a = lf::asarray(h.v, shape);
      expr = "lf::asarray(std::vector<double>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Float16:
    case DType::BFloat16: {
      auto halves = [&]<class H>(const char* name) {
        std::vector<H> d;
        for (double x : h.v) d.push_back(H(x));
        a = lf::asarray(d, shape);
        expr = "lf::asarray(std::vector<" + std::string(name) + ">{" + text + "}, " + shape_str(shape) + ")";
      };
      if (t == DType::Float16)
        halves.operator()<lf::float16>("lf::float16");
      else
        halves.operator()<lf::bfloat16>("lf::bfloat16");
      break;
    }
    case DType::Complex64: {
      std::vector<std::complex<float>> d;
      for (std::size_t i = 0; i < h.v.size(); ++i) d.push_back({float(h.v[i]), float(h.im[i])});
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<std::complex<float>>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Complex128: {
      std::vector<std::complex<double>> d;
      for (std::size_t i = 0; i < h.v.size(); ++i) d.push_back({h.v[i], h.im[i]});
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<std::complex<double>>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    default: ADD_FAILURE() << "a leaf of type " << lf::dtype_name(t) << ", which these graphs do not generate"; break;
    }
    // A complex leaf's data interleaves real and imaginary parts (JSON has no complex numbers).
    std::string json = "[";
    for (std::size_t i = 0; i < h.v.size(); ++i) {
      if (i) json += ',';
      json_number(json, h.v[i]);
      if (!h.im.empty()) {
        json += ',';
        json_number(json, h.im[i]);
      }
    }
    json += "]";
    data_.push_back(std::move(json));
    const std::string d = "D[" + std::to_string(data_.size() - 1) + "]";
    return add(a, h, expr,
               (isc(t) ? "nx.complex_array(" + d + ", " + py_dtype(t) + ")"
                       : "np.array(" + d + ", dtype=" + py_dtype(t) + ")") +
                   ".reshape(" + py_tuple(shape) + ")");
  }

  // A shape that broadcasts against s (drops leading axes, sets some to 1, sometimes adds a leading axis).
  Shape compatible_shape(const Shape& s, bool grow = true) {
    Shape out(s.begin() + std::ptrdiff_t(uni(0, i64(s.size()))), s.end());
    if (chance(0.25)) out = s;
    for (auto& d : out)
      if (chance(0.3)) d = 1;
    if (grow && out.size() == s.size() && out.size() < 4 && chance(0.2) && numel(s) * 3 <= kMaxElements)
      out.insert(out.begin(), uni(1, 3));
    return out;
  }

  Sc rand_scalar(bool nonzero = true, bool small = false) {
    Sc s;
    s.cpp = int(uni(0, 9));
    s.cpp = s.cpp <= 1 ? 0 : (s.cpp <= 4 ? 1 : (s.cpp == 5 ? 2 : (s.cpp <= 8 ? 3 : 4)));
    s.b = nonzero ? true : chance(0.5);
    do s.i = int(uni(-5, 5));
    while (nonzero && s.i == 0);
    s.f = unif(0.25, small ? 2.0 : 4.0) * (chance(0.5) ? 1 : -1);
    if (chance(0.3)) s.f = std::round(s.f * 4) / 4 + (s.f > 0 ? 0.25 : -0.25); // exactly representable
    return s;
  }

  // Index of a random pool value, biased to the newest.
  std::size_t pick_val() {
    if (chance(0.55)) return pool_.size() - 1;
    return std::size_t(uni(0, i64(pool_.size()) - 1));
  }

  // A pool value (or a new leaf) whose shape broadcasts with s within the size limit.
  std::size_t partner(const Shape& s) {
    if (chance(0.6)) {
      std::vector<std::size_t> ok;
      for (std::size_t k = 0; k < pool_.size(); ++k) {
        auto b = broadcast_shape(s, pool_[k].r.shape);
        if (b && numel(*b) <= kMaxElements) ok.push_back(k);
      }
      if (!ok.empty()) return chance(0.5) ? ok.back() : pick(ok);
    }
    leaf(compatible_shape(s), rand_dtype());
    return pool_.size() - 1;
  }

  std::vector<lf::Index> rand_index(const Shape& s, bool allow_empty, bool allow_newaxis) {
    std::vector<lf::Index> idx;
    const int n = int(s.size());
    int axis = 0;
    bool ellipsis = false;
    int stop_at = chance(0.3) ? int(uni(0, n)) : n; // leave trailing axes implicit
    while (axis < stop_at) {
      if (allow_newaxis && chance(0.1)) idx.push_back(lf::NewAxis{});
      if (!ellipsis && chance(0.08)) {
        // The ellipsis stands for some middle axes; the rest are indexed after it.
        ellipsis = true;
        idx.push_back(lf::Ellipsis{});
        stop_at = n;
        int rest = int(uni(0, n - axis));
        axis = n - rest;
        continue;
      }
      const i64 len = s[std::size_t(axis)];
      int kind = int(uni(0, 9));
      if (kind <= 1 && len > 0) {
        idx.push_back(i64(uni(-len, len - 1)));
      } else if (kind == 2) {
        idx.push_back(lf::all_of);
      } else {
        for (int tries = 0;; ++tries) {
          lf::Slice sl;
          sl.step = chance(0.5) ? 1 : uni(-3, 3);
          if (sl.step == 0) sl.step = -1;
          if (chance(0.6)) sl.start = uni(-len - 2, len + 2);
          if (chance(0.6)) sl.stop = uni(-len - 2, len + 2);
          i64 st, count;
          py_slice(len, sl, st, count);
          if (count > 0 || (allow_empty && chance(0.3)) || tries > 20) {
            if (count == 0 && !allow_empty) sl = lf::all_of;
            idx.push_back(sl);
            break;
          }
        }
      }
      ++axis;
    }
    if (allow_newaxis && chance(0.1)) idx.push_back(lf::NewAxis{});
    return idx;
  }

  static std::string index_text(const std::vector<lf::Index>& idx) {
    std::string out;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (k) out += ", ";
      if (auto* i = std::get_if<i64>(&idx[k]))
        out += std::to_string(*i);
      else if (auto* s = std::get_if<lf::Slice>(&idx[k])) {
        auto o = [](const std::optional<i64>& v) { return v ? std::to_string(*v) : std::string("lf::none"); };
        if (!s->start && !s->stop && s->step == 1)
          out += "lf::all_of";
        else
          out += "lf::slice(" + o(s->start) + ", " + o(s->stop) + ", " + std::to_string(s->step) + ")";
      } else if (std::holds_alternative<lf::NewAxis>(idx[k]))
        out += "lf::newaxis";
      else
        out += "lf::ellipsis";
    }
    return out;
  }

  // ---- op generators; each returns false when its preconditions do not hold ----
  bool op_unary(std::size_t xi);
  bool op_binary(std::size_t xi, std::optional<std::size_t> with = std::nullopt);
  bool op_scalar(std::size_t xi);
  bool op_where(std::size_t xi);
  bool op_astype(std::size_t xi);
  bool op_view(std::size_t xi, int set = kAnyView);
  bool op_combine(std::size_t xi, int set = kAnyCombine);
  void tame(std::size_t xi);
  void eval_one(std::size_t xi);

  // ---- gathers, index writes, scans and sorts (issues 17 and 18) ----
  Val& index_leaf(const Shape& shape, i64 len);
  std::optional<AdvIndex> rand_adv(const Shape& s);
  std::optional<AdvIndex> rand_mask(std::size_t xi);
  bool op_take(std::size_t xi);
  bool op_take_along(std::size_t xi);
  bool op_index_arrays(std::size_t xi);
  bool op_mask(std::size_t xi);
  bool op_add_at(std::size_t xi);
  bool op_scan(std::size_t xi, Fam f);
  bool op_sort(std::size_t xi, bool arg, std::optional<std::optional<int>> axis = std::nullopt);
  bool op_family(Fam f, std::size_t xi);
  void index_program();

  // ---- reductions and their consumers ----
  std::optional<std::size_t> op_reduce(std::size_t xi, std::optional<RKind> want = std::nullopt,
                                       std::optional<ReduceSpec> like = std::nullopt);
  std::optional<std::size_t> broadcast_partner(std::size_t ri, std::size_t xi);
  bool consume(Consumer c, std::size_t ri, std::size_t xi);
  std::optional<std::size_t> view_of(std::size_t xi, const Shape& broadcasts_with);
  bool mix(std::size_t ai, std::size_t bi);
  void plain_program();
  void reduction_program();
  bool random_op(bool reductions);

  bool check(const Val& v, const std::string& how);
};

// Every op below builds the library expression, the reference and the NumPy text side by side.

bool Case::op_unary(std::size_t xi) {
  const Val x = pool_[xi];
  const double m = maxabs(x.r);
  const int k = int(uni(0, 18));
  const DType t = x.r.dt;
  const std::string& xn = x.name;
  if (k >= 16) { // real, imag, conj (of every type: a real array's own parts)
    if (k == 16) {
      add(lf::real(x.a), ref_real(x.r), "lf::real(" + xn + ")", "np.real(" + xn + ")");
    } else if (k == 17) {
      add(lf::imag(x.a), ref_imag(x.r), "lf::imag(" + xn + ")", "np.imag(" + xn + ")");
    } else {
      if (t == DType::Bool) return false; // int8, as NumPy's
      add(lf::conj(x.a), ref_conj(x.r), "lf::conj(" + xn + ")", "np.conj(" + xn + ")");
    }
    return true;
  }
  if (isc(t) && k >= 6 && k <= 12) {
    // Not generated on complex values: sin, cos, tanh (the reference has no complex functions but exp); erf,
    // floor, ceil and trunc have no complex loop in NumPy, so lazyfuse refuses them (checked here for the last three).
    if (k <= 9) return false;
    static const char* names[] = {"floor", "ceil", "trunc"};
    bool threw = false;
    try {
      k == 10 ? lf::floor(x.a) : (k == 11 ? lf::ceil(x.a) : lf::trunc(x.a));
    } catch (const lf::DTypeError&) {
      threw = true;
    }
    EXPECT_TRUE(threw) << "lf::" << names[k - 10] << " of " << dname(t) << " must throw lazyfuse::DTypeError";
    emit(std::string("// lf::") + names[k - 10] + "(" + xn + ") throws lazyfuse::DTypeError");
    py_.push_back(std::string("nx.expect_error(lambda: np.") + names[k - 10] + "(" + xn + "))");
    return false;
  }
  switch (k) {
  case 0:
    if (t == DType::Bool) {
      add(lf::logical_not(x.a), ref_unary(U::Not, x.r), "lf::logical_not(" + xn + ")", "nx.logical_not(" + xn + ")");
      return true;
    }
    add(lf::negative(x.a), ref_unary(U::Neg, x.r), "lf::negative(" + xn + ")", "nx.negative(" + xn + ")");
    return true;
  case 1: add(lf::abs(x.a), ref_unary(U::Abs, x.r), "lf::abs(" + xn + ")", "nx.abs(" + xn + ")"); return true;
  case 2:
    // square of bool is int8 (as in NumPy), a type these graphs do not model.
    if (m > 1000 || x.r.dt == DType::Bool) return false;
    add(lf::square(x.a), ref_unary(U::Square, x.r), "lf::square(" + xn + ")", "nx.square(" + xn + ")");
    return true;
  case 3: {                      // sqrt(abs(x) + 1)
    const DType at = real_of(t); // abs's type
    HT r = ref_unary(U::Sqrt, ref_binary_t(B::Add, ref_unary(U::Abs, x.r),
                                           scalar_ht(Sc{1, false, 1, 0}, promote_weak(at, Kind::Int)),
                                           promote_weak(at, Kind::Int)));
    add(lf::sqrt(lf::abs(x.a) + 1), r, "lf::sqrt(lf::abs(" + xn + ") + 1)", "nx.sqrt(nx.add(nx.abs(" + xn + "), 1))");
    return true;
  }
  case 4: { // exp(clip(x, -8.0, 8.0))
    const DType w = promote_weak(t, Kind::Float);
    HT c = ref_binary_t(B::Max, x.r, scalar_ht(Sc{3, false, 0, -8.0}, w), w);
    c = ref_binary_t(B::Min, c, scalar_ht(Sc{3, false, 0, 8.0}, w), w);
    add(lf::exp(lf::clip(x.a, -8.0, 8.0)), ref_unary(U::Exp, c), "lf::exp(lf::clip(" + xn + ", -8.0, 8.0))",
        "nx.exp(nx.clip(" + xn + ", -8.0, 8.0))");
    return true;
  }
  case 5: { // log(abs(x) + 1.5)
    const DType w = promote_weak(real_of(t), Kind::Float);
    HT r = ref_unary(U::Log, ref_binary_t(B::Add, ref_unary(U::Abs, x.r), scalar_ht(Sc{3, false, 0, 1.5}, w), w));
    add(lf::log(lf::abs(x.a) + 1.5), r, "lf::log(lf::abs(" + xn + ") + 1.5)",
        "nx.log(nx.add(nx.abs(" + xn + "), 1.5))");
    return true;
  }
  case 6:
    if (m > 1e4) return false;
    add(lf::sin(x.a), ref_unary(U::Sin, x.r), "lf::sin(" + xn + ")", "nx.sin(" + xn + ")");
    return true;
  case 7:
    if (m > 1e4) return false;
    add(lf::cos(x.a), ref_unary(U::Cos, x.r), "lf::cos(" + xn + ")", "nx.cos(" + xn + ")");
    return true;
  case 8: add(lf::tanh(x.a), ref_unary(U::Tanh, x.r), "lf::tanh(" + xn + ")", "nx.tanh(" + xn + ")"); return true;
  case 9: add(lf::erf(x.a), ref_unary(U::Erf, x.r), "lf::erf(" + xn + ")", "nx.erf(" + xn + ")"); return true;
  case 10: add(lf::floor(x.a), ref_unary(U::Floor, x.r), "lf::floor(" + xn + ")", "nx.floor(" + xn + ")"); return true;
  case 11: add(lf::ceil(x.a), ref_unary(U::Ceil, x.r), "lf::ceil(" + xn + ")", "nx.ceil(" + xn + ")"); return true;
  case 12: add(lf::trunc(x.a), ref_unary(U::Trunc, x.r), "lf::trunc(" + xn + ")", "nx.trunc(" + xn + ")"); return true;
  case 13:
    add(lf::logical_not(x.a), ref_unary(U::Not, x.r), "lf::logical_not(" + xn + ")", "nx.logical_not(" + xn + ")");
    return true;
  case 14: { // the operators
    if (t == DType::Bool) {
      add(!x.a, ref_unary(U::Not, x.r), "!" + xn, "nx.logical_not(" + xn + ")");
      return true;
    }
    add(-x.a, ref_unary(U::Neg, x.r), "-" + xn, "nx.negative(" + xn + ")");
    return true;
  }
  default: { // sqrt of a value known to be >= 1 in a float type directly
    if (!isf(t) || minabs(x.r) < 0.5) return false;
    HT sq = ref_unary(U::Square, x.r);
    if (maxabs(sq) > kMaxMagnitude) return false;
    add(lf::sqrt(lf::square(x.a)), ref_unary(U::Sqrt, sq), "lf::sqrt(lf::square(" + xn + "))",
        "nx.sqrt(nx.square(" + xn + "))");
    return true;
  }
  }
}

bool Case::op_binary(std::size_t xi, std::optional<std::size_t> with) {
  const Val x = pool_[xi];
  const Val y = pool_[with ? *with : partner(x.r.shape)];
  const auto shape = broadcast_shape(x.r.shape, y.r.shape);
  if (!shape || numel(*shape) > kMaxElements) return false;
  const bool swap = chance(0.3);
  const Val& a = swap ? y : x;
  const Val& b = swap ? x : y;
  const DType t = promote(a.r.dt, b.r.dt);
  const double ma = maxabs(a.r), mb = maxabs(b.r);
  const std::string an = a.name, bn = b.name;
  auto py = [&](const char* f) { return std::string("nx.") + f + "(" + an + ", " + bn + ")"; };
  const int k = int(uni(0, 17));
  switch (k) {
  case 0:
  case 1:
    if (ma + mb > kMaxMagnitude) return false;
    if (chance(0.5))
      add(a.a + b.a, ref_binary(B::Add, a.r, b.r), an + " + " + bn, py("add"));
    else
      add(lf::add(a.a, b.a), ref_binary(B::Add, a.r, b.r), "lf::add(" + an + ", " + bn + ")", py("add"));
    return true;
  case 2:
  case 3:
    if (ma + mb > kMaxMagnitude || t == DType::Bool) return false;
    add(lf::subtract(a.a, b.a), ref_binary(B::Sub, a.r, b.r), "lf::subtract(" + an + ", " + bn + ")", py("subtract"));
    return true;
  case 4:
  case 5:
    if (ma * mb > kMaxMagnitude) return false;
    add(a.a * b.a, ref_binary(B::Mul, a.r, b.r), an + " * " + bn, py("multiply"));
    return true;
  case 6:
  case 7: { // a / (abs(b) + 1), or a / b when b is bounded away from zero
    if ((isf(b.r.dt) || isc(b.r.dt)) && minabs(b.r) >= 0.5 && chance(0.5)) {
      if (ma / minabs(b.r) > kMaxMagnitude) return false;
      add(lf::true_divide(a.a, b.a), ref_binary(B::Div, a.r, b.r), "lf::true_divide(" + an + ", " + bn + ")",
          py("true_divide"));
      return true;
    }
    const DType w = promote_weak(real_of(b.r.dt), Kind::Int);
    HT d = ref_binary_t(B::Add, ref_unary(U::Abs, b.r), scalar_ht(Sc{1, false, 1, 0}, w), w);
    add(a.a / (lf::abs(b.a) + 1), ref_binary(B::Div, a.r, d), an + " / (lf::abs(" + bn + ") + 1)",
        "nx.true_divide(" + an + ", nx.add(nx.abs(" + bn + "), 1))");
    return true;
  }
  case 8:
    add(lf::minimum(a.a, b.a), ref_binary(B::Min, a.r, b.r), "lf::minimum(" + an + ", " + bn + ")", py("minimum"));
    return true;
  case 9:
    add(lf::maximum(a.a, b.a), ref_binary(B::Max, a.r, b.r), "lf::maximum(" + an + ", " + bn + ")", py("maximum"));
    return true;
  case 10: add(a.a < b.a, ref_binary(B::Lt, a.r, b.r), an + " < " + bn, py("less")); return true;
  case 11:
    add(lf::less_equal(a.a, b.a), ref_binary(B::Le, a.r, b.r), "lf::less_equal(" + an + ", " + bn + ")",
        py("less_equal"));
    return true;
  case 12: add(a.a > b.a, ref_binary(B::Gt, a.r, b.r), an + " > " + bn, py("greater")); return true;
  case 13: add(a.a >= b.a, ref_binary(B::Ge, a.r, b.r), an + " >= " + bn, py("greater_equal")); return true;
  case 14:
    if (chance(0.5))
      add(a.a == b.a, ref_binary(B::Eq, a.r, b.r), an + " == " + bn, py("equal"));
    else
      add(a.a != b.a, ref_binary(B::Ne, a.r, b.r), an + " != " + bn, py("not_equal"));
    return true;
  case 15: {
    int which = int(uni(0, 2));
    B op = which == 0 ? B::And : (which == 1 ? B::Or : B::Xor);
    add(which == 0 ? lf::logical_and(a.a, b.a) : (which == 1 ? lf::logical_or(a.a, b.a) : lf::logical_xor(a.a, b.a)),
        ref_binary(op, a.r, b.r), std::string("lf::") + bname(op) + "(" + an + ", " + bn + ")", py(bname(op)));
    return true;
  }
  default: { // integer floor_divide / remainder by abs(b) + 1
    if (!isi(a.r.dt) || !isi(b.r.dt)) return false;
    const DType w = promote_weak(b.r.dt, Kind::Int);
    HT d = ref_binary_t(B::Add, ref_unary(U::Abs, b.r), scalar_ht(Sc{1, false, 1, 0}, w), w);
    if (chance(0.5))
      add(lf::floor_divide(a.a, lf::abs(b.a) + 1), ref_binary(B::FloorDiv, a.r, d),
          "lf::floor_divide(" + an + ", lf::abs(" + bn + ") + 1)",
          "nx.floor_divide(" + an + ", nx.add(nx.abs(" + bn + "), 1))");
    else
      add(a.a % (lf::abs(b.a) + 1), ref_binary(B::Rem, a.r, d), an + " % (lf::abs(" + bn + ") + 1)",
          "nx.remainder(" + an + ", nx.add(nx.abs(" + bn + "), 1))");
    return true;
  }
  }
}

bool Case::op_scalar(std::size_t xi) {
  const Val x = pool_[xi];
  const Sc s = rand_scalar(true);
  const DType t = promote_weak(x.r.dt, s.kind());
  const HT sh = scalar_ht(s, t);
  const double m = maxabs(x.r), sv = std::fabs(s.value());
  const std::string xn = x.name, st = s.text(), sp = s.py();
  const bool left = chance(0.35);
  auto bin = [&](B op, auto fn, const char* name) {
    Array out = s.apply([&](auto c) { return left ? fn(c, x.a) : fn(x.a, c); });
    HT r = left ? ref_binary_t(op, sh, x.r, t) : ref_binary_t(op, x.r, sh, t);
    add(out, r, std::string("lf::") + name + "(" + (left ? st + ", " + xn : xn + ", " + st) + ")",
        std::string("nx.") + name + "(" + (left ? sp + ", " + xn : xn + ", " + sp) + ")");
    return true;
  };
  switch (int(uni(0, 10))) {
  case 0:
  case 1:
    if (m + sv > kMaxMagnitude) return false;
    return bin(
        B::Add, [](auto p, auto q) { return lf::add(p, q); }, "add");
  case 2:
    if (m + sv > kMaxMagnitude || t == DType::Bool) return false;
    return bin(
        B::Sub, [](auto p, auto q) { return lf::subtract(p, q); }, "subtract");
  case 3:
  case 4:
    if (m * sv > kMaxMagnitude) return false;
    return bin(
        B::Mul, [](auto p, auto q) { return lf::multiply(p, q); }, "multiply");
  case 5: {
    if (!left) {
      if (m / sv > kMaxMagnitude) return false;
      Array out = s.apply([&](auto c) { return x.a / c; });
      add(out, ref_binary_t(B::Div, x.r, sh, t), xn + " / " + st, "nx.true_divide(" + xn + ", " + sp + ")");
      return true;
    }
    // s / (abs(x) + 0.5)
    const DType w = promote_weak(real_of(x.r.dt), Kind::Float);
    HT d = ref_binary_t(B::Add, ref_unary(U::Abs, x.r), scalar_ht(Sc{3, false, 0, 0.5}, w), w);
    const DType t2 = promote_weak(d.dt, s.kind());
    Array out = s.apply([&](auto c) { return c / (lf::abs(x.a) + 0.5); });
    add(out, ref_binary_t(B::Div, scalar_ht(s, t2), d, t2), st + " / (lf::abs(" + xn + ") + 0.5)",
        "nx.true_divide(" + sp + ", nx.add(nx.abs(" + xn + "), 0.5))");
    return true;
  }
  case 6:
    return bin(
        B::Min, [](auto p, auto q) { return lf::minimum(p, q); }, "minimum");
  case 7:
    return bin(
        B::Max, [](auto p, auto q) { return lf::maximum(p, q); }, "maximum");
  case 8: {
    static const B cmp[] = {B::Eq, B::Ne, B::Lt, B::Le, B::Gt, B::Ge};
    B op = cmp[uni(0, 5)];
    switch (op) {
    case B::Eq:
      return bin(
          op, [](auto p, auto q) { return lf::equal(p, q); }, "equal");
    case B::Ne:
      return bin(
          op, [](auto p, auto q) { return lf::not_equal(p, q); }, "not_equal");
    case B::Lt:
      return bin(
          op, [](auto p, auto q) { return lf::less(p, q); }, "less");
    case B::Le:
      return bin(
          op, [](auto p, auto q) { return lf::less_equal(p, q); }, "less_equal");
    case B::Gt:
      return bin(
          op, [](auto p, auto q) { return lf::greater(p, q); }, "greater");
    default:
      return bin(
          op, [](auto p, auto q) { return lf::greater_equal(p, q); }, "greater_equal");
    }
  }
  case 9: { // clip(x, lo, hi) with two scalars of possibly different kinds
    Sc lo = rand_scalar(false, true), hi = rand_scalar(false, true);
    if (lo.kind() == Kind::Bool || hi.kind() == Kind::Bool) return false;
    if (lo.value() > hi.value()) std::swap(lo, hi);
    const DType t1 = promote_weak(x.r.dt, lo.kind());
    HT c = ref_binary_t(B::Max, x.r, scalar_ht(lo, t1), t1);
    const DType t2 = promote_weak(c.dt, hi.kind());
    c = ref_binary_t(B::Min, c, scalar_ht(hi, t2), t2);
    Array out = lo.apply([&](auto l) { return hi.apply([&](auto h) { return lf::clip(x.a, l, h); }); });
    add(out, c, "lf::clip(" + xn + ", " + lo.text() + ", " + hi.text() + ")",
        "nx.clip(" + xn + ", " + lo.py() + ", " + hi.py() + ")");
    return true;
  }
  default: { // compound assignment: rebinds the handle to x + s (its dtype may change)
    if (m * sv > kMaxMagnitude || m + sv > kMaxMagnitude) return false;
    Array acc = x.a;
    if (chance(0.5)) {
      s.apply([&](auto c) { return acc += c; });
      add(acc, ref_binary_t(B::Add, x.r, sh, t), "(copy of " + xn + ") += " + st, "nx.add(" + xn + ", " + sp + ")");
    } else {
      s.apply([&](auto c) { return acc *= c; });
      add(acc, ref_binary_t(B::Mul, x.r, sh, t), "(copy of " + xn + ") *= " + st,
          "nx.multiply(" + xn + ", " + sp + ")");
    }
    return true;
  }
  }
}

bool Case::op_where(std::size_t xi) {
  const Val c = pool_[xi];
  const int kind = int(uni(0, 3));
  if (kind == 0) { // two arrays
    const Val a = pool_[partner(c.r.shape)];
    auto s = broadcast_shape(c.r.shape, a.r.shape);
    const Val b = pool_[partner(*s)];
    auto s2 = broadcast_shape(*s, b.r.shape);
    if (!s2 || numel(*s2) > kMaxElements) return false;
    add(lf::where(c.a, a.a, b.a), ref_where_t(c.r, a.r, b.r, promote(a.r.dt, b.r.dt)),
        "lf::where(" + c.name + ", " + a.name + ", " + b.name + ")",
        "nx.where(" + c.name + ", " + a.name + ", " + b.name + ")");
    return true;
  }
  if (kind == 1) { // array and scalar
    const Val a = pool_[partner(c.r.shape)];
    const Sc s = rand_scalar(false);
    const DType t = promote_weak(a.r.dt, s.kind());
    const bool left = chance(0.5);
    Array out = s.apply([&](auto v) { return left ? lf::where(c.a, v, a.a) : lf::where(c.a, a.a, v); });
    HT r = left ? ref_where_t(c.r, scalar_ht(s, t), a.r, promote(t, a.r.dt))
                : ref_where_t(c.r, a.r, scalar_ht(s, t), promote(a.r.dt, t));
    add(out, r, "lf::where(" + c.name + ", " + (left ? s.text() + ", " + a.name : a.name + ", " + s.text()) + ")",
        "nx.where(" + c.name + ", " + (left ? s.py() + ", " + a.name : a.name + ", " + s.py()) + ")");
    return true;
  }
  // two scalars: they promote between themselves
  const Sc p = rand_scalar(false), q = rand_scalar(false);
  const DType t = promote(natural(p.kind()), natural(q.kind()));
  Array out = p.apply([&](auto u) { return q.apply([&](auto v) { return lf::where(c.a, u, v); }); });
  add(out, ref_where_t(c.r, scalar_ht(p, t), scalar_ht(q, t), t),
      "lf::where(" + c.name + ", " + p.text() + ", " + q.text() + ")",
      "nx.where(" + c.name + ", " + p.py() + ", " + q.py() + ")");
  return true;
}

bool Case::op_astype(std::size_t xi) {
  const Val x = pool_[xi];
  const DType to = rand_dtype();
  if (isi(to) && maxabs(x.r) > 1e9) return false;
  const std::string py = "nx.astype(" + x.name + ", " + py_dtype(to) + ")";
  if (chance(0.5))
    add(x.a.astype(to), ref_cast(x.r, to), x.name + ".astype(" + std::string(dcpp(to)) + ")", py);
  else
    add(lf::astype(x.a, to), ref_cast(x.r, to), "lf::astype(" + x.name + ", " + std::string(dcpp(to)) + ")", py);
  return true;
}

bool Case::op_view(std::size_t xi, int set) {
  const Val x = pool_[xi];
  const Shape& s = x.r.shape;
  const int n = int(s.size());
  const std::string& xn = x.name;
  // The generators of each set: 0-3, 6, 7 are views proper, 4 broadcast_to, 5 and 8-10 reshapes.
  std::vector<int> choices;
  if (set & kViews) choices.insert(choices.end(), {0, 1, 2, 3, 6, 7});
  if (set & kBroadcastTo) choices.push_back(4);
  if (set & kReshapes) choices.insert(choices.end(), {5, 8, 9, 10});
  switch (pick(choices)) {
  case 0: add(x.a.T(), ref_transpose(x.r, {}), xn + ".T()", xn + ".T"); return true;
  case 1: {
    std::vector<int> perm(std::size_t(n), 0);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    std::string text;
    for (auto& p : perm) {
      if (chance(0.3)) p -= n;
      text += (text.empty() ? "" : ", ") + std::to_string(p);
    }
    add(lf::permute(x.a, perm), ref_transpose(x.r, perm), "lf::permute(" + xn + ", {" + text + "})",
        "np.transpose(" + xn + ", " + py_tuple(perm) + ")");
    return true;
  }
  case 2:
  case 3: {
    auto idx = rand_index(s, chance(0.03), true);
    add(x.a.index_with(idx), ref_index(x.r, idx), xn + "(" + index_text(idx) + ")", py_subscript(xn, idx));
    return true;
  }
  case 4: { // broadcast_to a larger shape
    Shape to = s;
    for (auto& d : to)
      if (d == 1 && chance(0.6)) d = uni(1, 5);
    while (to.size() < 5 && chance(0.4)) to.insert(to.begin(), uni(1, 4));
    if (numel(to) > kMaxElements) return false;
    add(lf::broadcast_to(x.a, to), ref_broadcast(x.r, to), "lf::broadcast_to(" + xn + ", " + shape_str(to) + ")",
        "np.broadcast_to(" + xn + ", " + py_tuple(to) + ")");
    return true;
  }
  case 5: { // reshape into a random factorization (possibly with -1)
    i64 rest = x.r.size();
    if (rest == 0) return false;
    Shape to;
    int rank = int(uni(0, 4));
    for (int k = 0; k + 1 < rank; ++k) {
      std::vector<i64> divs;
      for (i64 d = 1; d <= std::min<i64>(rest, 64); ++d)
        if (rest % d == 0) divs.push_back(d);
      i64 d = pick(divs);
      to.push_back(d);
      rest /= d;
    }
    if (rank > 0)
      to.push_back(rest);
    else if (rest != 1)
      to = {rest};
    std::shuffle(to.begin(), to.end(), rng_);
    Shape call = to;
    if (!call.empty() && chance(0.4)) call[std::size_t(uni(0, i64(call.size()) - 1))] = -1;
    add(x.a.reshape(call), ref_reshape(x.r, to), xn + ".reshape(" + shape_str(call) + ")",
        xn + ".reshape(" + py_tuple(call) + ")");
    return true;
  }
  case 6: {
    if (n == 0 || chance(0.3)) {
      add(lf::flip(x.a), ref_flip(x.r, std::nullopt), "lf::flip(" + xn + ")", "np.flip(" + xn + ")");
      return true;
    }
    int ax = int(uni(-n, n - 1));
    add(lf::flip(x.a, ax), ref_flip(x.r, ax), "lf::flip(" + xn + ", " + std::to_string(ax) + ")",
        "np.flip(" + xn + ", " + std::to_string(ax) + ")");
    return true;
  }
  case 7: {
    i64 shift = uni(-9, 9);
    if (n == 0 || chance(0.3)) {
      add(lf::roll(x.a, shift), ref_roll(x.r, shift, std::nullopt),
          "lf::roll(" + xn + ", " + std::to_string(shift) + ")", "np.roll(" + xn + ", " + std::to_string(shift) + ")");
      return true;
    }
    int ax = int(uni(-n, n - 1));
    add(lf::roll(x.a, shift, ax), ref_roll(x.r, shift, ax),
        "lf::roll(" + xn + ", " + std::to_string(shift) + ", " + std::to_string(ax) + ")",
        "np.roll(" + xn + ", " + std::to_string(shift) + ", " + std::to_string(ax) + ")");
    return true;
  }
  case 8: {
    if (n >= 5) return false;
    int ax = int(uni(-n - 1, n));
    int pos = ax < 0 ? ax + n + 1 : ax;
    Shape to = s;
    to.insert(to.begin() + pos, 1);
    add(lf::expand_dims(x.a, ax), ref_reshape(x.r, to), "lf::expand_dims(" + xn + ", " + std::to_string(ax) + ")",
        "np.expand_dims(" + xn + ", " + std::to_string(ax) + ")");
    return true;
  }
  case 9: {
    std::vector<int> ones;
    for (int k = 0; k < n; ++k)
      if (s[std::size_t(k)] == 1) ones.push_back(k);
    Shape to;
    if (chance(0.5) || ones.empty()) {
      for (auto d : s)
        if (d != 1) to.push_back(d);
      add(lf::squeeze(x.a), ref_reshape(x.r, to), "lf::squeeze(" + xn + ")", "np.squeeze(" + xn + ")");
      return true;
    }
    std::vector<int> axes;
    std::string text;
    for (int k : ones)
      if (chance(0.5)) {
        int ax = chance(0.3) ? k - n : k;
        axes.push_back(ax);
        text += (text.empty() ? "" : ", ") + std::to_string(ax);
      }
    for (int k = 0; k < n; ++k)
      if (std::find(ones.begin(), ones.end(), k) == ones.end() ||
          (std::find(axes.begin(), axes.end(), k) == axes.end() &&
           std::find(axes.begin(), axes.end(), k - n) == axes.end()))
        to.push_back(s[std::size_t(k)]);
    add(lf::squeeze(x.a, axes), ref_reshape(x.r, to), "lf::squeeze(" + xn + ", std::vector<int>{" + text + "})",
        "np.squeeze(" + xn + ", axis=" + py_tuple(axes) + ")");
    return true;
  }
  default: { // ravel
    add(x.a.ravel(), ref_reshape(x.r, {x.r.size()}), xn + ".ravel()", xn + ".ravel()");
    return true;
  }
  }
}

bool Case::op_combine(std::size_t xi, int set) {
  const Val x = pool_[xi];
  const Shape& s = x.r.shape;
  const int n = int(s.size());
  std::vector<int> choices;
  if (set & kConcat) choices.push_back(0);
  if (set & kStack) choices.push_back(1);
  if (set & kPad) choices.push_back(2);
  if (set & kSet) choices.push_back(3);
  auto join = [](const std::vector<Val>& parts, std::vector<Array>& arrays, std::vector<HT>& refs, std::string& text,
                 std::string& py) {
    for (auto& p : parts) {
      arrays.push_back(p.a);
      refs.push_back(p.r);
      text += (text.empty() ? "" : ", ") + p.name;
      py += (py.empty() ? "" : ", ") + p.name;
    }
    py = "(" + py + (parts.size() == 1 ? ",)" : ")");
  };
  switch (pick(choices)) {
  case 0: { // concatenate with 1-2 arrays that differ along the axis
    if (n == 0) return false;
    int ax = int(uni(-n, n - 1));
    const auto A = std::size_t(ax < 0 ? ax + n : ax);
    std::vector<Val> parts{x};
    int more = int(uni(1, 2));
    for (int k = 0; k < more; ++k) {
      int how = int(uni(0, 2));
      if (how == 0) {
        parts.push_back(x);
      } else if (how == 1) {
        parts.push_back(pool_[std::size_t(uni(0, i64(pool_.size()) - 1))]);
        Shape want = s;
        want[A] = parts.back().r.shape.size() == s.size() ? parts.back().r.shape[A] : 0;
        if (parts.back().r.shape != want) {
          parts.pop_back();
          --k;
          continue;
        }
      } else {
        Shape t = s;
        t[A] = uni(1, 4);
        parts.push_back(leaf(t, rand_dtype()));
      }
    }
    i64 total = 0;
    for (auto& p : parts) total += p.r.size();
    if (total > kMaxElements) return false;
    std::vector<Array> arrays;
    std::vector<HT> refs;
    std::string text, py;
    join(parts, arrays, refs, text, py);
    add(lf::concatenate(arrays, ax), ref_concat(refs, ax),
        "lf::concatenate({" + text + "}, " + std::to_string(ax) + ")",
        "np.concatenate(" + py + ", axis=" + std::to_string(ax) + ")");
    return true;
  }
  case 1: { // stack x with a transformed x and/or a new leaf of the same shape
    if (n >= 4 || x.r.size() * 3 > kMaxElements) return false;
    std::vector<Val> parts{x};
    parts.push_back(chance(0.5) ? leaf(s, rand_dtype()) : x);
    if (chance(0.4)) parts.push_back(leaf(s, rand_dtype()));
    int ax = int(uni(-n - 1, n));
    std::vector<Array> arrays;
    std::vector<HT> refs;
    std::string text, py;
    join(parts, arrays, refs, text, py);
    add(lf::stack(arrays, ax), ref_stack(refs, ax), "lf::stack({" + text + "}, " + std::to_string(ax) + ")",
        "np.stack(" + py + ", axis=" + std::to_string(ax) + ")");
    return true;
  }
  case 2: { // pad
    if (n == 0) return false;
    std::vector<std::pair<i64, i64>> w;
    Shape out = s;
    std::string text, py;
    int pairs = chance(0.3) ? 1 : n;
    for (int k = 0; k < pairs; ++k) {
      w.push_back({uni(0, 2), uni(0, 2)});
      text +=
          (text.empty() ? "{" : ", {") + std::to_string(w.back().first) + ", " + std::to_string(w.back().second) + "}";
      py += "(" + std::to_string(w.back().first) + ", " + std::to_string(w.back().second) + "), ";
    }
    for (int k = 0; k < n; ++k) {
      auto [lo, hi] = pairs == 1 ? w[0] : w[std::size_t(k)];
      out[std::size_t(k)] += lo + hi;
    }
    if (numel(out) > kMaxElements) return false;
    double c = chance(0.5) ? double(uni(-3, 3)) : (chance(0.5) ? 2.5 : -1.75);
    std::ostringstream os;
    os << "lf::pad(" << x.name << ", {" << text << "}, " << c << ")";
    add(lf::pad(x.a, w, c), ref_pad(x.r, w, c), os.str(),
        "np.pad(" + x.name + ", (" + py + "), constant_values=" + py_float(c) + ")");
    return true;
  }
  default: { // at().set / set_at
    auto idx = rand_index(s, chance(0.03), chance(0.5));
    HT region = ref_index(iota_like(s), idx);
    const bool scalar = chance(0.35);
    if (scalar) {
      Sc sc = rand_scalar(false);
      // An integer base takes a float scalar truncated toward zero, a bool base takes "nonzero".
      HT sv = make_ht(x.r.dt, {});
      sv.v[0] = constant_as(x.r.dt, sc.value());
      Array out = sc.apply([&](auto v) { return at_of(x.a, idx).set(v); });
      add(out, ref_set(x.r, idx, sv), x.name + ".at(" + index_text(idx) + ").set(" + sc.text() + ")",
          "nx.set(" + x.name + ", " + py_index_object(idx) + ", " + sc.py() + ")");
      return true;
    }
    // An array value broadcastable to the region.
    Shape vs = compatible_shape(region.shape, false);
    const Val v = leaf(vs, rand_dtype());
    add_assignment(x, idx, v);
    return true;
  }
  }
}

// ---------------------------------------------------------------------------------------------------------
// gathers, index writes, scans and sorts (issues 17 and 18)
// ---------------------------------------------------------------------------------------------------------

// An integer index array (int64, sometimes int32) into an axis of length len: in range, negative ones included,
// repeats likely.
Val& Case::index_leaf(const Shape& shape, i64 len) {
  const DType t = chance(0.8) ? DType::Int64 : DType::Int32;
  if (record_) leaf_types_.insert(dname(t));
  HT h = make_ht(t, shape);
  for (auto& v : h.v) v = double(uni(-len, len - 1));
  return data_leaf(h);
}

// An advanced index of up to 4 components into shape s: integer arrays (broadcasting together), integers and
// slices, at least one array; nullopt for a 0-d s.
std::optional<AdvIndex> Case::rand_adv(const Shape& s) {
  const int n = int(s.size());
  if (n == 0) return std::nullopt;
  const int k = int(uni(1, std::min(n, 4)));
  Shape b;
  for (int r = int(uni(0, 2)); r > 0; --r) b.push_back(uni(1, 4));
  AdvIndex out;
  bool any = false;
  for (int d = 0; d < k; ++d) {
    const i64 len = s[std::size_t(d)];
    int kind = int(uni(0, 9));
    if (d == k - 1 && !any) kind = 0;
    if (len == 0) kind = 9; // an index into an empty axis is an error
    const std::string sep = d ? ", " : "";
    if (kind <= 4) {
      const Val iv = index_leaf(compatible_shape(b, false), len);
      out.lib.push_back(iv.a);
      out.ref.push_back(AdvComp{AdvComp::Arr, 0, {}, iv.r});
      out.cpp += sep + iv.name;
      out.py += sep + iv.name;
      any = true;
    } else if (kind <= 6) {
      const i64 i = uni(-len, len - 1);
      out.lib.push_back(lf::Index(i));
      out.ref.push_back(AdvComp{AdvComp::Int, i, {}, {}});
      out.cpp += sep + std::to_string(i);
      out.py += sep + std::to_string(i);
    } else {
      lf::Slice sl;
      if (chance(0.5)) {
        sl.step = chance(0.6) ? 1 : (chance(0.5) ? -1 : 2);
        if (chance(0.6)) sl.start = uni(-len - 1, len + 1);
        if (chance(0.6)) sl.stop = uni(-len - 1, len + 1);
      }
      out.lib.push_back(lf::Index(sl));
      out.ref.push_back(AdvComp{AdvComp::Sl, 0, sl, {}});
      out.cpp += sep + index_text({sl});
      out.py += sep + py_index({sl});
    }
  }
  if (!any) return std::nullopt;
  return out;
}

// A mask over some leading axes of pool value xi (after one whole axis, sometimes): a comparison with a threshold of
// an array in the program of the covered shape (xi itself, a view of it, another pool value or a new leaf). Its
// true positions decide the result's size, so every element of the mask must be certain.
std::optional<AdvIndex> Case::rand_mask(std::size_t xi) {
  const Val x = pool_[xi];
  const Shape& s = x.r.shape;
  const int n = int(s.size());
  if (n == 0) return std::nullopt;
  const int lead = n >= 2 && chance(0.25) ? 1 : 0;
  const int k = int(uni(1, n - lead));
  const Shape ms(s.begin() + lead, s.begin() + lead + k);
  // The compared array: xi or a view of it when real, else another pool value or a new leaf of the mask's shape.
  std::optional<std::size_t> src;
  if (!isc(x.r.dt) && chance(0.6)) {
    if (lead == 0 && k == n) {
      src = xi;
    } else {
      bool ok = true;
      std::vector<lf::Index> idx;
      for (int d = 0; d < n; ++d) {
        const i64 len = s[std::size_t(d)];
        if (d >= lead && d < lead + k)
          idx.push_back(lf::all_of);
        else if (len > 0)
          idx.push_back(uni(-len, len - 1));
        else
          ok = false;
      }
      if (ok) {
        add(x.a.index_with(idx), ref_index(x.r, idx), x.name + "(" + index_text(idx) + ")", py_subscript(x.name, idx));
        src = pool_.size() - 1;
      }
    }
  }
  if (!src) {
    std::vector<std::size_t> same;
    for (std::size_t q = 0; q < pool_.size(); ++q)
      if (pool_[q].r.shape == ms && !isc(pool_[q].r.dt)) same.push_back(q);
    if (!same.empty() && chance(0.5)) {
      src = pick(same);
    } else {
      DType t;
      do t = rand_dtype();
      while (isc(t));
      leaf(ms, t);
      src = pool_.size() - 1;
    }
  }
  const Val m = pool_[*src];
  // A threshold between the values (at a quarter step off one of them), so that both sides are likely populated.
  Sc th;
  if (m.r.dt == DType::Bool) {
    th.cpp = 0;
    th.b = false;
  } else {
    const double at = m.r.v.empty() ? 0.0 : m.r.v[std::size_t(uni(0, m.r.size() - 1))];
    if (isi(m.r.dt) || !std::isfinite(at)) {
      th.cpp = 1;
      th.i = std::isfinite(at) ? int(std::clamp(at, -1e6, 1e6)) : 0;
    } else {
      th.cpp = 3;
      th.f = std::round(at * 4) / 4 + (chance(0.5) ? 0.125 : -0.125);
    }
  }
  static const B cmp[] = {B::Gt, B::Ge, B::Lt, B::Le, B::Ne};
  const B op = m.r.dt == DType::Bool ? B::Ne : cmp[uni(0, 4)];
  const DType t = promote_weak(m.r.dt, th.kind());
  HT mr = ref_binary_t(op, m.r, scalar_ht(th, t), t);
  for (double e : mr.e)
    if (e != 0) return std::nullopt;
  Array ma = th.apply([&](auto c) {
    switch (op) {
    case B::Gt: return lf::greater(m.a, c);
    case B::Ge: return lf::greater_equal(m.a, c);
    case B::Lt: return lf::less(m.a, c);
    case B::Le: return lf::less_equal(m.a, c);
    default: return lf::not_equal(m.a, c);
    }
  });
  const Val mask = add(ma, mr, std::string("lf::") + bname(op) + "(" + m.name + ", " + th.text() + ")",
                       std::string("nx.") + bname(op) + "(" + m.name + ", " + th.py() + ")");
  AdvIndex out;
  if (lead) {
    out.lib.push_back(lf::Index(lf::all_of));
    out.ref.push_back(AdvComp{});
    out.cpp = "lf::all_of, ";
    out.py = ":, ";
  }
  out.lib.push_back(mask.a);
  for (auto& pos : ref_nonzero(mask.r)) out.ref.push_back(AdvComp{AdvComp::Arr, 0, {}, pos});
  out.cpp += mask.name;
  out.py += mask.name;
  return out;
}

bool Case::op_take(std::size_t xi) {
  const Val x = pool_[xi];
  const int n = int(x.r.shape.size());
  std::optional<int> axis;
  if (n > 0 && chance(0.7)) axis = int(uni(-n, n - 1));
  const i64 len = axis ? x.r.shape[std::size_t(*axis < 0 ? *axis + n : *axis)] : x.r.size();
  if (len == 0) return false;
  Shape is;
  for (int r = int(uni(0, 2)); r > 0; --r) is.push_back(uni(1, 5));
  if (x.r.size() / len * numel(is) > kMaxElements) return false;
  const Val idx = index_leaf(is, len);
  const std::string ax = axis ? std::to_string(*axis) : "std::nullopt";
  add(lf::take(x.a, idx.a, axis), ref_take(x.r, idx.r, axis), "lf::take(" + x.name + ", " + idx.name + ", " + ax + ")",
      "np.take(" + x.name + ", " + idx.name + ", axis=" + (axis ? ax : "None") + ")");
  note_category(family_name(Fam::Take));
  return true;
}

bool Case::op_take_along(std::size_t xi) {
  const Val x = pool_[xi];
  const Shape& s = x.r.shape;
  const int n = int(s.size());
  std::optional<int> axis;
  if (n > 0 && chance(0.75)) axis = int(uni(-n, n - 1));
  const std::size_t ax = axis ? std::size_t(*axis < 0 ? *axis + n : *axis) : 0;
  const i64 len = axis ? s[ax] : x.r.size();
  if (len == 0) return false;
  std::optional<Val> idx;
  if (!isc(x.r.dt) && chance(0.35)) {
    // take_along_axis(x, argsort(x, axis), axis): the sort's indices gather x.
    if (!op_sort(xi, true, std::optional<std::optional<int>>(std::in_place, axis))) return false;
    idx = pool_.back();
  } else {
    Shape is{uni(1, 5)};
    if (axis) {
      is = s;
      for (auto& d : is)
        if (chance(0.3)) d = 1;
      is[ax] = uni(1, 5);
    }
    idx = index_leaf(is, len);
  }
  HT r = ref_take_along(x.r, idx->r, axis);
  if (r.size() > kMaxElements) return false;
  const std::string a = axis ? std::to_string(*axis) : "std::nullopt";
  add(lf::take_along_axis(x.a, idx->a, axis), r, "lf::take_along_axis(" + x.name + ", " + idx->name + ", " + a + ")",
      "np.take_along_axis(" + x.name + ", " + idx->name + ", axis=" + (axis ? a : "None") + ")");
  note_category(family_name(Fam::TakeAlong));
  return true;
}

bool Case::op_index_arrays(std::size_t xi) {
  const Val x = pool_[xi];
  auto idx = rand_adv(x.r.shape);
  if (!idx) return false;
  HT r = ref_advanced(x.r, idx->ref);
  if (r.size() > kMaxElements) return false;
  // One array: the operator itself (x(idx)); otherwise the list form it forwards to.
  const Array out = idx->lib.size() == 1 ? x.a(std::get<Array>(idx->lib[0])) : x.a.index_arrays(idx->lib);
  add(out, r, x.name + "(" + idx->cpp + ")", x.name + "[" + idx->py + "]");
  note_category(family_name(Fam::IndexArrays));
  return true;
}

bool Case::op_mask(std::size_t xi) {
  auto idx = rand_mask(xi);
  if (!idx) return false;
  const Val x = pool_[xi];
  HT r = ref_advanced(x.r, idx->ref);
  const Array out =
      idx->lib.size() == 1 ? x.a(std::get<Array>(idx->lib[0])) : x.a(lf::all_of, std::get<Array>(idx->lib[1]));
  add(out, r, x.name + "(" + idx->cpp + ")", x.name + "[" + idx->py + "]");
  note_category(family_name(Fam::Mask));
  return true;
}

// x.at(index arrays or a mask).add(v): np.add.at, every duplicate counted (real, non-bool x).
bool Case::op_add_at(std::size_t xi) {
  const Val x = pool_[xi];
  if (isc(x.r.dt) || x.r.dt == DType::Bool) return false;
  auto idx = chance(0.25) ? rand_mask(xi) : rand_adv(x.r.shape);
  if (!idx || idx->lib.size() > 4) return false;
  const HT region = ref_advanced(iota_like(x.r.shape), idx->ref);
  DType vt;
  do vt = rand_dtype();
  while (isc(vt));
  const Val v = leaf(compatible_shape(region.shape, false), vt);
  HT r = ref_add_at(x.r, idx->ref, v.r);
  if (maxabs(r) > kMaxMagnitude) return false;
  add(at_adv(x.a, idx->lib, 0).add(v.a), std::move(r), x.name + ".at(" + idx->cpp + ").add(" + v.name + ")",
      "nx.add_at(" + x.name + ", np.s_[" + idx->py + "], " + v.name + ")");
  note_category(family_name(Fam::AddAt));
  return true;
}

// cumsum, cumprod, nancumsum of a real array along an axis or flattened, sometimes with a dtype.
bool Case::op_scan(std::size_t xi, Fam f) {
  const Val x = pool_[xi];
  if (isc(x.r.dt)) return false;
  const int n = int(x.r.shape.size());
  std::optional<int> axis;
  if (n > 0 && chance(0.7)) axis = int(uni(-n, n - 1));
  const i64 len = axis ? x.r.shape[std::size_t(*axis < 0 ? *axis + n : *axis)] : x.r.size();
  const bool product = f == Fam::Cumprod;
  const double m = maxabs(x.r);
  if (!product && m * double(len) > kMaxMagnitude) return false;
  if (product) {
    if (len > 32) return false;
    double worst = 1;
    for (i64 k = 0; k < len; ++k) worst *= std::max(1.0, m);
    if (worst > kMaxMagnitude) return false;
  }
  std::optional<DType> dtype;
  if (chance(0.15)) dtype = chance(0.5) ? DType::Float64 : DType::Float32;
  const HT in = dtype ? ref_cast(x.r, *dtype) : x.r;
  HT r = ref_scan(product, f == Fam::Nancumsum, in, axis);
  // Products that could reach float32's subnormals (which a backend may flush) are left out.
  if (product && isf(r.dt))
    for (double v : r.v)
      if (v != 0 && std::fabs(v) < 0x1p-100) return false;
  const char* name = f == Fam::Cumsum ? "cumsum" : (product ? "cumprod" : "nancumsum");
  const std::string a = axis ? std::to_string(*axis) : "std::nullopt";
  std::string cpp = std::string("lf::") + name + "(" + x.name, py = std::string("nx.") + name + "(" + x.name;
  if (axis || dtype) cpp += ", " + a;
  py += ", axis=" + (axis ? a : std::string("None"));
  if (dtype) {
    cpp += std::string(", ") + dcpp(*dtype);
    py += ", dtype=" + py_dtype(*dtype);
  }
  Array out = f == Fam::Cumsum ? lf::cumsum(x.a, axis, dtype)
                               : (product ? lf::cumprod(x.a, axis, dtype) : lf::nancumsum(x.a, axis, dtype));
  add(out, std::move(r), cpp + ")", py + ")");
  note_category(family_name(f));
  return true;
}

// sort or argsort of a real array: the default axis (the last), a given one, or flattened (`axis` forces one).
bool Case::op_sort(std::size_t xi, bool arg, std::optional<std::optional<int>> axis) {
  const Val x = pool_[xi];
  if (isc(x.r.dt)) return false;
  const int n = int(x.r.shape.size());
  const bool by_default = !axis && n > 0 && chance(0.3);
  if (!axis)
    axis = by_default ? std::optional<int>(-1)
                      : (n == 0 || chance(0.3) ? std::nullopt : std::optional<int>(int(uni(-n, n - 1))));
  const std::optional<int> ax = *axis;
  if (!ax && x.r.size() > kMaxElements) return false;
  const char* name = arg ? "argsort" : "sort";
  const std::string a = ax ? std::to_string(*ax) : "std::nullopt";
  const std::string cpp = std::string("lf::") + name + "(" + x.name + (by_default ? "" : ", " + a) + ")";
  const std::string py =
      std::string("np.") + name + "(" + x.name + ", axis=" + (ax ? a : "None") + ", kind=\"stable\")";
  if (arg)
    add(lf::argsort(x.a, ax), ref_argsort(x.r, ax), cpp, py);
  else
    add(lf::sort(x.a, ax), ref_sort(x.r, ax), cpp, py);
  note_category(family_name(arg ? Fam::Argsort : Fam::Sort));
  return true;
}

bool Case::op_family(Fam f, std::size_t xi) {
  switch (f) {
  case Fam::Take: return op_take(xi);
  case Fam::TakeAlong: return op_take_along(xi);
  case Fam::IndexArrays: return op_index_arrays(xi);
  case Fam::Mask: return op_mask(xi);
  case Fam::AddAt: return op_add_at(xi);
  case Fam::Cumsum:
  case Fam::Cumprod:
  case Fam::Nancumsum: return op_scan(xi, f);
  case Fam::Sort: return op_sort(xi, false);
  case Fam::Argsort: return op_sort(xi, true);
  }
  return false;
}

// Brings a value's magnitude down (used when the op generators keep refusing).
void Case::tame(std::size_t xi) {
  if (isc(pool_[xi].r.dt)) { // tanh of its modulus
    const Val z = pool_[xi];
    add(lf::abs(z.a), ref_unary(U::Abs, z.r), "lf::abs(" + z.name + ")", "nx.abs(" + z.name + ")");
    xi = pool_.size() - 1;
  }
  const Val x = pool_[xi];
  add(lf::tanh(x.a), ref_unary(U::Tanh, x.r), "lf::tanh(" + x.name + ")", "nx.tanh(" + x.name + ")");
}

void Case::eval_one(std::size_t xi) {
  pool_[xi].a.eval();
  emit(pool_[xi].name + ".eval();");
}

// ---------------------------------------------------------------------------------------------------------
// reductions and the shapes users write around them
// ---------------------------------------------------------------------------------------------------------

// A reduction of pool value xi: of kind `want` when given (nullopt when xi cannot give that kind), with the axes
// and keepdims of `like` when given (a sibling of the same shape). Also records an empty min/max/argmin/argmax,
// which must throw (NumPy raises ValueError), and then returns nullopt.
std::optional<std::size_t> Case::op_reduce(std::size_t xi, std::optional<RKind> want, std::optional<ReduceSpec> like) {
  const Val x = pool_[xi];
  const Shape& s = x.r.shape;
  const int n = int(s.size());
  RKind kind = want ? *want : (chance(0.35) ? RKind::Full : (chance(0.55) ? RKind::Partial : RKind::Keepdims));
  if (!like && kind == RKind::Partial && n < 2) return std::nullopt;
  static const R ops[] = {R::Sum,    R::Prod,   R::Min, R::Max, R::Mean, R::Var,          R::Std,
                          R::ArgMin, R::ArgMax, R::Any, R::All, R::Mean, R::CountNonzero, R::Sum};
  ReduceSpec spec;
  spec.op = ops[uni(0, i64(std::size(ops)) - 1)];
  // var and std of complex values are real (of |x - mean|^2): not modelled by the reference, so a mean instead.
  if (isc(x.r.dt) && (spec.op == R::Var || spec.op == R::Std)) spec.op = R::Mean;
  spec.keepdims = kind == RKind::Keepdims;
  spec.ddof = int(uni(0, 1));
  bool int_form = false; // one axis written as an int rather than a list
  if (like) {
    // The sibling's axes and keepdims give the same shape whatever the op; argmin/argmax take one axis or none.
    spec.axes = like->axes;
    spec.keepdims = like->keepdims;
    if (is_arg(spec.op) && spec.axes && spec.axes->size() != 1) spec.op = R::Max;
  } else if (is_arg(spec.op)) {
    // argmin/argmax: one axis, or the flattened array.
    if (kind == RKind::Partial) {
      spec.axes = std::vector<int>{int(uni(-n, n - 1))};
      int_form = true;
    } else if (n >= 1 && chance(kind == RKind::Full ? (n == 1 ? 0.5 : 0.0) : 0.5)) {
      spec.axes = std::vector<int>{int(uni(-n, n - 1))};
      int_form = true;
    }
  } else {
    std::vector<int> all(std::size_t(n), 0);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng_);
    i64 count = n;
    if (kind == RKind::Partial)
      count = uni(1, n - 1);
    else if (kind == RKind::Keepdims && n > 0 && chance(0.6))
      count = uni(1, n);
    if (kind != RKind::Full && n > 0 && chance(0.03)) count = 0; // axis=(): reduces nothing
    if (count == n && count > 0 && chance(0.5)) {
      // all axes by default
    } else {
      std::vector<int> axes(all.begin(), all.begin() + count);
      for (auto& a : axes)
        if (chance(0.3)) a -= n;
      spec.axes = axes;
      int_form = axes.size() == 1 && chance(0.5);
    }
    if (count == 0) spec.axes = std::vector<int>{};
  }
  const R op = spec.op;
  if (is_arg(op) && spec.axes) int_form = true; // np.argmax takes an int axis
  const auto ax = reduced_axes(s, spec.axes);
  // The shape decides the kind: a reduction of every axis without keepdims is "full".
  kind = spec.keepdims ? RKind::Keepdims : (int(ax.size()) == n ? RKind::Full : RKind::Partial);
  if (want && kind != *want) return std::nullopt;
  i64 count = 1;
  for (int a : ax) count *= s[std::size_t(a)];
  if (isc(x.r.dt) && op == R::Mean && count == 0) return std::nullopt; // nan + nanj: not modelled

  // The C++ and the Python call.
  std::string cpp_axes, py_axes;
  if (!spec.axes) {
    cpp_axes = spec.keepdims ? (is_arg(op) ? ", std::nullopt" : ", {}") : "";
  } else if (int_form) {
    cpp_axes = ", " + std::to_string((*spec.axes)[0]);
    py_axes = ", axis=" + std::to_string((*spec.axes)[0]);
  } else {
    std::string list;
    for (int a : *spec.axes) list += (list.empty() ? "" : ", ") + std::to_string(a);
    cpp_axes = spec.axes->empty() ? ", std::vector<int>{}" : ", {" + list + "}";
    py_axes = ", axis=" + py_tuple(*spec.axes);
  }
  const bool moment = op == R::Var || op == R::Std;
  std::string cpp_rest, py_rest;
  if (moment) {
    if (cpp_axes.empty()) cpp_axes = ", {}";
    cpp_rest = ", " + std::to_string(spec.ddof) + (spec.keepdims ? ", true" : "");
    py_rest = ", ddof=" + std::to_string(spec.ddof);
  } else if (spec.keepdims) {
    cpp_rest = ", true";
  }
  if (spec.keepdims) py_rest += ", keepdims=True";
  const std::string cpp =
      std::string("lf::") + (op == R::Std ? "stddev" : rname(op)) + "(" + x.name + cpp_axes + cpp_rest + ")";
  // nx: sums, products and moments of float16 and bfloat16 accumulate in float32 (numpy_oracle.py).
  const bool accumulates = op == R::Sum || op == R::Prod || op == R::Mean || moment;
  const std::string py = std::string(accumulates ? "nx." : "np.") + rname(op) + "(" + x.name + py_axes + py_rest + ")";

  const lf::Axes axes_arg = spec.axes ? lf::Axes(*spec.axes) : lf::Axes();
  const std::optional<int> axis_arg = is_arg(op) && spec.axes ? std::optional<int>((*spec.axes)[0]) : std::nullopt;
  auto build = [&]() -> Array {
    switch (op) {
    case R::Sum: return lf::sum(x.a, axes_arg, spec.keepdims);
    case R::Prod: return lf::prod(x.a, axes_arg, spec.keepdims);
    case R::Min: return lf::min(x.a, axes_arg, spec.keepdims);
    case R::Max: return lf::max(x.a, axes_arg, spec.keepdims);
    case R::Mean: return lf::mean(x.a, axes_arg, spec.keepdims);
    case R::Var: return lf::var(x.a, axes_arg, spec.ddof, spec.keepdims);
    case R::Std: return lf::stddev(x.a, axes_arg, spec.ddof, spec.keepdims);
    case R::ArgMin: return lf::argmin(x.a, axis_arg, spec.keepdims);
    case R::ArgMax: return lf::argmax(x.a, axis_arg, spec.keepdims);
    case R::Any: return lf::any(x.a, axes_arg, spec.keepdims);
    case R::All: return lf::all(x.a, axes_arg, spec.keepdims);
    case R::CountNonzero: return lf::count_nonzero(x.a, axes_arg, spec.keepdims);
    }
    return Array();
  };

  if (needs_elements(op) && count == 0) {
    // No identity: NumPy raises ValueError, lazyfuse throws lazyfuse::Error when the expression is built.
    bool threw = false;
    try {
      build();
    } catch (const lf::Error&) {
      threw = true;
    }
    EXPECT_TRUE(threw) << cpp << " reduces zero elements and must throw lazyfuse::Error";
    emit("// " + cpp + " throws lazyfuse::Error (no elements)");
    py_.push_back("nx.expect_error(lambda: " + py + ")");
    if (record_) reductions_.insert(kEmptyReduction);
    return std::nullopt;
  }
  // Magnitudes stay sane: sums and products below kMaxMagnitude, var of values below 1e3.
  const double m = maxabs(x.r);
  if (op == R::Sum && m * double(count) > kMaxMagnitude) return std::nullopt;
  if (op == R::Prod) {
    if (count > 16) return std::nullopt;
    double worst = 1;
    for (int k = 0; k < count; ++k) worst *= std::max(1.0, m);
    if (worst > kMaxMagnitude) return std::nullopt;
  }
  if (moment && m > 1e3) return std::nullopt;

  HT r = ref_reduce(spec, x.r);
  Val& v = add(build(), std::move(r), cpp, py);
  v.kind = kind;
  v.spec = spec;
  if (record_) reductions_.insert(rname(op));
  return pool_.size() - 1;
}

// A view of pool value xi (an index or a transposition) that broadcasts with `with`, added to the pool.
std::optional<std::size_t> Case::view_of(std::size_t xi, const Shape& with) {
  const Val x = pool_[xi];
  for (int tries = 0; tries < 8; ++tries) {
    if (chance(0.2) && x.r.shape.size() >= 2) {
      HT t = ref_transpose(x.r, {});
      auto b = broadcast_shape(t.shape, with);
      if (!b || numel(*b) > kMaxElements) continue;
      add(x.a.T(), std::move(t), x.name + ".T()", x.name + ".T");
      return pool_.size() - 1;
    }
    auto idx = rand_index(x.r.shape, false, chance(0.2));
    HT h = ref_index(x.r, idx);
    auto b = broadcast_shape(h.shape, with);
    if (!b || numel(*b) > kMaxElements) continue;
    add(x.a.index_with(idx), std::move(h), x.name + "(" + index_text(idx) + ")", py_subscript(x.name, idx));
    return pool_.size() - 1;
  }
  return std::nullopt;
}

// An elementwise op of pool values a and b (which broadcast together).
bool Case::mix(std::size_t ai, std::size_t bi) {
  for (int tries = 0; tries < 4; ++tries)
    if (op_binary(ai, bi)) return true;
  const Val a = pool_[ai], b = pool_[bi];
  auto s = broadcast_shape(a.r.shape, b.r.shape);
  if (!s || numel(*s) > kMaxElements) return false;
  add(lf::maximum(a.a, b.a), ref_binary(B::Max, a.r, b.r), "lf::maximum(" + a.name + ", " + b.name + ")",
      "nx.maximum(" + a.name + ", " + b.name + ")");
  return true;
}

// A partner for reduction ri of xi in a broadcasting op: xi itself, a view of it, or an array of another shape
// and rank that the reduction broadcasts into.
std::optional<std::size_t> Case::broadcast_partner(std::size_t ri, std::size_t xi) {
  const Shape sr = pool_[ri].r.shape;
  const int k = int(uni(0, 9));
  if (k < 3) {
    auto b = broadcast_shape(sr, pool_[xi].r.shape);
    if (b && numel(*b) <= kMaxElements) return xi;
  }
  if (k < 7) {
    if (auto v = view_of(xi, sr)) return v;
  }
  // A new leaf whose shape embeds sr: leading axes added, some of sr's set to 1.
  Shape p = sr;
  for (auto& d : p)
    if (chance(0.2)) d = 1;
  const int extra = int(uni(p.empty() ? 1 : 0, 2));
  for (int e = 0; e < extra && p.size() < 5; ++e) p.insert(p.begin(), uni(2, 4));
  auto b = broadcast_shape(sr, p);
  if (!b || numel(*b) > kMaxElements) return std::nullopt;
  leaf(p, rand_dtype());
  return pool_.size() - 1;
}

bool Case::consume(Consumer c, std::size_t ri, std::size_t xi) {
  const Val r = pool_[ri];
  const Shape sr = r.r.shape;
  const int nr = int(sr.size());
  bool ok = false;
  switch (c) {
  case Consumer::View: {
    if (chance(0.5)) {
      ok = op_view(ri, kViews);
      break;
    }
    // A view of an elementwise op of the reduction: (x + max(x))[1:].
    auto p = broadcast_partner(ri, xi);
    ok = p && mix(ri, *p) && op_view(pool_.size() - 1, kViews);
    break;
  }
  case Consumer::Broadcast: {
    if (chance(0.25)) {
      ok = op_view(ri, kBroadcastTo);
      break;
    }
    // x[1:] + sum(x), y[1] + sum(y), an array of another rank + sum(x, 0).
    auto p = broadcast_partner(ri, xi);
    ok = p && mix(ri, *p);
    break;
  }
  case Consumer::Reshape: {
    const int k = int(uni(0, 2));
    if (k == 0) {
      ok = op_view(ri, kReshapes);
    } else if (k == 1) {
      // y.reshape(...) + sum(y)
      if (!op_view(xi, kReshapes)) break;
      const std::size_t xr = pool_.size() - 1;
      auto b = broadcast_shape(pool_[xr].r.shape, sr);
      ok = b && numel(*b) <= kMaxElements ? mix(ri, xr) : op_view(ri, kReshapes);
    } else {
      auto p = broadcast_partner(ri, xi);
      ok = p && mix(ri, *p) && op_view(pool_.size() - 1, kReshapes);
    }
    break;
  }
  case Consumer::Join: {
    const int k = int(uni(0, 2));
    if (k == 0) {
      // stack({sum(x), sum(w)}), concatenate({max(x, 0), min(x, 0)}): a sibling reduction of the same shape.
      std::optional<std::size_t> sib;
      const ReduceSpec spec = *r.spec;
      for (int tries = 0; tries < 6 && !sib; ++tries) {
        if (*r.kind == RKind::Full)
          sib = op_reduce(std::size_t(uni(0, i64(pool_.size()) - 1)), RKind::Full);
        else
          sib = op_reduce(xi, std::nullopt, spec);
      }
      if (!sib || pool_[*sib].r.shape != sr) break;
      const Val a = pool_[ri], b = pool_[*sib];
      const bool concat = nr > 0 && chance(0.5);
      const int ax = concat ? int(uni(-nr, nr - 1)) : int(uni(-nr - 1, nr));
      const std::string names = a.name + ", " + b.name;
      if (concat)
        add(lf::concatenate({a.a, b.a}, ax), ref_concat({a.r, b.r}, ax),
            "lf::concatenate({" + names + "}, " + std::to_string(ax) + ")",
            "np.concatenate((" + names + "), axis=" + std::to_string(ax) + ")");
      else
        add(lf::stack({a.a, b.a}, ax), ref_stack({a.r, b.r}, ax),
            "lf::stack({" + names + "}, " + std::to_string(ax) + ")",
            "np.stack((" + names + "), axis=" + std::to_string(ax) + ")");
      ok = true;
    } else if (k == 1) {
      ok = op_combine(ri, kConcat | kStack | kPad);
    } else {
      // Joined with its own input: concatenate({sum(x, 0, true), x}, 0), stack({sum(x, 0), x[2]}).
      const Val x = pool_[xi];
      const auto ax = reduced_axes(x.r.shape, r.spec->axes);
      if (r.spec->keepdims && ax.size() == 1 && !x.r.shape.empty() && r.r.size() + x.r.size() <= kMaxElements) {
        const int a = ax[0];
        add(lf::concatenate({r.a, x.a}, a), ref_concat({r.r, x.r}, a),
            "lf::concatenate({" + r.name + ", " + x.name + "}, " + std::to_string(a) + ")",
            "np.concatenate((" + r.name + ", " + x.name + "), axis=" + std::to_string(a) + ")");
        ok = true;
        break;
      }
      // A part of x of the reduction's shape: x indexed with an integer on every reduced axis.
      if (r.spec->keepdims) break;
      std::vector<lf::Index> idx;
      for (int d = 0; d < int(x.r.shape.size()); ++d) {
        const i64 len = x.r.shape[std::size_t(d)];
        if (std::find(ax.begin(), ax.end(), d) == ax.end())
          idx.push_back(lf::all_of);
        else if (len > 0)
          idx.push_back(uni(-len, len - 1));
        else
          return false;
      }
      HT part = ref_index(x.r, idx);
      if (part.shape != sr) break;
      const Val& pv = add(x.a.index_with(idx), part, x.name + "(" + index_text(idx) + ")", py_subscript(x.name, idx));
      const Val p = pv;
      const int s_ax = int(uni(-nr - 1, nr));
      add(lf::stack({r.a, p.a}, s_ax), ref_stack({r.r, p.r}, s_ax),
          "lf::stack({" + r.name + ", " + p.name + "}, " + std::to_string(s_ax) + ")",
          "np.stack((" + r.name + ", " + p.name + "), axis=" + std::to_string(s_ax) + ")");
      ok = true;
    }
    break;
  }
  case Consumer::AtSet: {
    if (chance(0.35)) { // the reduction as the base
      ok = op_combine(ri, kSet);
      break;
    }
    // w.at(0).set(sum(x)), x.at(1:).set(max(x, 0)): the reduction as the value, into x or another array.
    std::size_t wi = chance(0.6) ? xi : std::size_t(uni(0, i64(pool_.size()) - 1));
    std::vector<lf::Index> idx;
    bool found = false;
    for (int tries = 0; tries < 12 && !found; ++tries) {
      idx = rand_index(pool_[wi].r.shape, false, false);
      HT region = ref_index(iota_like(pool_[wi].r.shape), idx);
      auto b = broadcast_shape(region.shape, sr);
      found = b && *b == region.shape;
    }
    if (!found) { // a new array with the reduction's shape as rows
      Shape ws = sr;
      ws.insert(ws.begin(), uni(2, 4));
      if (numel(ws) > kMaxElements) break;
      leaf(ws, rand_dtype());
      wi = pool_.size() - 1;
      idx = {i64(uni(-ws[0], ws[0] - 1))};
    }
    const Val w = pool_[wi];
    add_assignment(w, idx, r);
    ok = true;
    break;
  }
  case Consumer::MultiOutput: {
    // lazyfuse::eval of the reduction beside roots of other shapes and ranks.
    std::vector<std::size_t> group{ri};
    const int k = int(uni(0, 3));
    if (k == 0 || k == 3) {
      auto p = broadcast_partner(ri, xi);
      if (!p || !mix(ri, *p)) break;
      group.push_back(pool_.size() - 1);
    }
    if (k == 1 || k == 3) {
      bool done = false;
      for (int tries = 0; tries < 4 && !done; ++tries) done = chance(0.5) ? op_unary(xi) : op_scalar(xi);
      if (!done) break;
      group.push_back(pool_.size() - 1);
    }
    if (k == 2) {
      if (!op_view(ri, kReshapes | kBroadcastTo)) break;
      group.push_back(pool_.size() - 1);
    }
    groups_.push_back({group, Label{category(*r.kind, c), rname(r.spec->op)}});
    note_category(category(*r.kind, c));
    return true;
  }
  }
  if (!ok) return false;
  roots_.push_back({pool_.size() - 1, Label{category(*r.kind, c), rname(r.spec->op)}});
  note_category(category(*r.kind, c));
  return true;
}

// One random op on a random pool value (reductions too when `reductions`).
bool Case::random_op(bool reductions) {
  for (int tries = 0; tries < 12; ++tries) {
    const std::size_t xi = pick_val();
    const int cat = int(uni(0, reductions ? 115 : 103));
    bool done = false;
    if (cat < 24)
      done = op_unary(xi);
    else if (cat < 44)
      done = op_binary(xi);
    else if (cat < 56)
      done = op_scalar(xi);
    else if (cat < 61)
      done = op_where(xi);
    else if (cat < 67)
      done = op_astype(xi);
    else if (cat < 88)
      done = op_view(xi);
    else if (cat < 96)
      done = op_combine(xi);
    else if (cat < 100) {
      eval_one(xi);
      done = true;
    } else if (cat < 104) {
      done = op_family(Fam(uni(0, kFamilies - 1)), xi);
    } else {
      done = op_reduce(xi).has_value();
    }
    if (done) return true;
  }
  tame(pool_.size() - 1);
  return true;
}

void Case::plain_program() {
  const int leaves = int(uni(1, 4));
  for (int k = 0; k < leaves; ++k) leaf(rand_shape(), rand_dtype());
  if (chance(0.1)) {
    // The transpose of a matrix whose axes are long enough for the GPU's tiles (16 elements), of any row length, for
    // the ops below to read: square tiles, mirrored pairs and wide tiles, partial at the edges.
    leaf(Shape{uni(16, 150), uni(16, 150)}, rand_dtype());
    const Val x = pool_.back();
    add(x.a.T(), ref_transpose(x.r, {}), x.name + ".T()", x.name + ".T");
  }
  const int ops = int(uni(3, 25));
  for (int k = 0; k < ops; ++k) random_op(false);
  // Results: the newest value and up to two others, one at a time or together.
  std::vector<std::size_t> roots{pool_.size() - 1};
  const int extra = int(uni(0, 2));
  for (int k = 0; k < extra; ++k) {
    std::size_t r = std::size_t(uni(0, i64(pool_.size()) - 1));
    if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  }
  const Label label{kPlainCategory, ""};
  if (roots.size() > 1 && chance(0.5)) {
    groups_.push_back({roots, label});
  } else {
    for (auto r : roots) roots_.push_back({r, label});
  }
  note_category(kPlainCategory);
}

void Case::reduction_program() {
  const int leaves = int(uni(1, 3));
  for (int k = 0; k < leaves; ++k) {
    Shape s = rand_shape();
    if (!s.empty() && chance(0.04)) s[std::size_t(uni(0, i64(s.size()) - 1))] = 0; // empty reductions too
    leaf(s, rand_dtype());
  }
  const int warmup = int(uni(0, 5));
  for (int k = 0; k < warmup; ++k) random_op(true);
  const int patterns = int(uni(2, 4));
  for (int p = 0; p < patterns; ++p) {
    const Consumer c = kConsumers[uni(0, 5)];
    const RKind want = RKind(uni(0, 2));
    bool done = false;
    for (int tries = 0; tries < 8 && !done; ++tries) {
      // The reduced value: a pool value (biased to the newest), or a new leaf of rank >= 2 for partial ones.
      std::size_t xi = pick_val();
      if (want == RKind::Partial && pool_[xi].r.shape.size() < 2) {
        std::vector<std::size_t> ok;
        for (std::size_t k = 0; k < pool_.size(); ++k)
          if (pool_[k].r.shape.size() >= 2) ok.push_back(k);
        if (ok.empty() || chance(0.3)) {
          Shape s = rand_shape();
          while (s.size() < 2) s.push_back(uni(1, 6));
          leaf(s, rand_dtype());
          xi = pool_.size() - 1;
        } else {
          xi = pick(ok);
        }
      }
      auto ri = op_reduce(xi, want);
      if (!ri) continue;
      done = consume(c, *ri, xi);
    }
  }
  // A few more ops on top of the newest values; the newest is a result too.
  const int after = int(uni(0, 2));
  for (int k = 0; k < after; ++k) random_op(true);
  if (after > 0) {
    roots_.push_back({pool_.size() - 1, Label{kLaterOps, ""}});
    note_category(kLaterOps);
  }
}

// A program around the operations of issues 17 and 18: a few random ops, then 2-3 gathers, index writes, scans or
// sorts, each of an elementwise expression, a view or a broadcast (or of a pool value as it is), and consumed by
// elementwise work, a reduction, a view or join, or evaluated with lazyfuse::eval beside its input.
void Case::index_program() {
  const int leaves = int(uni(1, 3));
  for (int k = 0; k < leaves; ++k) leaf(rand_shape(), rand_dtype());
  const int warmup = int(uni(0, 4));
  for (int k = 0; k < warmup; ++k) random_op(false);
  const int patterns = int(uni(2, 3));
  for (int p = 0; p < patterns; ++p) {
    const Fam f = Fam(uni(0, kFamilies - 1));
    const FamIn in = FamIn(uni(0, 3));
    const FamOut out = FamOut(uni(0, 4));
    for (int tries = 0; tries < 8; ++tries) {
      std::size_t xi = pick_val();
      if (tries == 0 && chance(0.12)) {
        // A long axis, so that scans cross the library's tiles and sorts have long lines.
        leaf(chance(0.5) ? Shape{uni(1000, 9000)} : Shape{uni(1, 3), uni(600, 3000)}, rand_dtype());
        xi = pool_.size() - 1;
      } else if (tries == 0 && (f == Fam::Nancumsum || f == Fam::Sort || f == Fam::Argsort) && chance(0.3)) {
        // NaNs (and for sorts infinities) where nancumsum and NumPy's sort order treat them specially.
        static const DType floats[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
        HT h = make_ht(floats[uni(0, 3)], rand_shape());
        const bool inf = f != Fam::Nancumsum && chance(0.5);
        for (auto& v : h.v) {
          const int k = int(uni(0, 9));
          v = k < 2 ? std::numeric_limits<double>::quiet_NaN()
                    : (k == 2 && inf ? (chance(0.5) ? kInf : -kInf) : rand_value(h.dt, false));
        }
        if (record_) leaf_types_.insert(dname(h.dt));
        data_leaf(h);
        xi = pool_.size() - 1;
      }
      bool ok = true;
      switch (in) {
      case FamIn::Plain: break;
      case FamIn::Elementwise: ok = chance(0.4) ? op_unary(xi) : (chance(0.5) ? op_binary(xi) : op_scalar(xi)); break;
      case FamIn::View: ok = op_view(xi, kViews); break;
      case FamIn::Broadcast: ok = op_view(xi, kBroadcastTo); break;
      }
      if (!ok) continue;
      if (in != FamIn::Plain) xi = pool_.size() - 1;
      if (!op_family(f, xi)) continue;
      const std::size_t ri = pool_.size() - 1;
      Label label{family_name(f), ""};
      bool used = false;
      switch (out) {
      case FamOut::Root: break;
      case FamOut::Elementwise:
        for (int k = 0; k < 4 && !used; ++k)
          used = chance(0.4) ? op_unary(ri) : (chance(0.5) ? op_scalar(ri) : op_binary(ri));
        break;
      case FamOut::Reduction:
        if (auto r = op_reduce(ri)) {
          used = true;
          label.reduction = rname(pool_[*r].spec->op);
        }
        break;
      case FamOut::ViewJoin: used = chance(0.6) ? op_view(ri) : op_combine(ri, kConcat | kStack | kPad | kSet); break;
      case FamOut::MultiOutput:
        groups_.push_back({{ri, xi}, label});
        used = true;
        break;
      }
      if (in != FamIn::Plain) note_category(fam_in_name(in));
      if (used && out != FamOut::Root) note_category(fam_out_name(out));
      if (out != FamOut::MultiOutput) roots_.push_back({used ? pool_.size() - 1 : ri, label});
      break;
    }
  }
}

// Compares v's library value with the reference; false (after reporting) when they differ.
bool Case::check(const Val& v, const std::string& how) {
  SCOPED_TRACE("checking " + v.name + " (" + how + ")");
  const Array& a = v.a;
  if (a.dtype() != v.r.dt || a.shape() != v.r.shape) {
    ADD_FAILURE() << v.name << ": library " << dname(a.dtype()) << " " << shape_str(a.shape()) << ", reference "
                  << dname(v.r.dt) << " " << shape_str(v.r.shape);
    return false;
  }
  std::vector<double> got(v.r.v.size()), got_im; // got_im: imaginary parts of a complex result
  switch (v.r.dt) {
  case DType::Bool: {
    auto h = a.get<bool>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = h[i] ? 1 : 0;
    break;
  }
  case DType::Int32: {
    auto h = a.get<std::int32_t>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(h[i]);
    break;
  }
  case DType::Int64: {
    auto h = a.get<std::int64_t>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(h[i]);
    break;
  }
  case DType::Float16: {
    auto h = a.get<lf::float16>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(float(h[i]));
    break;
  }
  case DType::BFloat16: {
    auto h = a.get<lf::bfloat16>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(float(h[i]));
    break;
  }
  case DType::Complex64: {
    auto h = a.get<std::complex<float>>();
    got_im.resize(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(h[i].real()), got_im[i] = double(h[i].imag());
    break;
  }
  case DType::Complex128: {
    auto h = a.get<std::complex<double>>();
    got_im.resize(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = h[i].real(), got_im[i] = h[i].imag();
    break;
  }
  case DType::Float32: {
    auto h = a.get<float>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(h[i]);
    break;
  }
  case DType::Float64: {
    auto h = a.get<double>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = h[i];
    break;
  }
  default:
    ADD_FAILURE() << how << ": a result of type " << lf::dtype_name(v.r.dt) << ", which these graphs do not model";
    return false;
  }
  checked_values_.push_back(got);
  if (!got_im.empty()) checked_values_.push_back(got_im);
  int failures = 0;
  // The float64 view of the same value must be the exact conversion (of the real part of a complex value).
  if (chance(0.3)) {
    auto h = a.astype(DType::Float64).get<double>();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(h[i] == got[i] || (std::isnan(h[i]) && std::isnan(got[i])))) {
        ADD_FAILURE() << v.name << ".astype(Float64) differs from " << v.name << " at flat index " << i << ": " << h[i]
                      << " vs " << got[i];
        ++failures;
        break;
      }
  }
  TypeStats& per_type = stats_.per_type[dname(v.r.dt)];
  const bool complex = !got_im.empty();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double ref = v.r.v[i], err = v.r.e[i], out = got[i];
    if (std::isinf(err)) {
      ++stats_.uncertain;
      ++per_type.uncertain;
      continue;
    }
    ++stats_.checked;
    ++per_type.checked;
    if (v.r.dt == DType::Float32) ++stats_.float32_checked;
    if (err == 0) ++stats_.exact_checked;
    // NaN where the reference is NaN, the same infinity where it is infinite, else within the bound (complex:
    // each part's NaN and infinity so, and the modulus of the difference of the finite parts within the bound).
    auto part_ok = [](double o, double r) { return std::isnan(r) ? std::isnan(o) : (!std::isinf(r) || o == r); };
    auto part_diff = [](double o, double r) { return std::isfinite(r) ? o - r : 0.0; };
    const double ref_im = complex ? v.r.im[i] : 0, out_im = complex ? got_im[i] : 0;
    const double diff =
        complex ? std::hypot(part_diff(out, ref), part_diff(out_im, ref_im)) : std::fabs(part_diff(out, ref));
    const bool ok = part_ok(out, ref) && part_ok(out_im, ref_im) && diff <= err;
    if (err > 0 && std::isfinite(diff) && diff / err > std::min(stats_.worst_ratio, per_type.worst_ratio)) {
      char lib[80], re[80], detail[300];
      std::snprintf(lib, sizeof lib, complex ? "%.17g%+.17gj" : "%.17g", out, out_im);
      std::snprintf(re, sizeof re, complex ? "%.17g%+.17gj" : "%.17g", ref, ref_im);
      std::snprintf(detail, sizeof detail, "[%zu] (%s): library %s, reference %s, tolerance %.3g", i, dname(v.r.dt),
                    lib, re, err);
      if (diff / err > stats_.worst_ratio) {
        stats_.worst_ratio = diff / err;
        stats_.worst_where = v.name + detail + " in " + repro_;
      }
      if (diff / err > per_type.worst_ratio) {
        per_type.worst_ratio = diff / err;
        per_type.worst_where = v.name + detail + " in " + repro_;
      }
    }
    if (!ok) {
      if (++failures <= 8) {
        std::vector<i64> idx(v.r.shape.size());
        i64 rem = i64(i);
        for (int k = int(idx.size()) - 1; k >= 0; --k) {
          idx[std::size_t(k)] = rem % v.r.shape[std::size_t(k)];
          rem /= v.r.shape[std::size_t(k)];
        }
        std::ostringstream lib, re;
        lib << std::setprecision(17) << out;
        re << std::setprecision(17) << ref;
        if (complex) {
          lib << std::showpos << out_im << "j";
          re << std::showpos << ref_im << "j";
        }
        ADD_FAILURE() << std::setprecision(17) << v.name << "[" << shape_str(idx) << "] (" << dname(v.r.dt)
                      << "): library " << lib.str() << ", reference " << re.str() << ", |diff| " << diff
                      << " > tolerance " << err;
      }
    }
  }
  if (failures > 8) ADD_FAILURE() << v.name << ": " << failures << " mismatching elements in all";
  if (record_) {
    // For the NumPy oracle: lazyfuse's values and the reference's bounds.
    std::string j = "{\"name\":\"" + v.name +
                    "\",\"label\":" + json_string(current_.category + "|" + current_.reduction) + ",\"dtype\":\"" +
                    dname(v.r.dt) + "\",\"shape\":[";
    for (std::size_t k = 0; k < v.r.shape.size(); ++k) j += (k ? "," : "") + std::to_string(v.r.shape[k]);
    j += "],\"got\":[";
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (i) j += ',';
      json_number(j, got[i]);
    }
    if (complex) {
      j += "],\"got_im\":[";
      for (std::size_t i = 0; i < got_im.size(); ++i) {
        if (i) j += ',';
        json_number(j, got_im[i]);
      }
    }
    j += "],\"bound\":[";
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (i) j += ',';
      json_number(j, v.r.e[i]);
    }
    checks_.push_back(j + "]}");
  }
  return failures == 0;
}

void Case::run() {
  ++stats_.cases;
  emit("namespace lf = lazyfuse;");
  const int kind = int(uni(0, 99));
  if (kind < 22)
    index_program();
  else if (kind < 69)
    reduction_program();
  else
    plain_program();
  const i64 checked0 = stats_.checked, uncertain0 = stats_.uncertain;
  std::vector<std::size_t> seen;
  for (auto& [r, label] : roots_) {
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) continue;
    seen.push_back(r);
    current_ = label;
    update_note();
    const bool eval_first = chance(0.2);
    if (eval_first) eval_one(r);
    emit("// check " + pool_[r].name);
    if (!check(pool_[r], eval_first ? "eval() then get" : "get")) mark_failed(label);
  }
  // Groups: evaluated together (one partition of roots of different shapes), then checked.
  for (auto& [g, label] : groups_) {
    current_ = label;
    update_note();
    std::vector<const Array*> arrays;
    std::string names;
    for (auto r : g) {
      arrays.push_back(&pool_[r].a);
      names += (names.empty() ? "" : ", ") + pool_[r].name;
    }
    emit("lf::eval(" + names + ");");
    lf::eval_arrays(std::span<const Array* const>(arrays.data(), arrays.size()));
    for (auto r : g) {
      emit("// check " + pool_[r].name);
      if (!check(pool_[r], "evaluated together with lf::eval(" + names + ")")) mark_failed(label);
    }
  }
  const i64 checked = stats_.checked - checked0, uncertain = stats_.uncertain - uncertain0;
  if (uncertain > checked) ++stats_.blind_cases;
  finished_ = true;
}

std::string Case::numpy_record(i64 case_no, const std::string& seed_text) const {
  std::string j = "{\"case\":" + std::to_string(case_no) + ",\"seed\":" + json_string(seed_text) + ",\"data\":[";
  for (std::size_t k = 0; k < data_.size(); ++k) j += (k ? "," : "") + data_[k];
  j += "],\"py\":[";
  for (std::size_t k = 0; k < py_.size(); ++k) j += (k ? "," : "") + json_string(py_[k]);
  j += "],\"checks\":[";
  for (std::size_t k = 0; k < checks_.size(); ++k) j += (k ? "," : "") + checks_[k];
  return j + "]}";
}

// ---------------------------------------------------------------------------------------------------------

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  return std::strtoull(s, nullptr, 10);
}

std::uint64_t mix(std::uint64_t x) { // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Minimum programs per category for a run of `count` cases. Measured over 10,000 cases: each (kind x consumer)
// category ran in about 9% of the programs (reduction programs are 60% of the cases, with 2-4 parts each over 18
// categories), each reduction function in 10-25%, elementwise/view programs in 40%. The minima are a fifth to a
// half of that: 10,000 cases guarantee 200 programs per category. Below 1,000 cases they are halved, so that the
// chance of a fair run falling below one stays under 1e-5 (ASan's 200 cases: 2 per category, against ~18).
i64 minimum(i64 count, i64 one_in) {
  return count >= 1000 ? count / one_in : count / (2 * one_in);
}
i64 category_minimum(i64 count) {
  return minimum(count, 50);
}
i64 reduction_minimum(i64 count) {
  return minimum(count, 40);
}
i64 plain_minimum(i64 count) {
  return minimum(count, 5);
}
i64 family_minimum(i64 count) {
  return minimum(count, 50);
}

void print_categories(const Stats& stats, i64 count, bool enforce) {
  std::printf("%-44s %9s %9s %9s\n", "category (programs that ran it)", "programs", "failed", "minimum");
  auto row = [&](const std::string& name, i64 n, i64 minimum) {
    const bool low = enforce && n < minimum;
    auto f = stats.failed.find(name);
    std::printf("%-44s %9lld %9lld %9lld%s\n", name.c_str(), static_cast<long long>(n),
                static_cast<long long>(f == stats.failed.end() ? 0 : f->second),
                static_cast<long long>(enforce ? minimum : 0), low ? "  <-- below the minimum" : "");
    if (low)
      ADD_FAILURE() << "category \"" << name << "\" ran in " << n << " programs, below its minimum " << minimum
                    << " for " << count << " cases: the generator no longer makes these programs";
  };
  auto get = [](const std::map<std::string, i64>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? i64(0) : it->second;
  };
  row(kPlainCategory, get(stats.categories, kPlainCategory), plain_minimum(count));
  for (RKind k : {RKind::Full, RKind::Partial, RKind::Keepdims})
    for (Consumer c : kConsumers) row(category(k, c), get(stats.categories, category(k, c)), category_minimum(count));
  for (int op = 0; op <= int(R::CountNonzero); ++op)
    row(std::string("reduction ") + rname(R(op)), get(stats.reductions, rname(R(op))), reduction_minimum(count));
  for (int f = 0; f < kFamilies; ++f)
    row(family_name(Fam(f)), get(stats.categories, family_name(Fam(f))), family_minimum(count));
  for (FamIn c : {FamIn::Elementwise, FamIn::View, FamIn::Broadcast})
    row(fam_in_name(c), get(stats.categories, fam_in_name(c)), family_minimum(count));
  for (FamOut c : {FamOut::Elementwise, FamOut::Reduction, FamOut::ViewJoin, FamOut::MultiOutput})
    row(fam_out_name(c), get(stats.categories, fam_out_name(c)), family_minimum(count));
  row(kEmptyReduction, get(stats.reductions, kEmptyReduction), 0);
  row(kLaterOps, get(stats.categories, kLaterOps), 0);
}

// Failing cases whose programs and messages are shown; later ones are counted only.
constexpr i64 kShownFailures = 5;

// Runs `count` cases from `base_seed`, each twice (the second replays plans), checked against the reference and,
// when `oracle` is given, against NumPy.
void run_cases(std::uint64_t base_seed, i64 count, const char* label, NumpyOracle* oracle) {
  Stats stats;
  const auto plan_hits_before = lazyfuse::kernel_cache_stats().plan_hits;
  const bool verbose = env_flag("LAZYFUSE_TEST_RANDOM_VERBOSE");
  // LAZYFUSE_TEST_RANDOM_CASE: one case number, or a range "first-last".
  i64 first = 0, last = count - 1;
  if (const char* only = std::getenv("LAZYFUSE_TEST_RANDOM_CASE"); only && *only) {
    char* end = nullptr;
    first = last = std::strtoll(only, &end, 10);
    if (end && *end == '-') last = std::strtoll(end + 1, nullptr, 10);
  }
  const i64 ran = std::max<i64>(0, std::min(last, count - 1) - first + 1);
  CrashNote crash_note;
  const auto t0 = std::chrono::steady_clock::now();
  i64 failed = 0, sent = 0;
  std::map<i64, std::set<std::string>> failed_labels; // per failing case: the labels of its failing results
  for (i64 c = 0; c < count; ++c) {
    if (c < first || c > last) continue;
    const std::uint64_t seed = mix(mix(base_seed) + std::uint64_t(c));
    const std::string repro = "LAZYFUSE_TEST_RANDOM_SEED=" + std::to_string(base_seed) +
                              " LAZYFUSE_TEST_RANDOM_CASE=" + std::to_string(c) + " (" + label + ")";
    SCOPED_TRACE(repro);
    if (verbose) std::printf("case %lld (%s):\n", static_cast<long long>(c), repro.c_str());
    // Each case runs twice: the second run builds equal graphs over new buffers, so its materializations replay
    // the first run's kernels from the plan cache (runtime/PlanCache.h) instead of partitioning and lowering.
    Case k(seed, stats, true), again(seed, stats, false);
    k.set_note(repro);
    auto run_both = [&] {
      for (Case* run : {&k, &again}) {
        SCOPED_TRACE(run == &k ? "first run (NumPy checks this run's values)"
                               : "second run: equal graphs over new buffers, plans replayed from the plan cache");
        try {
          run->run();
        } catch (const std::exception& e) {
          ADD_FAILURE() << (run == &k ? "exception: " : "exception (second run, replayed plans): ") << e.what();
          k.mark_failed(run->current());
        }
      }
    };
    bool case_failed = false;
    if (failed < kShownFailures) {
      const int before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
      run_both();
      case_failed = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count() != before;
      if (case_failed) ADD_FAILURE() << "case " << c << " program:\n" << k.program();
    } else {
      // Past the first failures, the rest are counted (per category) but not shown.
      testing::TestPartResultArray parts;
      {
        testing::ScopedFakeTestPartResultReporter quiet(
            testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
        run_both();
      }
      case_failed = parts.size() > 0;
    }
    for (auto& cat : k.categories()) ++stats.categories[cat];
    for (auto& r : k.reductions()) ++stats.reductions[r];
    for (auto& t : k.leaf_types()) ++stats.leaf_types[t];
    if (case_failed) {
      ++failed;
      // The categories of the results that failed (in either run); all of the program's when none was named.
      std::set<std::string> labels = k.failed_labels();
      labels.insert(again.failed_labels().begin(), again.failed_labels().end());
      if (labels.empty()) {
        labels = k.categories();
        for (auto& r : k.reductions()) labels.insert(std::string("reduction ") + r);
      }
      failed_labels[c] = labels;
    } else if (verbose) {
      std::printf("case %lld: passed\n", static_cast<long long>(c));
    }
    // NumPy sees every program that ran to its end, also one the reference found wrong: a second opinion.
    if (oracle && k.finished()) {
      oracle->add(c, k.numpy_record(c, repro), k.program());
      ++sent;
    }
  }
  if (failed > kShownFailures)
    ADD_FAILURE() << failed << " failing cases in all; the first " << kShownFailures << " are shown above";
  if (oracle) {
    oracle->finish();
    // NumPy's disagreements, by the categories of the results that disagree ("category|reduction" labels).
    for (auto& [c, labels] : oracle->mismatching_labels()) {
      for (auto& l : labels) {
        const auto bar = l.find('|');
        failed_labels[c].insert(l.substr(0, bar));
        if (bar != std::string::npos && bar + 1 < l.size()) failed_labels[c].insert("reduction " + l.substr(bar + 1));
      }
    }
  }
  for (auto& [c, labels] : failed_labels)
    for (auto& l : labels) ++stats.failed[l];
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[%s] seed %llu: %lld cases, %lld ops, %lld elements checked (%lld exact, %lld float32), %lld "
              "uncertain skipped (%.3f%%; %lld blind cases), largest error / tolerance %.3f, %.2f s\n",
              label, static_cast<unsigned long long>(base_seed), static_cast<long long>(stats.cases),
              static_cast<long long>(stats.ops), static_cast<long long>(stats.checked),
              static_cast<long long>(stats.exact_checked), static_cast<long long>(stats.float32_checked),
              static_cast<long long>(stats.uncertain),
              100.0 * double(stats.uncertain) / double(std::max<i64>(1, stats.checked + stats.uncertain)),
              static_cast<long long>(stats.blind_cases), stats.worst_ratio, secs);
  if (stats.worst_ratio > 0.5) std::printf("(the largest error / tolerance: %s)\n", stats.worst_where.c_str());
  // Per dtype: the programs with a leaf of it, the ops (of both runs) that made it, and the checked results of it.
  std::printf("%-11s %9s %9s %12s %10s %12s\n", "dtype", "programs", "ops", "elements", "uncertain", "err / tol");
  for (const char* t :
       {"bool", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"}) {
    auto l = stats.leaf_types.find(t);
    auto p = stats.per_type.find(t);
    const TypeStats ts = p == stats.per_type.end() ? TypeStats{} : p->second;
    std::printf("%-11s %9lld %9lld %12lld %9.3f%% %12.3f\n", t,
                static_cast<long long>(l == stats.leaf_types.end() ? 0 : l->second), static_cast<long long>(ts.ops),
                static_cast<long long>(ts.checked),
                100.0 * double(ts.uncertain) / double(std::max<i64>(1, ts.checked + ts.uncertain)), ts.worst_ratio);
  }
  if (verbose)
    for (auto& [t, ts] : stats.per_type)
      if (ts.worst_ratio > 0.5) std::printf("(%s: largest error / tolerance %s)\n", t.c_str(), ts.worst_where.c_str());
  {
    const auto k = lazyfuse::kernel_cache_stats();
    std::printf("[%s] kernels (process so far): %llu launched, %llu compiled (%.1f s), %llu memory hits, %llu disk "
                "hits, %llu plan replays\n",
                label, static_cast<unsigned long long>(k.kernels_launched), static_cast<unsigned long long>(k.misses),
                k.compile_seconds, static_cast<unsigned long long>(k.memory_hits),
                static_cast<unsigned long long>(k.disk_hits), static_cast<unsigned long long>(k.plan_hits));
  }
  if (oracle)
    std::printf("[%s] NumPy %s: %lld programs, %lld elements compared, %lld programs disagree, %lld programs with "
                "bfloat16 not checked (the oracle's ml_dtypes cannot promote it as lazyfuse does) (%.2f s in Python)\n",
                label, numpy_availability().version.c_str(), static_cast<long long>(oracle->programs()),
                static_cast<long long>(oracle->elements()), static_cast<long long>(oracle->mismatching_programs()),
                static_cast<long long>(oracle->unchecked_programs()), oracle->python_seconds());
  print_categories(stats, ran, ran > 1);
  // The second runs must have replayed plans (most cases materialize something the plan cache records).
  if (stats.cases >= 20) {
    EXPECT_GT(lazyfuse::kernel_cache_stats().plan_hits, plan_hits_before) << "no second run replayed a plan";
  }
  // The test must keep its power: uncertain elements (near a discontinuity) must stay rare.
  // (A case is "blind" when most of its result elements are uncertain.)
  if (stats.cases >= 50) {
    EXPECT_LT(double(stats.blind_cases), 0.1 * double(stats.cases)) << "too many cases with mostly uncertain results";
  }
  // Every program checked by the reference went through NumPy too: checked, or counted as one the oracle's
  // ml_dtypes cannot promote (bfloat16 with an older ml_dtypes; none under CI, which installs ml_dtypes >= 0.7).
  if (oracle) {
    EXPECT_EQ(oracle->programs() + oracle->unchecked_programs(), sent) << "programs the NumPy oracle saw";
  }
}

const char* backend_name() {
  try {
    return lf::backend() == lf::Backend::Cuda ? "cuda" : "cpu";
  } catch (const std::exception&) {
    return "none";
  }
}

// The NumPy oracle when LAZYFUSE_TEST_PYTHON has NumPy >= 2; otherwise nothing (a failure under CI=true).
std::unique_ptr<NumpyOracle> maybe_oracle(const char* label) {
  const auto& np = numpy_availability();
  if (np.why_not.empty()) return std::make_unique<NumpyOracle>(label);
  if (ci_requires_numpy())
    ADD_FAILURE() << "CI=true requires the NumPy oracle: " << np.why_not;
  else
    std::printf("NumPy oracle off: %s\n", np.why_not.c_str());
  return nullptr;
}

TEST(RandomGraphs, Differential) {
  const i64 count = i64(env_u64("LAZYFUSE_TEST_RANDOM_GRAPHS", 300));
  const std::uint64_t seed = env_u64("LAZYFUSE_TEST_RANDOM_SEED", std::random_device{}());
  std::printf(
      "RandomGraphs.Differential: LAZYFUSE_TEST_RANDOM_SEED=%llu LAZYFUSE_TEST_RANDOM_GRAPHS=%lld, backend %s\n",
      static_cast<unsigned long long>(seed), static_cast<long long>(count), backend_name());
  auto oracle = maybe_oracle("differential");
  run_cases(seed, count, "random seed", oracle.get());
}

// The CPU backend's two code generators on the same random programs: every checked result of each program has the
// same bits (any two NaNs equal) when its kernels are interpreted and when LLVM compiles them
// (LAZYFUSE_CPU_CODEGEN=llvm compiles every kernel it handles, whatever its size). Both runs are also checked against
// the reference. CPU backend with LLVM only.
TEST(RandomGraphs, InterpreterAndLlvmGiveTheSameBits) {
  if (std::string(backend_name()) != "cpu") GTEST_SKIP() << "runs the CPU backend's code generators";
  if (!lf::runtime::llvm_codegen_built()) GTEST_SKIP() << "built without the LLVM code generator";
  const i64 count = i64(env_u64("LAZYFUSE_TEST_RANDOM_LLVM_GRAPHS", 80));
  const std::uint64_t base_seed = env_u64("LAZYFUSE_TEST_RANDOM_SEED", std::random_device{}());
  std::printf("RandomGraphs.InterpreterAndLlvmGiveTheSameBits: LAZYFUSE_TEST_RANDOM_SEED=%llu, %lld programs\n",
              static_cast<unsigned long long>(base_seed), static_cast<long long>(count));
  Stats stats;
  i64 compared = 0, values = 0;
  const auto llvm_before = lf::runtime::cpu_codegen_stats();
  for (i64 c = 0; c < count; ++c) {
    const std::uint64_t seed = mix(mix(base_seed) + std::uint64_t(c));
    SCOPED_TRACE("LAZYFUSE_TEST_RANDOM_SEED=" + std::to_string(base_seed) + ", program " + std::to_string(c));
    std::vector<Case> runs;
    runs.reserve(2);
    for (const char* generator : {"interpreter", "llvm"}) {
      lf::config::set("LAZYFUSE_CPU_CODEGEN", generator);
      runs.emplace_back(seed, stats, false);
      try {
        runs.back().run();
      } catch (const std::exception& e) {
        ADD_FAILURE() << generator << ": exception: " << e.what();
      }
    }
    lf::config::reset("LAZYFUSE_CPU_CODEGEN");
    if (!runs[0].finished() || !runs[1].finished()) continue;
    const auto &interpreted = runs[0].checked_values(), &compiled = runs[1].checked_values();
    ASSERT_EQ(interpreted.size(), compiled.size()) << "program:\n" << runs[0].program();
    for (std::size_t r = 0; r < interpreted.size(); ++r) {
      ASSERT_EQ(interpreted[r].size(), compiled[r].size());
      values += i64(compiled[r].size());
      // Any two NaNs are equal: neither generator promises a NaN's sign or payload (docs/design.md, "Bits").
      const auto same = [](double a, double b) {
        return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
      };
      for (std::size_t i = 0; i < compiled[r].size(); ++i)
        if (!same(interpreted[r][i], compiled[r][i])) {
          ADD_FAILURE() << "result " << r << " differs at flat index " << i << ": " << interpreted[r][i]
                        << " interpreted, " << compiled[r][i] << " compiled; program:\n"
                        << runs[0].program();
          break;
        }
    }
    ++compared;
  }
  const auto llvm_after = lf::runtime::cpu_codegen_stats();
  const auto ran_compiled = [](const lf::runtime::CpuCodegenStats& s) {
    return s.compiled + s.disk_hits + s.cache_hits;
  };
  std::printf("  %lld programs compared, %lld values; compiled kernel launches: %llu\n",
              static_cast<long long>(compared), static_cast<long long>(values),
              static_cast<unsigned long long>(ran_compiled(llvm_after) - ran_compiled(llvm_before)));
  EXPECT_GT(ran_compiled(llvm_after), ran_compiled(llvm_before)) << "no compiled kernel ran";
  EXPECT_GE(compared, count * 9 / 10) << "too few programs ran to their end";
}

// A fixed seed: a regression this catches always reproduces.
TEST(RandomGraphs, FixedSeed) {
  auto oracle = maybe_oracle("fixed");
  run_cases(20240601, 150, "fixed seed", oracle.get());
}

// The NumPy oracle's own test: skipped without a NumPy >= 2 (LAZYFUSE_TEST_PYTHON), a failure under CI=true.
TEST(RandomGraphs, NumPyOracle) {
  const auto& np = numpy_availability();
  if (!np.why_not.empty()) {
    if (ci_requires_numpy()) {
      FAIL() << "CI=true requires the NumPy oracle: " << np.why_not;
    }
    GTEST_SKIP() << np.why_not;
  }
  // The oracle must find a wrong value: one program whose recorded lazyfuse value is off by one.
  {
    NumpyOracle oracle("selftest");
    oracle.keep_failed(false);
    const std::string record =
        "{\"case\":0,\"seed\":\"selftest\",\"data\":[[1,2,3]],\"py\":[\"v0 = np.array(D[0], "
        "dtype=np.float64).reshape((3,))\",\"v1 = np.sum(v0)\"],\"checks\":[{\"name\":\"v1\",\"dtype\":\"float64\","
        "\"shape\":[],\"got\":[7],\"bound\":[0]}]}";
    const int failures_before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
    {
      testing::TestPartResultArray parts;
      {
        testing::ScopedFakeTestPartResultReporter reporter(
            testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
        oracle.add(0, record, "sum({1, 2, 3}) recorded as 7");
        oracle.finish();
      }
      EXPECT_EQ(oracle.mismatching_programs(), 1) << "the oracle missed sum([1, 2, 3]) == 7";
      EXPECT_GE(parts.size(), 1);
    }
    EXPECT_EQ(::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count(), failures_before);
  }
  NumpyOracle oracle("numpy");
  run_cases(20251201, 100, "NumPy oracle", &oracle);
}

} // namespace
