// The complex op semantics (graph/OpMathComplex.inc) against NumPy: the host functions lazyfuse_opmath::lf_* are
// called directly on a grid of special values (every pair of +-0, +-tiny, +-subnormal, +-1/2, +-1, +-2, +-large,
// +-max, +-inf, NaN) and on random values over many magnitudes, near the branch cuts, near |z| = 1 and near 0.
// NumPy (the interpreter LAZYFUSE_TEST_PYTHON names) computes, on the same inputs written to a file, its own
// complex64 / complex128 results and a reference in extended precision (clongdouble, and Python's decimal for
// log1p, whose NumPy loop is a naive formula). Special values (NaN, infinities, zeros of NumPy's result) must
// match exactly; finite values must be within the ulp bound stated per function of the reference. Without an
// interpreter the tests skip, and fail when CI=true. The last test compiles every complex function with NVRTC.
#include "codegen/FunctionLibrary.h"
#include "codegen/Nvrtc.h"
#include "graph/HostOps.h"

#include <lazyfuse/error.hpp>

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cstdint>
#include <unistd.h>

namespace op = lazyfuse_opmath;
using op::lf_c128;
using op::lf_c64;

// The layout of std::complex, aligned to the whole value (8 and 16 bytes) as CUDA's vector loads want it: more than
// std::complex's own alignment (4 and 8 on x86-64), so the CPU backend may view a buffer of std::complex as lf_c*
// only where the buffer is aligned to the whole value.
static_assert(sizeof(lf_c64) == sizeof(std::complex<float>) && alignof(lf_c64) == 8);
static_assert(sizeof(lf_c128) == sizeof(std::complex<double>) && alignof(lf_c128) == 16);

namespace {

// NumPy's side: reads the inputs, writes per (type, function) NumPy's results and the reference.
const char* const kScript = R"PY(
import sys, os, warnings, decimal, fractions
import numpy as np
warnings.simplefilter('ignore')
d = sys.argv[1]
UNARY = ['exp', 'exp2', 'expm1', 'log', 'log2', 'log10', 'log1p', 'sqrt', 'sin', 'cos', 'tan', 'arcsin', 'arccos',
         'arctan', 'sinh', 'cosh', 'tanh', 'arcsinh', 'arccosh', 'arctanh', 'negative', 'square', 'reciprocal',
         'conjugate', 'sign', 'rint', 'absolute', 'angle', 'isnan', 'isinf', 'isfinite']
BINARY = ['add', 'subtract', 'multiply', 'true_divide', 'power', 'minimum', 'maximum', 'equal', 'not_equal', 'less',
          'less_equal', 'greater', 'greater_equal']
D = decimal.Decimal
# (unary minus and ** round to the current context: make it as wide as the widest used below)
decimal.setcontext(decimal.Context(prec=400, Emin=-999999, Emax=999999))
ctx = decimal.Context(prec=60, Emin=-999999, Emax=999999)

def cplx(re, im):
    # re + i im without arithmetic (which would turn -0 into 0 and inf * 0 into NaN)
    out = np.empty(np.broadcast(re, im).shape, dtype=np.clongdouble)
    out.real = re
    out.imag = im
    return out

def dec(q, c=ctx):
    return c.divide(D(q.numerator), D(q.denominator))

def log1p_real(x, y):
    # log|1 + z| = log1p(s) / 2 with s = 2x + x^2 + y^2 exact (a fraction); a series for small s
    out = np.empty(len(x), dtype=np.longdouble)
    for k in range(len(x)):
        if not (np.isfinite(x[k]) and np.isfinite(y[k])):
            out[k] = np.longdouble(np.log(np.abs(np.clongdouble(1 + np.clongdouble(complex(x[k], y[k]))))))
            continue
        X = fractions.Fraction(float(x[k])); Y = fractions.Fraction(float(y[k]))
        s = 2 * X + X * X + Y * Y
        if s == -1:
            out[k] = np.longdouble('-inf')
        elif abs(s) < fractions.Fraction(1, 1000):
            sd = dec(s)
            term, total = sd, D(0)
            for n in range(1, 40):
                total = ctx.add(total, ctx.divide(term, n) if n % 2 else -ctx.divide(term, n))
                term = ctx.multiply(term, sd)
            out[k] = np.longdouble(str(ctx.divide(total, 2)))
        else:
            out[k] = np.longdouble(str(ctx.divide(ctx.ln(dec(1 + s)), 2)))
    return out

wide = decimal.Context(prec=400, Emin=-999999, Emax=999999)
def atan_inv(n):  # atan(1/n) by its series
    x = wide.divide(1, n); x2 = wide.multiply(x, x); term, total, k = x, D(0), 0
    while term != 0 and k < 2000:
        total = wide.add(total, wide.divide(term, 2 * k + 1) if k % 2 == 0 else -wide.divide(term, 2 * k + 1))
        term = wide.multiply(term, x2); k += 1
        if abs(term) < D(10) ** -420: break
    return total
PI = wide.subtract(wide.multiply(16, atan_inv(5)), wide.multiply(4, atan_inv(239)))
LN2 = wide.ln(D(2))

def cos_sin(r):  # of |r| <= pi, by their series in 40 digits
    c40 = decimal.Context(prec=40)
    r = c40.plus(r); r2 = c40.multiply(r, r)
    out = []
    for term, k in [(D(1), 0), (r, 1)]:
        total = D(0)
        while abs(term) > D(10) ** -45:
            total = c40.add(total, term); k += 2
            term = c40.divide(c40.multiply(-term, r2), (k - 1) * k)
        out.append(total)
    return out

def exp2_reference(x, y):
    # 2^x cis(y ln 2), the angle reduced mod 2 pi in 400 digits (y ln 2 has up to 308 digits before the point)
    out = np.empty(len(x), dtype=np.clongdouble)
    for k in range(len(x)):
        if not (np.isfinite(x[k]) and np.isfinite(y[k])) or y[k] == 0:
            out[k] = np.exp2(np.clongdouble(complex(x[k], y[k])))
            continue
        t = wide.multiply(D(float(y[k])), LN2)
        t = wide.subtract(t, wide.multiply(wide.to_integral_value(wide.divide(t, wide.multiply(2, PI))), wide.multiply(2, PI)))
        c, s = cos_sin(t); m = np.exp2(np.longdouble(x[k]))
        out[k] = cplx(m * np.longdouble(str(c)), m * np.longdouble(str(s)))
    return out

def reference(name, z):
    L = z.astype(np.clongdouble)
    x, y = z.real.astype(np.float64), z.imag.astype(np.float64)
    if name == 'log1p':
        return cplx(log1p_real(x, y), np.arctan2(L.imag, 1 + L.real))
    if name == 'exp2':
        return exp2_reference(x, y)
    if name == 'expm1':
        X, Y = L.real, L.imag
        h = np.sin(Y / 2)
        e = np.exp(L)
        finite = np.isfinite(X) & np.isfinite(Y)
        return np.where(finite, cplx(np.expm1(X) * np.cos(Y) - 2 * h * h, np.exp(X) * np.sin(Y)), cplx(e.real - 1, e.imag))
    return getattr(np, name)(L)

def split(v):
    # a long double complex as head and tail doubles per part
    v = np.asarray(v).astype(np.clongdouble)
    re, im = v.real, v.imag
    rh = re.astype(np.float64); ih = im.astype(np.float64)
    with np.errstate(all='ignore'):
        rl = np.where(np.isfinite(rh), (re - rh).astype(np.float64), 0.0)
        il = np.where(np.isfinite(ih), (im - ih).astype(np.float64), 0.0)
    return np.stack([rh, rl, ih, il], axis=1)

for tname, ct in [('c64', np.complex64), ('c128', np.complex128)]:
    u = np.fromfile(os.path.join(d, tname + '_unary.in'), dtype=np.complex128).astype(ct)
    a = np.fromfile(os.path.join(d, tname + '_a.in'), dtype=np.complex128).astype(ct)
    b = np.fromfile(os.path.join(d, tname + '_b.in'), dtype=np.complex128).astype(ct)
    for name in UNARY:
        np.asarray(getattr(np, name)(u)).astype(np.complex128).tofile(os.path.join(d, tname + '_' + name + '.np'))
        if name in ('exp', 'exp2', 'expm1', 'log', 'log2', 'log10', 'log1p', 'sqrt', 'sin', 'cos', 'tan', 'arcsin',
                    'arccos', 'arctan', 'sinh', 'cosh', 'tanh', 'arcsinh', 'arccosh', 'arctanh'):
            split(reference(name, u)).tofile(os.path.join(d, tname + '_' + name + '.ref'))
    # lazyfuse's expm1 and log1p: NumPy's special values, except a part where NumPy's formula makes a NaN that
    # exp(z) - 1 and log(1 + z) do not have (expm1(inf + 0j) is inf + 0j, not NumPy's inf + nanj)
    for name, alt in [('expm1', np.exp(u) - 1), ('log1p', np.log(1 + u))]:
        own = getattr(np, name)(u)
        re = np.where(np.isnan(own.real) & ~np.isnan(alt.real), alt.real, own.real)
        im = np.where(np.isnan(own.imag) & ~np.isnan(alt.imag), alt.imag, own.imag)
        cplx(re, im).astype(np.complex128).tofile(os.path.join(d, tname + '_' + name + '_special.np'))
    for name in BINARY:
        np.asarray(getattr(np, name)(a, b)).astype(np.complex128).tofile(os.path.join(d, tname + '_' + name + '.np'))
    split(np.power(a.astype(np.clongdouble), b.astype(np.clongdouble))).tofile(os.path.join(d, tname + '_power.ref'))
    L = u.astype(np.clongdouble)
    split(np.abs(L)).tofile(os.path.join(d, tname + '_absolute.ref'))
    split(np.arctan2(L.imag, L.real)).tofile(os.path.join(d, tname + '_angle.ref'))
    # reductions over rows of 7 (argmax, argmin: first NaN wins; min, max; nanmin, nanmax where a row has a number)
    rows = np.fromfile(os.path.join(d, tname + '_rows.in'), dtype=np.complex128).astype(ct).reshape(-1, 7)
    np.argmax(rows, axis=1).astype(np.int64).tofile(os.path.join(d, tname + '_argmax.np'))
    np.argmin(rows, axis=1).astype(np.int64).tofile(os.path.join(d, tname + '_argmin.np'))
    np.max(rows, axis=1).astype(np.complex128).tofile(os.path.join(d, tname + '_max.np'))
    np.min(rows, axis=1).astype(np.complex128).tofile(os.path.join(d, tname + '_min.np'))
    np.nanmax(rows, axis=1).astype(np.complex128).tofile(os.path.join(d, tname + '_nanmax.np'))
    np.nanmin(rows, axis=1).astype(np.complex128).tofile(os.path.join(d, tname + '_nanmin.np'))
    # casts (astype) of values every target type holds
    c = np.fromfile(os.path.join(d, tname + '_cast.in'), dtype=np.complex128).astype(ct)
    for target in ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float32',
                   'float64', 'complex64', 'complex128']:
        c.astype(target).astype(np.complex128).tofile(os.path.join(d, tname + '_cast_' + target + '.np'))
print('ok')
)PY";

// NumPy's answers depend only on the script, the inputs and the interpreter, so they are kept (in the tests' work
// folder) in a folder named after a hash of those: the first process of this file computes them and the others reuse
// them (ctest runs each test as a process of its own; one NumPy run takes 1-3 s).
std::string& work_dir_storage() {
  static std::string dir;
  return dir;
}

std::string work_dir() {
  return work_dir_storage();
}

std::uint64_t fnv1a(std::uint64_t hash, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t k = 0; k < bytes; ++k) hash = (hash ^ p[k]) * 1099511628211ull;
  return hash;
}

void write_file(const std::string& path, const void* data, std::size_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(data, 1, bytes, f), bytes) << path;
  std::fclose(f);
}

template <class T> std::vector<T> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// ---- inputs --------------------------------------------------------------------------------------------------

template <class T> std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  const T tiny = sizeof(T) == 4 ? (T)1e-30 : (T)1e-300, sub = sizeof(T) == 4 ? (T)1e-40 : (T)1e-310;
  const T large = sizeof(T) == 4 ? (T)1e30 : (T)1e300;
  std::vector<T> v{(T)0, -(T)0, L::quiet_NaN()};
  for (T m : {tiny, sub, (T)0.5, (T)1, (T)2, large, L::max(), L::infinity()}) {
    v.push_back(m);
    v.push_back(-m);
  }
  return v;
}

template <class T> struct Inputs {
  std::vector<std::complex<double>> unary, a, b, cast;
  std::vector<std::complex<double>> rows; // rows of 7 for the reductions
  std::size_t grid = 0;                   // unary[0, grid) is the special-value grid
};

template <class T> Inputs<T> make_inputs() {
  constexpr int p = std::numeric_limits<T>::digits;
  constexpr int max_exp = std::numeric_limits<T>::max_exponent;
  std::mt19937_64 rng(sizeof(T) == 4 ? 20261202 : 19700101);
  std::uniform_real_distribution<double> u01(0, 1);
  auto sgn = [&] { return u01(rng) < 0.5 ? -1.0 : 1.0; };
  auto mag = [&](double lo, double hi) { return std::exp2(lo + (hi - lo) * u01(rng)); };
  auto as_t = [](double re, double im) { return std::complex<double>((double)(T)re, (double)(T)im); };
  Inputs<T> in;
  const auto sv = special_values<T>();
  for (T re : sv)
    for (T im : sv) in.unary.emplace_back(re, im);
  in.grid = in.unary.size();
  const double range = sizeof(T) == 4 ? 30 : 60;
  for (int k = 0; k < 1500; ++k) { // all magnitudes, some zero parts
    const double re = u01(rng) < 0.08 ? 0.0 : sgn() * mag(-range, range);
    const double im = u01(rng) < 0.08 ? 0.0 : sgn() * mag(-range, range);
    in.unary.push_back(as_t(re, im));
  }
  for (int k = 0; k < 400; ++k) { // |z| near 1
    const double theta = (u01(rng) * 2 - 1) * 3.141592653589793, rho = 1 + sgn() * mag(-p - 1, -2);
    in.unary.push_back(as_t(rho * std::cos(theta), rho * std::sin(theta)));
  }
  for (int k = 0; k < 400; ++k) { // near the cuts: the real axis beyond +-1 and the imaginary axis beyond +-i
    const double along = sgn() * (u01(rng) < 0.5 ? 1 + mag(-p, 2) : mag(-4, 12));
    const double off = u01(rng) < 0.3 ? sgn() * 0.0 : sgn() * mag(-p - 20, -p + 6);
    in.unary.push_back(k % 2 ? as_t(along, off) : as_t(off, along));
  }
  for (int k = 0; k < 300; ++k) // near 0
    in.unary.push_back(as_t(sgn() * mag(-range, -4), sgn() * mag(-range, -4)));
  for (int k = 0; k < 200; ++k) { // near -1, +1 (log1p, atanh, asin)
    const double off = u01(rng) < 0.5 ? sgn() * mag(-p - 4, -2) : 0.0;
    in.unary.push_back(as_t(sgn() * (1 + off), sgn() * mag(-range, -1)));
  }
  for (int k = 0; k < 200; ++k) // large
    in.unary.push_back(as_t(sgn() * mag(10, max_exp - 1), sgn() * mag(-range, max_exp - 1)));
  // pairs: the grid with itself, then random bases with small integer, fractional and general exponents
  for (T ar : sv)
    for (T ai : sv)
      for (T br : sv)
        for (T bi : sv)
          if ((ar == ar) + (ai == ai) + (br == br) + (bi == bi) >= 3) { // at most one NaN: the grid stays small
            in.a.emplace_back(ar, ai);
            in.b.emplace_back(br, bi);
          }
  for (int k = 0; k < 3000; ++k) {
    in.a.push_back(as_t(sgn() * mag(-8, 8), sgn() * mag(-8, 8)));
    const int kind = k % 4;
    if (kind == 0)
      in.b.push_back(as_t(std::floor(u01(rng) * 40 - 20), 0));
    else if (kind == 1)
      in.b.push_back(as_t(sgn() * mag(-6, 3), 0));
    else
      in.b.push_back(as_t(sgn() * mag(-6, 3), sgn() * mag(-6, 3)));
  }
  // rows of small integers (ties), special values and NaN in either part, for the reductions
  for (int k = 0; k < 7 * 1500; ++k) {
    const double pick = u01(rng);
    if (pick < 0.15) {
      in.rows.emplace_back(sv[std::size_t(u01(rng) * sv.size())], sv[std::size_t(u01(rng) * sv.size())]);
    } else {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      const double re = pick < 0.18 ? nan : std::floor(u01(rng) * 5) - 2,
                   im = pick > 0.97 ? nan : std::floor(u01(rng) * 5) - 2;
      in.rows.emplace_back(re, im);
    }
  }
  for (int k = 0; k < 200; ++k) {
    const double re = std::floor(u01(rng) * 200) * 0.5, im = u01(rng) < 0.3 ? 0.0 : sgn() * mag(-10, 10);
    in.cast.push_back(as_t(re, im));
  }
  return in;
}

// ---- NumPy's answers -----------------------------------------------------------------------------------------

struct Oracle {
  std::string why_not; // empty when NumPy answered
};

template <class T> const Inputs<T>& inputs() {
  static const Inputs<T> in = make_inputs<T>();
  return in;
}

std::string file(const std::string& type, const std::string& name) {
  return work_dir() + "/" + type + "_" + name;
}

Oracle run_oracle() {
  Oracle o;
  const char* python = std::getenv("LAZYFUSE_TEST_PYTHON");
  if (!python || !*python) {
    o.why_not = "LAZYFUSE_TEST_PYTHON is not set (the Python interpreter with NumPy 2 that answers for NumPy)";
    return o;
  }
  std::uint64_t hash = 14695981039346656037ull;
  hash = fnv1a(hash, kScript, std::strlen(kScript));
  hash = fnv1a(hash, python, std::strlen(python));
  auto hash_inputs = [&](const auto& in) {
    for (const auto* v : {&in.unary, &in.a, &in.b, &in.cast, &in.rows}) hash = fnv1a(hash, v->data(), v->size() * 16);
  };
  hash_inputs(inputs<float>());
  hash_inputs(inputs<double>());
  char name[64];
  std::snprintf(name, sizeof name, "complex_math_oracle_%016llx", (unsigned long long)hash);
  const std::filesystem::path done = name;
  if (std::filesystem::exists(done)) { // another process answered (folders appear whole: renamed into place)
    work_dir_storage() = done.string();
    return o;
  }
  const std::filesystem::path mine = done.string() + ".part" + std::to_string(getpid());
  std::error_code error;
  std::filesystem::remove_all(mine, error);
  std::filesystem::create_directories(mine, error);
  if (error) {
    o.why_not = "cannot create " + mine.string() + ": " + error.message();
    return o;
  }
  work_dir_storage() = mine.string();
  auto write_inputs = [&](const std::string& type, const auto& in) {
    write_file(file(type, "unary.in"), in.unary.data(), in.unary.size() * sizeof(in.unary[0]));
    write_file(file(type, "a.in"), in.a.data(), in.a.size() * sizeof(in.a[0]));
    write_file(file(type, "b.in"), in.b.data(), in.b.size() * sizeof(in.b[0]));
    write_file(file(type, "cast.in"), in.cast.data(), in.cast.size() * sizeof(in.cast[0]));
    write_file(file(type, "rows.in"), in.rows.data(), in.rows.size() * sizeof(in.rows[0]));
  };
  write_inputs("c64", inputs<float>());
  write_inputs("c128", inputs<double>());
  {
    std::ofstream script(work_dir() + "/oracle.py");
    script << kScript;
  }
  const std::string cmd = std::string("'") + python + "' '" + work_dir() + "/oracle.py' '" + work_dir() + "' 2>&1";
  std::FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    o.why_not = "cannot run " + cmd;
    return o;
  }
  std::string all;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) all.append(buf, n);
  const int status = pclose(pipe);
  if (status != 0 || all.find("ok") == std::string::npos) {
    o.why_not = cmd + " failed (status " + std::to_string(status) + "): " + all.substr(0, 2000);
    return o;
  }
  std::filesystem::rename(mine, done, error);
  if (error) std::filesystem::remove_all(mine, error); // another process's answers are in place: the same ones
  work_dir_storage() = done.string();
  return o;
}

const Oracle& oracle() {
  static const Oracle o = run_oracle();
  return o;
}

#define NEED_NUMPY() LAZYFUSE_NEED_NUMPY(oracle().why_not)

// ---- comparing -----------------------------------------------------------------------------------------------

template <class T> struct Ops; // the lazyfuse complex type of T
template <> struct Ops<float> {
  using C = lf_c64;
  static constexpr const char* name = "c64";
};
template <> struct Ops<double> {
  using C = lf_c128;
  static constexpr const char* name = "c128";
};

template <class T> typename Ops<T>::C to_c(std::complex<double> z) {
  return typename Ops<T>::C{(T)z.real(), (T)z.imag()};
}

std::string show(double re, double im) {
  std::ostringstream s;
  s.precision(17);
  s << "(" << re << ", " << im << ")";
  return s.str();
}

// A reference value from its head and tail (a zero keeps its sign: -0 + 0 would be +0).
long double join(double head, double tail) {
  return tail == 0 ? (long double)head : (long double)head + tail;
}

// Do two parts agree exactly as special values: both NaN, or the same infinity or signed zero?
bool same_special(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

// |got - want| in units in the last place of want (in T; subnormals count in the smallest ulp).
template <class T> double ulps(T got, long double want) {
  if (std::isnan(got) || std::isnan((double)want)) return std::isnan(got) && std::isnan((double)want) ? 0 : 1e30;
  if (std::isinf((double)(T)want) || std::isinf(got)) return (double)(T)want == (double)got ? 0 : 1e30;
  int e = 0;
  std::frexp((double)want, &e);
  e = std::max(e, std::numeric_limits<T>::min_exponent);
  const long double ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
  return (double)(std::fabs((long double)got - want) / ulp);
}

// |got - want| in units in the last place (in T) of `scale`, a positive magnitude (normwise errors).
template <class T> double ulps_of_scale(long double got, long double want, long double scale) {
  int e = 0;
  std::frexp((double)scale, &e);
  e = std::max(e, std::numeric_limits<T>::min_exponent);
  return (double)(std::fabs(got - want) / std::ldexp(1.0L, e - std::numeric_limits<T>::digits));
}

struct Worst {
  double ulps = 0;
  std::string where;
};

template <class T> using Fn = typename Ops<T>::C (*)(typename Ops<T>::C);

// How a finite part's error is measured: in ulps of that part, or in ulps of the larger part (for expm1, whose
// real part vanishes on a curve where expm1(x) cos y and 2 sin^2(y/2) cancel).
enum class Metric { PerPart, Normwise };

// One elementary function: special values as NumPy (or `special_file`'s results) gives them; the rest within
// `bound` ulps of the reference, per part. Returns the worst error seen. Outside `accurate` (where given), the
// finite values are only checked in modulus (exp2 for |Im z| beyond 2^p, where the angle y ln 2 needs more digits
// of ln 2 than the type has).
template <class T>
Worst check_function(const std::string& name, Fn<T> f, double bound, const std::string& special_file, Metric metric,
                     bool (*accurate)(double re, double im)) {
  const auto& in = inputs<T>().unary;
  const std::string type = Ops<T>::name;
  const auto numpy = read_file<std::complex<double>>(file(type, name + ".np"));
  const auto special = special_file.empty() ? numpy : read_file<std::complex<double>>(file(type, special_file));
  const auto ref = read_file<double>(file(type, name + ".ref"));
  EXPECT_EQ(numpy.size(), in.size()) << name;
  EXPECT_EQ(special.size(), in.size()) << name;
  EXPECT_EQ(ref.size(), 4 * in.size()) << name;
  Worst worst;
  int failures = 0;
  for (std::size_t k = 0; k < in.size() && k < numpy.size() && 4 * k + 3 < ref.size() && k < special.size(); ++k) {
    const auto r = f(to_c<T>(in[k]));
    const long double want[2] = {join(ref[4 * k], ref[4 * k + 1]), join(ref[4 * k + 2], ref[4 * k + 3])};
    const double np_part[2] = {special[k].real(), special[k].imag()};
    const T got[2] = {r.re, r.im};
    for (int part = 0; part < 2; ++part) {
      // NumPy's NaN, infinities and zeros that are exact (the reference agrees) must be met exactly.
      // (Not where NumPy overflows or underflows and the reference does not, nor where its formula loses the value.)
      const double want_t = (double)(T)want[part];
      const bool exact = std::isnan(np_part[part]) ||
                         (std::isinf(np_part[part]) && (std::isinf(want_t) || std::isnan(want_t))) ||
                         (np_part[part] == 0 && (want[part] == 0 || std::isnan(want_t)));
      double err = 0;
      const bool in_domain = !accurate || accurate(in[k].real(), in[k].imag());
      // Outside the domain, and where NumPy's infinity's sign is not the reference's or a zero comes from underflow
      // (exp2: NumPy rounds y ln 2), only the kind of special value is checked: its sign follows an angle NumPy does
      // not get right.
      const bool np_angle_off =
          accurate &&
          ((std::isinf(np_part[part]) && std::isinf(want_t) && std::signbit(want_t) != std::signbit(np_part[part])) ||
           (np_part[part] == 0 && in[k].imag() != 0));
      if (exact && (!in_domain || np_angle_off)) {
        const double g = (double)got[part], w = np_part[part];
        if (std::isnan(g) != std::isnan(w) || std::isinf(g) != std::isinf(w) || (g == 0) != (w == 0)) err = 1e30;
      } else if (exact) {
        if (!same_special((double)got[part], np_part[part])) err = 1e30;
      } else if (!in_domain) {
        const long double modulus = std::hypot(want[0], want[1]);
        err = ulps<T>((T)std::hypot((long double)got[0], (long double)got[1]), modulus) / 4;
      } else if (metric == Metric::Normwise && !std::isnan((double)want[part]) && !std::isinf((double)want[part])) {
        const long double other = want[1 - part];
        const long double scale =
            std::isfinite((double)other) ? std::max(std::fabs(want[0]), std::fabs(want[1])) : std::fabs(want[part]);
        err = ulps_of_scale<T>(got[part], want[part], scale);
      } else {
        err = ulps<T>(got[part], want[part]);
      }
      if (err > worst.ulps) {
        worst.ulps = err;
        worst.where = name + show(in[k].real(), in[k].imag()) + " = " + show(r.re, r.im) + ", NumPy " +
                      show(np_part[0], np_part[1]) + ", reference " + show((double)want[0], (double)want[1]);
      }
      if (err > bound && ++failures <= 30)
        ADD_FAILURE() << type << " " << name << show(in[k].real(), in[k].imag()) << " = " << show(r.re, r.im)
                      << " part " << part << ": " << (exact ? "expected exactly " : "ulps ") << err << "; NumPy "
                      << show(numpy[k].real(), numpy[k].imag()) << ", reference "
                      << show((double)want[0], (double)want[1]);
    }
  }
  if (failures > 30) ADD_FAILURE() << type << " " << name << ": " << failures << " parts out of bounds in all";
  return worst;
}

template <class T> void check_elementary() {
  using C = typename Ops<T>::C;
  struct Case {
    const char* name;
    Fn<T> f;
    double bound; // in ulps
    const char* special = "";
    Metric metric = Metric::PerPart;
    bool (*accurate)(double, double) = nullptr;
  };
  constexpr double angle_digits = std::ldexp(1.0, std::numeric_limits<T>::digits);
  auto exp2_accurate = [](double, double im) { return std::fabs(im) <= angle_digits; };
  const Case cases[] = {
      {"exp", [](C z) { return op::lf_exp(z); }, 3},
      {"exp2", [](C z) { return op::lf_exp2(z); }, 3, "", Metric::PerPart, exp2_accurate},
      {"expm1", [](C z) { return op::lf_expm1(z); }, 3, "expm1_special.np", Metric::Normwise},
      {"log", [](C z) { return op::lf_log(z); }, 3},
      {"log2", [](C z) { return op::lf_log2(z); }, 4},
      {"log10", [](C z) { return op::lf_log10(z); }, 4},
      {"log1p", [](C z) { return op::lf_log1p(z); }, 3, "log1p_special.np"},
      {"sqrt", [](C z) { return op::lf_sqrt(z); }, 3},
      {"sin", [](C z) { return op::lf_sin(z); }, 4},
      {"cos", [](C z) { return op::lf_cos(z); }, 4},
      {"tan", [](C z) { return op::lf_tan(z); }, 5},
      {"arcsin", [](C z) { return op::lf_asin(z); }, 4},
      {"arccos", [](C z) { return op::lf_acos(z); }, 4},
      {"arctan", [](C z) { return op::lf_atan(z); }, 4},
      {"sinh", [](C z) { return op::lf_sinh(z); }, 4},
      {"cosh", [](C z) { return op::lf_cosh(z); }, 4},
      {"tanh", [](C z) { return op::lf_tanh(z); }, 5},
      {"arcsinh", [](C z) { return op::lf_asinh(z); }, 4},
      {"arccosh", [](C z) { return op::lf_acosh(z); }, 4},
      {"arctanh", [](C z) { return op::lf_atanh(z); }, 4},
  };
  for (const auto& c : cases) {
    const Worst w = check_function<T>(c.name, c.f, c.bound, c.special, c.metric, c.accurate);
    std::printf("%-5s %-8s worst %.2f ulp at %s\n", Ops<T>::name, c.name, w.ulps, w.where.c_str());
  }
}

template <class C> bool lf_isfinite_pair(C a, C b) {
  return op::lf_isfinite(a) && op::lf_isfinite(b);
}

// Are two values the same, NaN for NaN and zeros with their signs?
bool same_value(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

// The ops NumPy computes with the same operations in the same order (arithmetic, comparisons, minimum, maximum,
// abs as hypot, angle as atan2, sign, rint, predicates): lazyfuse must give NumPy's very values.
template <class T> void check_exact_ops() {
  using C = typename Ops<T>::C;
  const std::string type = Ops<T>::name;
  const auto& in = inputs<T>();
  struct UnaryCase {
    const char* name;
    std::complex<double> (*f)(C);
  };
  const UnaryCase unary[] = {
      {"negative",
       [](C z) {
         const C r = op::lf_negative(z);
         return std::complex<double>(r.re, r.im);
       }},
      {"square",
       [](C z) {
         const C r = op::lf_square(z);
         return std::complex<double>(r.re, r.im);
       }},
      {"reciprocal",
       [](C z) {
         const C r = op::lf_reciprocal(z);
         return std::complex<double>(r.re, r.im);
       }},
      {"conjugate",
       [](C z) {
         const C r = op::lf_conj(z);
         return std::complex<double>(r.re, r.im);
       }},
      {"sign",
       [](C z) {
         const C r = op::lf_sign(z);
         return std::complex<double>(r.re, r.im);
       }},
      {"rint",
       [](C z) {
         const C r = op::lf_rint(z);
         return std::complex<double>(r.re, r.im);
       }},
      {"isnan", [](C z) { return std::complex<double>(op::lf_isnan(z), 0); }},
      {"isinf", [](C z) { return std::complex<double>(op::lf_isinf(z), 0); }},
      {"isfinite", [](C z) { return std::complex<double>(op::lf_isfinite(z), 0); }},
  };
  for (const auto& c : unary) {
    const auto want = read_file<std::complex<double>>(file(type, std::string(c.name) + ".np"));
    ASSERT_EQ(want.size(), in.unary.size()) << c.name;
    int failures = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      const auto got = c.f(to_c<T>(in.unary[k]));
      if ((!same_value(got.real(), want[k].real()) || !same_value(got.imag(), want[k].imag())) && ++failures <= 5)
        ADD_FAILURE() << type << " " << c.name << show(in.unary[k].real(), in.unary[k].imag()) << " = "
                      << show(got.real(), got.imag()) << ", NumPy " << show(want[k].real(), want[k].imag());
    }
    EXPECT_EQ(failures, 0) << type << " " << c.name;
  }
  struct BinaryCase {
    const char* name;
    std::complex<double> (*f)(C, C);
  };
  const BinaryCase binary[] = {
      {"add",
       [](C a, C b) {
         const C r = op::lf_add(a, b);
         return std::complex<double>(r.re, r.im);
       }},
      {"subtract",
       [](C a, C b) {
         const C r = op::lf_subtract(a, b);
         return std::complex<double>(r.re, r.im);
       }},
      {"multiply",
       [](C a, C b) {
         const C r = op::lf_multiply(a, b);
         return std::complex<double>(r.re, r.im);
       }},
      {"true_divide",
       [](C a, C b) {
         const C r = op::lf_true_divide(a, b);
         return std::complex<double>(r.re, r.im);
       }},
      {"minimum",
       [](C a, C b) {
         const C r = op::lf_minimum(a, b);
         return std::complex<double>(r.re, r.im);
       }},
      {"maximum",
       [](C a, C b) {
         const C r = op::lf_maximum(a, b);
         return std::complex<double>(r.re, r.im);
       }},
      {"equal", [](C a, C b) { return std::complex<double>(op::lf_equal(a, b), 0); }},
      {"not_equal", [](C a, C b) { return std::complex<double>(op::lf_not_equal(a, b), 0); }},
      {"less", [](C a, C b) { return std::complex<double>(op::lf_less(a, b), 0); }},
      {"less_equal", [](C a, C b) { return std::complex<double>(op::lf_less_equal(a, b), 0); }},
      {"greater", [](C a, C b) { return std::complex<double>(op::lf_greater(a, b), 0); }},
      {"greater_equal", [](C a, C b) { return std::complex<double>(op::lf_greater_equal(a, b), 0); }},
  };
  for (const auto& c : binary) {
    const auto want = read_file<std::complex<double>>(file(type, std::string(c.name) + ".np"));
    ASSERT_EQ(want.size(), in.a.size()) << c.name;
    int failures = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      const auto got = c.f(to_c<T>(in.a[k]), to_c<T>(in.b[k]));
      if ((!same_value(got.real(), want[k].real()) || !same_value(got.imag(), want[k].imag())) && ++failures <= 5)
        ADD_FAILURE() << type << " " << c.name << show(in.a[k].real(), in.a[k].imag())
                      << show(in.b[k].real(), in.b[k].imag()) << " = " << show(got.real(), got.imag()) << ", NumPy "
                      << show(want[k].real(), want[k].imag());
    }
    EXPECT_EQ(failures, 0) << type << " " << c.name;
  }
}

// abs and angle: hypot and atan2 (NumPy's vectorized loops compute them otherwise, a few ulps away), so the
// reference's values (special ones exactly), within `bound` ulps.
template <class T> double check_abs_angle(double bound) {
  using C = typename Ops<T>::C;
  const std::string type = Ops<T>::name;
  const auto& in = inputs<T>().unary;
  double worst = 0;
  for (const std::string name : {"absolute", "angle"}) {
    const auto ref = read_file<double>(file(type, name + ".ref"));
    EXPECT_EQ(ref.size(), 4 * in.size()) << name;
    int failures = 0;
    for (std::size_t k = 0; k < in.size() && 4 * k + 3 < ref.size(); ++k) {
      const C z = to_c<T>(in[k]);
      const T got = name == "absolute" ? op::lf_abs(z) : op::lf_angle(z);
      const long double want = join(ref[4 * k], ref[4 * k + 1]);
      const double want_t = (double)(T)want;
      const double err = std::isfinite(want_t) && want_t != 0 ? ulps<T>(got, want) : same_value(got, want_t) ? 0 : 1e30;
      worst = std::max(worst, err);
      if (err > bound && ++failures <= 5)
        ADD_FAILURE() << type << " " << name << show(in[k].real(), in[k].imag()) << " = " << got << ", reference "
                      << (double)want;
    }
    EXPECT_EQ(failures, 0) << type << " " << name;
  }
  return worst;
}

// power: NumPy's special cases and small integer exponents (repeated multiplication) exactly; the rest, exp(b log a),
// within `bound` ulps of |a^b| per unit of |b log a| + 1 (the condition of exp(b log a): an error of one ulp in
// b log a moves the result by that much).
template <class T> double check_power(double bound) {
  using C = typename Ops<T>::C;
  const std::string type = Ops<T>::name;
  const auto& in = inputs<T>();
  const auto numpy = read_file<std::complex<double>>(file(type, "power.np"));
  const auto ref = read_file<double>(file(type, "power.ref"));
  EXPECT_EQ(numpy.size(), in.a.size());
  EXPECT_EQ(ref.size(), 4 * in.a.size());
  double worst = 0;
  int failures = 0;
  for (std::size_t k = 0; k < numpy.size() && 4 * k + 3 < ref.size(); ++k) {
    const C a = to_c<T>(in.a[k]), b = to_c<T>(in.b[k]);
    const C r = op::lf_power(a, b);
    const bool small_integer = b.im == 0 && std::fabs(b.re) < 100 && b.re == std::trunc(b.re);
    const bool zero_base = a.re == 0 && a.im == 0;
    const double np_part[2] = {numpy[k].real(), numpy[k].imag()};
    const T got[2] = {r.re, r.im};
    const long double want[2] = {join(ref[4 * k], ref[4 * k + 1]), join(ref[4 * k + 2], ref[4 * k + 3])};
    const bool all_finite = std::isfinite(np_part[0]) && std::isfinite(np_part[1]) && std::isfinite((double)want[0]) &&
                            std::isfinite((double)want[1]) && std::isfinite((double)got[0]) &&
                            std::isfinite((double)got[1]);
    double err = 0;
    if (small_integer || zero_base || (b.re == 0 && b.im == 0) || !lf_isfinite_pair(a, b)) {
      if (!same_value(got[0], np_part[0]) || !same_value(got[1], np_part[1])) err = 1e30;
    } else if (all_finite) {
      const C w = op::lf_multiply(b, op::lf_log(a));
      const long double larger = std::max(std::fabs(want[0]), std::fabs(want[1]));
      for (int part = 0; part < 2; ++part)
        err = std::max(err,
                       ulps_of_scale<T>(got[part], want[part], larger) / (1 + std::hypot((double)w.re, (double)w.im)));
    } else { // overflow or underflow at the edge: NaN-ness must agree
      for (int part = 0; part < 2; ++part)
        if (std::isnan((double)got[part]) != std::isnan(np_part[part])) err = 1e30;
    }
    worst = std::max(worst, err);
    if (err > bound && ++failures <= 8)
      ADD_FAILURE() << type << " power" << show(in.a[k].real(), in.a[k].imag()) << show(in.b[k].real(), in.b[k].imag())
                    << " = " << show(r.re, r.im) << ": " << err << "; NumPy " << show(np_part[0], np_part[1])
                    << ", reference " << show((double)want[0], (double)want[1]);
  }
  EXPECT_EQ(failures, 0) << type << " power";
  return worst;
}

// complex -> every type as NumPy's astype (values every target holds), and the real -> complex direction.
template <class T> void check_casts() {
  using C = typename Ops<T>::C;
  const std::string type = Ops<T>::name;
  const auto& in = inputs<T>().cast;
  auto expect = [&](const char* target, auto cast) {
    const auto want = read_file<std::complex<double>>(file(type, std::string("cast_") + target + ".np"));
    ASSERT_EQ(want.size(), in.size()) << target;
    for (std::size_t k = 0; k < in.size(); ++k) {
      const std::complex<double> got = cast(to_c<T>(in[k]));
      EXPECT_TRUE(same_value(got.real(), want[k].real()) && same_value(got.imag(), want[k].imag()))
          << type << " -> " << target << show(in[k].real(), in[k].imag()) << " = " << show(got.real(), got.imag())
          << ", NumPy " << show(want[k].real(), want[k].imag());
    }
  };
  expect("bool", [](C z) { return std::complex<double>(op::lf_cast<bool, C>(z), 0); });
  expect("int8", [](C z) { return std::complex<double>(op::lf_cast<op::lf_i8, C>(z), 0); });
  expect("int16", [](C z) { return std::complex<double>(op::lf_cast<op::lf_i16, C>(z), 0); });
  expect("int32", [](C z) { return std::complex<double>(op::lf_cast<op::lf_i32, C>(z), 0); });
  expect("int64", [](C z) { return std::complex<double>((double)op::lf_cast<op::lf_i64, C>(z), 0); });
  expect("uint8", [](C z) { return std::complex<double>(op::lf_cast<op::lf_u8, C>(z), 0); });
  expect("uint16", [](C z) { return std::complex<double>(op::lf_cast<op::lf_u16, C>(z), 0); });
  expect("uint32", [](C z) { return std::complex<double>(op::lf_cast<op::lf_u32, C>(z), 0); });
  expect("uint64", [](C z) { return std::complex<double>((double)op::lf_cast<op::lf_u64, C>(z), 0); });
  expect("float32", [](C z) { return std::complex<double>(op::lf_cast<float, C>(z), 0); });
  expect("float64", [](C z) { return std::complex<double>(op::lf_cast<double, C>(z), 0); });
  expect("complex64", [](C z) {
    const lf_c64 r = op::lf_cast<lf_c64, C>(z);
    return std::complex<double>(r.re, r.im);
  });
  expect("complex128", [](C z) {
    const lf_c128 r = op::lf_cast<lf_c128, C>(z);
    return std::complex<double>(r.re, r.im);
  });
}

// Folds a row as the CPU backend does: from the identity, in index order.
template <class C> std::int64_t arg_fold(const std::vector<C>& row, bool max) {
  C best = max ? op::lf_argmax_identity<C>() : op::lf_argmin_identity<C>();
  std::int64_t best_index = INT64_MAX;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const bool better = max ? op::lf_argmax_better<C>(row[i], (op::lf_i64)i, best, best_index)
                            : op::lf_argmin_better<C>(row[i], (op::lf_i64)i, best, best_index);
    if (better) best = row[i], best_index = (std::int64_t)i;
  }
  return best_index;
}

// min, max, nanmin, nanmax, argmin and argmax of rows of 7 (special values and random ones) as NumPy's; sum and prod
// start from identities that change nothing.
template <class T> void check_reductions() {
  using C = typename Ops<T>::C;
  const std::string type = Ops<T>::name;
  const auto& a = inputs<T>().rows;
  const std::size_t rows = a.size() / 7;
  const auto argmax = read_file<std::int64_t>(file(type, "argmax.np"));
  const auto argmin = read_file<std::int64_t>(file(type, "argmin.np"));
  const auto max = read_file<std::complex<double>>(file(type, "max.np"));
  const auto min = read_file<std::complex<double>>(file(type, "min.np"));
  const auto nanmax = read_file<std::complex<double>>(file(type, "nanmax.np"));
  const auto nanmin = read_file<std::complex<double>>(file(type, "nanmin.np"));
  ASSERT_EQ(argmax.size(), rows);
  ASSERT_EQ(nanmin.size(), rows);
  int failures = 0;
  auto same = [](C got, std::complex<double> want) {
    return same_value(got.re, want.real()) && same_value(got.im, want.imag());
  };
  for (std::size_t r = 0; r < rows && failures < 10; ++r) {
    std::vector<C> row;
    for (std::size_t k = 0; k < 7; ++k) row.push_back(to_c<T>(a[7 * r + k]));
    // the same index whichever way the tree combines: forwards (the CPU backend) and backwards
    std::vector<C> reversed(row.rbegin(), row.rend());
    const std::int64_t am = arg_fold(row, true), an = arg_fold(row, false);
    C mx = op::lf_max_identity<C>(), mn = op::lf_min_identity<C>();
    C nmx = op::lf_nanmax_identity<C>(), nmn = op::lf_nanmin_identity<C>();
    bool all_nan = true;
    for (const C& z : row) {
      mx = op::lf_max_combine(mx, z);
      mn = op::lf_min_combine(mn, z);
      nmx = op::lf_nanmax_combine(nmx, z);
      nmn = op::lf_nanmin_combine(nmn, z);
      all_nan = all_nan && op::lf_isnan(z);
    }
    const bool ok = am == argmax[r] && an == argmin[r] && same(mx, max[r]) && same(mn, min[r]) &&
                    (all_nan ? op::lf_isnan(nmx) && op::lf_isnan(nmn) : same(nmx, nanmax[r]) && same(nmn, nanmin[r]));
    if (!ok) {
      ++failures;
      std::ostringstream row_text;
      for (const C& z : row) row_text << show(z.re, z.im) << " ";
      ADD_FAILURE() << type << " row " << row_text.str() << ": argmax " << am << " (NumPy " << argmax[r] << "), argmin "
                    << an << " (" << argmin[r] << "), max " << show(mx.re, mx.im) << " ("
                    << show(max[r].real(), max[r].imag()) << "), min " << show(mn.re, mn.im) << " ("
                    << show(min[r].real(), min[r].imag()) << "), nanmax " << show(nmx.re, nmx.im) << " ("
                    << show(nanmax[r].real(), nanmax[r].imag()) << "), nanmin " << show(nmn.re, nmn.im) << " ("
                    << show(nanmin[r].real(), nanmin[r].imag()) << ")";
    }
    // backwards, indices mirrored: the winner is the same element (ties and NaN go to the lower index)
    const std::int64_t am_back = arg_fold(reversed, true), an_back = arg_fold(reversed, false);
    const auto tie_first = [&](std::int64_t forward, std::int64_t backward) {
      return backward == 6 - forward ||
             (op::lf_equal(row[(std::size_t)forward], row[(std::size_t)(6 - backward)]) ||
              (op::lf_isnan(row[(std::size_t)forward]) && op::lf_isnan(row[(std::size_t)(6 - backward)])));
    };
    EXPECT_TRUE(tie_first(am, am_back) && tie_first(an, an_back)) << type << " row " << r;
  }
  EXPECT_EQ(failures, 0);
  // sum and prod: the identities leave every finite value as it is
  for (std::size_t k = 0; k < inputs<T>().unary.size(); ++k) {
    const C z = to_c<T>(inputs<T>().unary[k]);
    if (!op::lf_isfinite(z)) continue;
    const C s = op::lf_sum_combine(op::lf_sum_identity<C>(), z), p = op::lf_prod_combine(op::lf_prod_identity<C>(), z);
    EXPECT_TRUE(s.re == z.re && s.im == z.im && p.re == z.re && p.im == z.im) << type << show(z.re, z.im);
  }
}

// What the CUDA printer puts before the op prelude (codegen/CudaPrinter.cpp, kPreludeDefinitions).
std::string kernel_prelude() {
  return "#define LF_HD __device__ __forceinline__\n"
         "#define LF_INF_F __int_as_float(0x7f800000)\n"
         "#define LF_INF_D __longlong_as_double(0x7ff0000000000000LL)\n"
         "typedef signed char lf_i8;\ntypedef short lf_i16;\ntypedef int lf_i32;\ntypedef long long lf_i64;\n"
         "typedef unsigned char lf_u8;\ntypedef unsigned short lf_u16;\ntypedef unsigned int lf_u32;\n"
         "typedef unsigned long long lf_u64;\n";
}

// A kernel calling every complex function of both types, as a generated kernel would (the op library's functions
// by name, the type names of the kernel's prelude).
std::string every_complex_function_kernel() {
  const char* const unary[] = {"negative", "square", "reciprocal", "conj",  "rint", "sign",  "exp",   "exp2", "expm1",
                               "log",      "log2",   "log10",      "log1p", "sqrt", "sin",   "cos",   "tan",  "asin",
                               "acos",     "atan",   "sinh",       "cosh",  "tanh", "asinh", "acosh", "atanh"};
  const char* const binary[] = {"add", "subtract", "multiply", "true_divide", "power", "minimum", "maximum"};
  const char* const predicates[] = {"isnan", "isinf", "isfinite"};
  const char* const comparisons[] = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
  const char* const reals[] = {"abs", "angle", "real", "imag"};
  const char* const others[] = {"bool",   "lf_i8",  "lf_i16", "lf_i32", "lf_i64", "lf_u8",
                                "lf_u16", "lf_u32", "lf_u64", "float",  "double"};
  std::string k = "extern \"C\" __global__ void lf_every_complex_function(const lf_c64* a64, lf_c64* o64, "
                  "const lf_c128* a128, lf_c128* o128, bool* flags, double* reals, long long* index) {\n"
                  "  const int i = threadIdx.x;\n";
  for (const std::string t : {"lf_c64", "lf_c128"}) {
    const std::string in = t == "lf_c64" ? "a64" : "a128", out = t == "lf_c64" ? "o64" : "o128";
    k += "  {\n    " + t + " x = " + in + "[i], y = " + in + "[i + 1], r = lf_sum_identity<" + t + ">();\n";
    for (const char* f : unary) k += std::string("    r = lf_add(r, lf_") + f + "(x));\n";
    for (const char* f : binary) k += std::string("    r = lf_add(r, lf_") + f + "(x, y));\n";
    for (const char* f : predicates) k += std::string("    flags[i] ^= lf_") + f + "(x);\n";
    for (const char* f : comparisons) k += std::string("    flags[i] ^= lf_") + f + "(x, y);\n";
    for (const char* f : reals) k += std::string("    reals[i] += (double)lf_") + f + "(x);\n";
    for (const std::string o : others) {
      k += "    reals[i] += (double)lf_cast<" + o + ", " + t + ">(x);\n";
      k += "    r = lf_add(r, lf_cast<" + t + ", " + o + ">((" + o + ")i));\n";
    }
    k += "    r = lf_add(r, lf_cast<" + t + ", lf_c64>(a64[i]));\n";
    k += "    r = lf_add(r, lf_cast<" + t + ", lf_c128>(a128[i]));\n";
    for (const std::string red : {"sum", "prod", "min", "max", "nanmin", "nanmax"})
      k += "    r = lf_" + red + "_combine(r, lf_" + red + "_identity<" + t + ">());\n";
    k += "    if (lf_argmax_better(x, (lf_i64)i, lf_argmax_identity<" + t + ">(), (lf_i64)0)) index[i] = i;\n";
    k += "    if (lf_argmin_better(x, (lf_i64)i, lf_argmin_identity<" + t + ">(), (lf_i64)0)) index[i] = -i;\n";
    k += "    " + out + "[i] = r;\n  }\n";
  }
  return k + "}\n";
}

} // namespace

// The op library's text of the complex functions is device code: no std::, no host-only function. NVRTC compiles on
// the CPU, so this runs without a GPU.
TEST(ComplexMath, EveryFunctionCompilesWithNvrtc) {
  const std::string kernel = every_complex_function_kernel();
  const std::string prelude = kernel_prelude();
  const std::string library = lazyfuse::codegen::op_library().select(kernel);
  for (const char* f : {"lf_c64", "lf_c128", "lf_cx_asin_quadrant", "lf_cx_multiply_c99", "lf_cx_cis_ln2"})
    EXPECT_NE(library.find(f), std::string::npos) << f << " was not selected";
  try {
    const auto compiled =
        lazyfuse::codegen::compile_cuda(prelude + library + kernel, "lf_every_complex_function.cu", {});
    EXPECT_FALSE(compiled.image.empty());
  } catch (const lazyfuse::CompileError& e) {
    FAIL() << e.what() << "\n" << e.log();
  }
}

// Kernels take complex code only for the complex types they name (codegen/FunctionLibrary.h): a float kernel none,
// a complex64 kernel no complex128 code, and what it takes compiles.
TEST(ComplexMath, KernelsTakeOnlyTheComplexTypesTheyUse) {
  const auto& library = lazyfuse::codegen::op_library();
  const std::string real_kernel = "float v = lf_add(lf_sin(a), lf_cast<float, double>(lf_exp(b))); "
                                  "bool p = lf_less(a, v); float m = lf_min_combine(v, lf_min_identity<float>());";
  const std::string real_text = library.select(real_kernel);
  for (const char* f : {"lf_c64", "lf_c128", "lf_cx_"})
    EXPECT_EQ(real_text.find(f), std::string::npos) << f << " in a float kernel's prelude:\n" << real_text;
  EXPECT_NE(real_text.find("lf_sin("), std::string::npos);

  const std::string kernel = "extern \"C\" __global__ void lf_c64_only(const lf_c64* a, lf_c64* o, float* r) {\n"
                             "  const int i = threadIdx.x;\n"
                             "  const lf_c64 x = a[i], y = lf_exp2(x);\n"
                             "  o[i] = lf_add(lf_power(x, y), lf_asin(lf_cast<lf_c64, float>(lf_abs(y))));\n"
                             "  r[i] = lf_cast<float, lf_c64>(lf_max_combine(x, lf_max_identity<lf_c64>()));\n"
                             "}\n";
  const std::string text = library.select(kernel);
  EXPECT_EQ(text.find("lf_c128"), std::string::npos) << "complex128 code in a complex64 kernel's prelude";
  EXPECT_NE(text.find("lf_cx_cis_ln2_parts"), std::string::npos);
  const std::string prelude = kernel_prelude();
  try {
    EXPECT_FALSE(lazyfuse::codegen::compile_cuda(prelude + text + kernel, "lf_c64_only.cu", {}).image.empty());
  } catch (const lazyfuse::CompileError& e) {
    FAIL() << e.what() << "\n" << e.log();
  }
}

TEST(ComplexMath, CastsAreNumPysAstype) {
  NEED_NUMPY();
  check_casts<float>();
  check_casts<double>();
}

TEST(ComplexMath, CastsFromRealTypesAndSaturation) {
  // Real -> complex: the value, imaginary part +0; complex -> integer: the real part by the float -> integer rule
  // (saturating, NaN to 0: docs/semantics.md), whatever the imaginary part.
  const lf_c64 from_int = op::lf_cast<lf_c64, op::lf_i32>(-7);
  EXPECT_EQ(from_int.re, -7.0f);
  EXPECT_EQ(from_int.im, 0.0f);
  EXPECT_FALSE(std::signbit(from_int.im));
  const lf_c64 from_u64 = op::lf_cast<lf_c64, op::lf_u64>(18446744073709551615ull);
  EXPECT_EQ(from_u64.re, 18446744073709551616.0f);
  const lf_c128 from_bool = op::lf_cast<lf_c128, bool>(true);
  EXPECT_EQ(from_bool.re, 1.0);
  const lf_c128 from_float = op::lf_cast<lf_c128, float>(0.1f);
  EXPECT_EQ(from_float.re, (double)0.1f);
  EXPECT_EQ((op::lf_cast<op::lf_i8, lf_c64>(lf_c64{1000.0f, 5.0f})), 127);
  EXPECT_EQ((op::lf_cast<op::lf_i8, lf_c64>(lf_c64{-1000.0f, 5.0f})), -128);
  EXPECT_EQ((op::lf_cast<op::lf_u16, lf_c128>(lf_c128{-3.0, 5.0})), 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ((op::lf_cast<op::lf_i32, lf_c128>(lf_c128{nan, 1.0})), 0);
  EXPECT_TRUE((op::lf_cast<bool, lf_c128>(lf_c128{0.0, -0.0})) == false);
  EXPECT_TRUE((op::lf_cast<bool, lf_c128>(lf_c128{0.0, 1e-300})));
  EXPECT_TRUE((op::lf_cast<bool, lf_c128>(lf_c128{nan, 0.0})));
  const lf_c64 narrowed = op::lf_cast<lf_c64, lf_c128>(lf_c128{1e300, -1e-300});
  EXPECT_TRUE(std::isinf(narrowed.re) && narrowed.im == 0 && std::signbit(narrowed.im));
}

TEST(ComplexMath, ReductionsAreNumPys) {
  NEED_NUMPY();
  check_reductions<float>();
  check_reductions<double>();
}

TEST(ComplexMath, ArithmeticComparisonsAndPredicatesAreNumPys) {
  NEED_NUMPY();
  check_exact_ops<float>();
  check_exact_ops<double>();
}

TEST(ComplexMath, AbsIsHypotAndAngleIsAtan2) {
  NEED_NUMPY();
  std::printf("c64   abs, angle worst %.2f ulp\n", check_abs_angle<float>(1));
  std::printf("c128  abs, angle worst %.2f ulp\n", check_abs_angle<double>(1));
}

TEST(ComplexMath, PowerFollowsNumPy) {
  NEED_NUMPY();
  std::printf("c64   power    worst %.2f ulp per unit of |b log a| + 1\n", check_power<float>(4));
  std::printf("c128  power    worst %.2f ulp per unit of |b log a| + 1\n", check_power<double>(4));
}

TEST(ComplexMath, ElementaryFunctionsFloat) {
  NEED_NUMPY();
  check_elementary<float>();
}

TEST(ComplexMath, ElementaryFunctionsDouble) {
  NEED_NUMPY();
  check_elementary<double>();
}
