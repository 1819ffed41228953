// Matrix products (linalg.hpp) against NumPy, on the backend in use: cuBLASLt and the generated fallback kernel on a
// GPU, BLAS and the blocked loop on the CPU backend.
//
// NumPy (the interpreter LAZYFUSE_TEST_PYTHON names) answers every case of kCases once per process: the result's
// dtype and shape from the same op on arrays of the same dtypes, the value computed in float64 (complex128) from the
// same inputs, and the same op on the inputs' magnitudes (|a| @ |b|), which scales the error bound: a float result
// may differ from the float64 value by (k + 2) units of the accumulating type's roundoff times |a| @ |b| (the
// classic bound of a length-k dot product; twice that for complex), plus one rounding to a half type's result, plus
// TF32's input rounding when LAZYFUSE_TF32=1 on a GPU. Integer and bool results must equal NumPy's exactly, wrapping
// included.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "graph/Node.h"
#include "runtime/CpuGemm.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <link.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace lazyfuse;

namespace {

// One product against NumPy. `view_a`/`view_b` transform an operand before the op, the same way in both: "T" swaps
// its last two axes, "F" flips its last axis, "S" takes every second row (axis -2), "B" broadcasts it along a new
// leading axis of 3; "" leaves it.
struct Case {
  std::string name, op;
  DType ta;
  Shape sa;
  DType tb;
  Shape sb;
  std::string args; // NumPy keyword arguments (the same ones lazyfuse gets, see run_op)
  std::string view_a = "", view_b = "";
};

const DType F32 = DType::Float32, F64 = DType::Float64, F16 = DType::Float16, BF16 = DType::BFloat16,
            C64 = DType::Complex64, C128 = DType::Complex128, I8 = DType::Int8, I32 = DType::Int32, I64 = DType::Int64,
            U8 = DType::UInt8, B = DType::Bool;

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"mm_f32", "matmul", F32, {3, 4}, F32, {4, 5}, ""},
      {"mm_f64", "matmul", F64, {7, 9}, F64, {9, 6}, ""},
      {"mm_f16", "matmul", F16, {5, 40}, F16, {40, 3}, ""},
      {"mm_bf16", "matmul", BF16, {5, 40}, BF16, {40, 3}, ""},
      {"mm_c64", "matmul", C64, {3, 4}, C64, {4, 2}, ""},
      {"mm_c128", "matmul", C128, {3, 4}, C128, {4, 2}, ""},
      {"mm_i32", "matmul", I32, {4, 6}, I32, {6, 3}, ""},
      {"mm_i8_wraps", "matmul", I8, {4, 30}, I8, {30, 3}, ""},
      {"mm_u8", "matmul", U8, {4, 6}, U8, {6, 3}, ""},
      {"mm_i64", "matmul", I64, {2, 5}, I64, {5, 2}, ""},
      {"mm_bool", "matmul", B, {4, 6}, B, {6, 5}, ""},
      {"mm_f32_f64", "matmul", F32, {3, 4}, F64, {4, 2}, ""},
      {"mm_i32_f32", "matmul", I32, {3, 4}, F32, {4, 2}, ""},
      {"mm_vec_mat", "matmul", F32, {4}, F32, {4, 5}, ""},
      {"mm_mat_vec", "matmul", F64, {3, 4}, F64, {4}, ""},
      {"mm_vec_vec", "matmul", F32, {6}, F32, {6}, ""},
      {"mm_vec_batch", "matmul", F32, {4}, F32, {2, 4, 3}, ""},
      {"mm_batch", "matmul", F32, {2, 3, 4}, F32, {4, 5}, ""},
      {"mm_batch_bcast", "matmul", F64, {2, 1, 3, 4}, F64, {3, 4, 5}, ""},
      {"mm_batch_bcast2", "matmul", F32, {5, 3, 4}, F32, {1, 4, 2}, ""},
      {"mm_batch_i32", "matmul", I32, {3, 2, 4}, I32, {3, 4, 2}, ""},
      {"mm_empty_m", "matmul", F32, {0, 4}, F32, {4, 5}, ""},
      {"mm_empty_k", "matmul", F32, {3, 0}, F32, {0, 5}, ""},
      {"mm_empty_batch", "matmul", F32, {2, 0, 3, 4}, F32, {4, 5}, ""},
      {"mm_blocked", "matmul", F32, {2, 33, 300}, F32, {300, 17}, ""},
      {"mm_at", "matmul", F32, {4, 3}, F32, {4, 5}, "", "T", ""},
      {"mm_bt", "matmul", F64, {3, 4}, F64, {5, 4}, "", "", "T"},
      {"mm_abt_batch", "matmul", F32, {2, 4, 3}, F32, {2, 5, 4}, "", "T", "T"},
      {"mm_flip", "matmul", F32, {3, 4}, F32, {4, 5}, "", "F", ""},
      {"mm_rows_strided", "matmul", F32, {6, 4}, F32, {4, 5}, "", "S", ""},
      {"mm_bcast_view", "matmul", F32, {3, 4}, F32, {4, 5}, "", "B", ""},
      {"mm_bt_f16", "matmul", F16, {3, 8}, F16, {5, 8}, "", "", "T"},
      {"mm_bt_i32", "matmul", I32, {3, 8}, I32, {5, 8}, "", "", "T"},
      {"dot_mat_vec", "dot", F32, {3, 4}, F32, {4}, ""},
      {"dot_nd", "dot", F64, {2, 3, 4}, F64, {5, 4, 6}, ""},
      {"dot_scalar", "dot", F32, {}, F32, {3}, ""},
      {"dot_vec", "dot", I32, {5}, I32, {5}, ""},
      {"vdot_c64", "vdot", C64, {2, 3}, C64, {6}, ""},
      {"vdot_f32", "vdot", F32, {2, 3}, F32, {3, 2}, ""},
      {"inner_nd", "inner", F32, {2, 3, 4}, F32, {5, 4}, ""},
      {"inner_bool", "inner", B, {3, 4}, B, {2, 4}, ""},
      {"outer", "outer", F32, {3}, F32, {2, 2}, ""},
      {"outer_i32", "outer", I32, {3, 2}, I32, {4}, ""},
      {"tensordot_1", "tensordot", F32, {3, 4}, F32, {4, 5}, "axes=1"},
      {"tensordot_2", "tensordot", F64, {3, 4, 5}, F64, {4, 5, 6}, "axes=2"},
      {"tensordot_pairs", "tensordot", F32, {3, 4, 5}, F32, {4, 3, 2}, "axes=([1, 0], [0, 1])"},
      {"tensordot_0", "tensordot", I32, {2, 3}, I32, {4}, "axes=0"},
      {"trace", "trace", F32, {4, 5}, F32, {}, "offset=1"},
      {"trace_axes", "trace", I32, {2, 3, 4}, I32, {}, "offset=-1, axis1=1, axis2=2"},
      {"trace_bool", "trace", B, {4, 4}, B, {}, ""},
      {"diagonal", "diagonal", F64, {3, 4, 5}, F64, {}, "offset=1, axis1=2, axis2=0"},
      {"diagonal_far", "diagonal", F32, {3, 4}, F32, {}, "offset=7"},
      {"kron_2d", "kron", F32, {2, 3}, F32, {4, 2}, ""},
      {"kron_mixed_ndim", "kron", I32, {3}, I32, {2, 2, 3}, ""},
      {"kron_f64_c64", "kron", F64, {2, 2}, C64, {3}, ""},
      {"kron_scalar", "kron", F32, {}, F32, {2, 3}, ""},
      {"kron_bool", "kron", B, {2, 2}, B, {2, 3}, ""},
      {"matrix_power_0", "matrix_power", F32, {2, 3, 3}, F32, {}, "n=0"},
      {"matrix_power_1", "matrix_power", I32, {4, 4}, I32, {}, "n=1"},
      {"matrix_power_3", "matrix_power", F64, {5, 5}, F64, {}, "n=3"},
      {"matrix_power_6", "matrix_power", F32, {2, 4, 4}, F32, {}, "n=6"},
      {"matrix_power_13_i64", "matrix_power", I64, {3, 3}, I64, {}, "n=13"},
      {"einsum_mm", "einsum", F32, {3, 4}, F32, {4, 5}, "ij,jk->ik"},
      {"einsum_implicit", "einsum", F64, {3, 4}, F64, {4, 5}, "ij,jk"},
      {"einsum_batch", "einsum", F32, {2, 3, 4}, F32, {2, 4, 5}, "bij,bjk->bik"},
      {"einsum_batch_out_of_order", "einsum", F64, {3, 2, 4}, F64, {4, 5, 2}, "ibj,jkb->kbi"},
      {"einsum_two_contracted", "einsum", F32, {3, 4, 5}, F32, {5, 4, 2}, "ijk,kjl->li"},
      {"einsum_hadamard", "einsum", I32, {3, 4}, I32, {3, 4}, "ij,ij->ij"},
      {"einsum_outer", "einsum", F32, {3}, F32, {4}, "i,j->ij"},
      {"einsum_inner_implicit", "einsum", I64, {6}, I64, {6}, "i,i"},
      {"einsum_trace", "einsum", F64, {4, 4}, F64, {}, "ii"},
      {"einsum_diag", "einsum", F32, {4, 4}, F32, {}, "ii->i"},
      {"einsum_permute", "einsum", F32, {2, 3, 4}, F32, {}, "ijk->kji"},
      {"einsum_sum_all", "einsum", I32, {3, 5}, I32, {}, "ij->"},
      {"einsum_diag_then_mm", "einsum", F64, {3, 3, 4}, F64, {4, 2}, "iij,jk->ik"},
      {"einsum_sum_early", "einsum", F32, {3, 4}, F32, {5, 2}, "ij,kl->il"},
      {"einsum_bool", "einsum", B, {3, 4}, B, {4, 2}, "ij,jk->ik"},
      {"einsum_mixed_types", "einsum", I32, {3, 4}, F32, {4, 2}, "ij,jk->ki"},
      {"einsum_c64", "einsum", C64, {2, 3}, C64, {3, 2}, "ij,jk->ik"},
      {"einsum_ellipsis_batch", "einsum", F32, {2, 3, 4}, F32, {2, 4, 5}, "...ij,...jk->...ik"},
      {"einsum_ellipsis_broadcast_implicit", "einsum", F64, {5, 1, 2, 3}, F64, {4, 3, 6}, "...ij,...jk"},
      {"einsum_ellipsis_sum", "einsum", F32, {2, 3, 4}, F32, {}, "...i->..."},
      {"einsum_ellipsis_middle", "einsum", F64, {2, 3, 4, 5}, F64, {}, "i...j->j...i"},
      {"einsum_ellipsis_empty", "einsum", F32, {3, 4}, F32, {4, 2}, "...ij,jk->...ik"},
  };
  return c;
}

bool one_operand(const Case& c) {
  return c.op == "trace" || c.op == "diagonal" || c.op == "matrix_power" ||
         (c.op == "einsum" && c.args.find(',') == std::string::npos);
}

// ---- inputs: values exactly representable in their dtype, drawn from the run's seed -------------------------------

std::vector<double> draw(DType t, std::int64_t n, std::mt19937_64& rng, const std::string& name) {
  std::vector<double> v(std::size_t(is_complex(t) ? 2 * n : n));
  if (t == DType::Bool) {
    for (auto& x : v) x = double(rng() % 2);
  } else if (is_integer(t)) {
    // int8 products of values up to 100 wrap, as NumPy's do.
    const bool wide = name.find("wraps") != std::string::npos;
    const std::int64_t lo = is_signed_integer(t) ? (wide ? -100 : -4) : 0, hi = wide ? 100 : 4;
    for (auto& x : v) x = double(lo + std::int64_t(rng() % std::uint64_t(hi - lo + 1)));
  } else {
    std::uniform_real_distribution<double> d(-1, 1);
    for (auto& x : v) x = d(rng);
  }
  return v;
}

// The lazyfuse array of the drawn values, and the values it holds (rounded to its dtype) as doubles.
Array make_array(DType t, const Shape& s, std::vector<double>& values) {
  Array a;
  if (is_complex(t)) {
    std::vector<std::complex<double>> z(values.size() / 2);
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = {values[2 * i], values[2 * i + 1]};
    a = asarray(z, s).astype(t);
    auto back = a.astype(DType::Complex128).get<std::complex<double>>();
    for (std::size_t i = 0; i < z.size(); ++i)
      values[2 * i] = back.data()[i].real(), values[2 * i + 1] = back.data()[i].imag();
  } else {
    a = asarray(values, s).astype(t);
    auto back = a.astype(DType::Float64).get<double>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = back.data()[i];
  }
  return a;
}

Array apply_view(const Array& x, const std::string& view) {
  if (view == "T") {
    std::vector<int> axes;
    for (int d = 0; d < int(x.ndim()); ++d) axes.push_back(d);
    std::swap(axes[axes.size() - 1], axes[axes.size() - 2]);
    return transpose(x, axes);
  }
  if (view == "F") return flip(x, int(x.ndim()) - 1);
  if (view == "S") return x(ellipsis, slice(none, none, 2), slice(none, none));
  if (view == "B") {
    Shape s = x.shape();
    s.insert(s.begin(), 3);
    return broadcast_to(x, s);
  }
  return x;
}

Array run_op(const Case& c, const Array& a, const Array& b) {
  if (c.op == "matmul") return matmul(a, b);
  if (c.op == "dot") return dot(a, b);
  if (c.op == "vdot") return vdot(a, b);
  if (c.op == "inner") return inner(a, b);
  if (c.op == "outer") return outer(a, b);
  if (c.op == "tensordot") {
    if (c.args == "axes=([1, 0], [0, 1])") return tensordot(a, b, {{1, 0}, {0, 1}});
    return tensordot(a, b, std::stoi(c.args.substr(5)));
  }
  if (c.op == "trace") {
    if (c.args == "offset=1") return trace(a, 1);
    if (c.args.empty()) return trace(a);
    return trace(a, -1, 1, 2);
  }
  if (c.op == "kron") return kron(a, b);
  if (c.op == "einsum") return one_operand(c) ? einsum(c.args, {a}) : einsum(c.args, {a, b});
  if (c.op == "matrix_power") return linalg::matrix_power(a, std::stoi(c.args.substr(2)));
  if (c.op == "diagonal") {
    if (c.args == "offset=7") return diagonal(a, 7);
    return diagonal(a, 1, 2, 0);
  }
  ADD_FAILURE() << "unknown op " << c.op;
  return a;
}

std::string shape_text(const Shape& s) {
  if (s.empty()) return "s";
  std::string t;
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? "x" : "") + std::to_string(s[i]);
  return t;
}

// ---- the oracle ----------------------------------------------------------------------------------------------------

constexpr const char* kScript = R"PY(
import sys, numpy as np, ml_dtypes
d = sys.argv[1]
def dt(n): return ml_dtypes.bfloat16 if n == 'bfloat16' else np.dtype(n)
def shape(s): return () if s == 's' else tuple(int(x) for x in s.split('x'))
def load(name, dtn, shp):
    v = np.fromfile(f'{d}/{name}', dtype=np.float64)
    if dtn.startswith('complex'): v = v[0::2] + 1j * v[1::2]
    return v.reshape(shp)
def view(x, v):
    if v == 'T': return np.swapaxes(x, -1, -2)
    if v == 'F': return np.flip(x, x.ndim - 1)
    if v == 'S': return x[..., ::2, :]
    if v == 'B': return np.broadcast_to(x, (3,) + x.shape)
    return x
ops = {'matmul': np.matmul, 'dot': np.dot, 'vdot': np.vdot, 'inner': np.inner, 'outer': np.outer,
       'tensordot': np.tensordot, 'trace': np.trace, 'diagonal': np.diagonal, 'kron': np.kron,
       'matrix_power': np.linalg.matrix_power}
meta = open(f'{d}/meta.txt', 'w')
for line in open(f'{d}/cases.txt'):
    name, op, da, sa, db, sb, args, va, vb = line.rstrip('\n').split('\t')
    if op == 'einsum':
        kw, subs = {}, args
        f = lambda *xs: np.einsum(subs, *xs)
        one = ',' not in subs
    else:
        kw = eval('dict(' + args + ')')
        f = ops[op]
        one = op in ('trace', 'diagonal', 'matrix_power')
    a = view(load(name + '.a', da, shape(sa)), va)
    b = None if one else view(load(name + '.b', db, shape(sb)), vb)
    call = (lambda x, y: f(x, **kw)) if one else (lambda x, y: f(x, y, **kw))
    ta, tb = a.astype(dt(da)), None if one else b.astype(dt(db))
    if 'bfloat16' in (da, db):  # ml_dtypes has no matmul loops: the type is bfloat16's, the shape NumPy's
        typed = np.asarray(call(ta.astype(np.float32), None if one else tb.astype(np.float32)))
        rtype = 'bfloat16'
    else:
        typed = np.asarray(call(ta, tb))
        rtype = typed.dtype.name
    wide = np.complex128 if rtype.startswith('complex') else np.float64
    if rtype.startswith(('int', 'uint', 'bool')):
        ref = typed.astype(np.float64)
        mag = np.zeros_like(ref)
    else:
        ref = np.asarray(call(a.astype(wide), None if one else b.astype(wide)))
        mag = np.asarray(call(np.abs(a), None if one else np.abs(b)), dtype=np.float64)
    if op == 'diagonal': mag = np.zeros_like(mag)  # a view: exact
    out = np.empty(ref.size * 2) if rtype.startswith('complex') else ref.ravel().astype(np.float64)
    if rtype.startswith('complex'):
        out[0::2] = ref.ravel().real
        out[1::2] = ref.ravel().imag
    out.tofile(f'{d}/{name}.ref')
    mag.ravel().astype(np.float64).tofile(f'{d}/{name}.mag')
    if op in ('matmul', 'dot', 'inner'):
        k = a.shape[-1] if a.ndim else 1
    elif op == 'vdot':
        k = a.size
    elif op == 'trace':
        k = np.diagonal(a, **kw).shape[-1]
    elif op in ('outer', 'diagonal', 'kron'):
        k = 1
    elif op == 'einsum':  # the product of the summed labels' sizes
        ins = subs.split('->')[0].split(',')
        outl = subs.split('->')[1] if '->' in subs else ''.join(sorted(c for c in set(''.join(ins)) if ''.join(ins).count(c) == 1))
        size = {}
        for term, x in zip(ins, (a, b)):
            for c, n in zip(term, x.shape): size[c] = n
        k = int(np.prod([n for c, n in size.items() if c not in outl]))
    elif op == 'matrix_power':  # n - 1 products at most, each of length m: a bound's k
        k = a.shape[-1] * max(1, kw['n'] - 1)
    else:
        ax = kw.get('axes', 2)
        k = int(np.prod([a.shape[i] for i in ax[0]])) if isinstance(ax, tuple) else int(np.prod(a.shape[a.ndim - ax:]))
    meta.write(f"{name} {rtype} {k} {' '.join(str(x) for x in typed.shape)}\n")
meta.close()
print('ok')
)PY";

struct Answer {
  std::string dtype;
  std::int64_t k = 0;
  Shape shape;
  std::vector<double> ref, mag;
};

struct Oracle {
  std::string why_not;
  std::map<std::string, Answer> answers;
  std::map<std::string, std::pair<Array, Array>> inputs; // the same inputs lazyfuse computes on
};

std::vector<double> read_doubles(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<double> v;
  double x;
  while (f.read(reinterpret_cast<char*>(&x), sizeof x)) v.push_back(x);
  return v;
}

Oracle run_oracle() {
  Oracle o;
  o.why_not = lazyfuse_test::python_missing();
  if (!o.why_not.empty()) return o;
  const char* python = lazyfuse_test::oracle_python();
  const std::string dir = lazyfuse_test::fresh_oracle_dir("matmul");
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::ofstream list(dir + "/cases.txt");
  for (const Case& c : cases()) {
    auto write = [&](const std::string& suffix, const std::vector<double>& v) {
      std::ofstream f(dir + "/" + c.name + suffix, std::ios::binary);
      f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(double)));
    };
    std::vector<double> va = draw(c.ta, graph::shape_size(c.sa), rng, c.name);
    Array a = make_array(c.ta, c.sa, va);
    write(".a", va);
    Array b;
    if (!one_operand(c)) {
      std::vector<double> vb = draw(c.tb, graph::shape_size(c.sb), rng, c.name);
      b = make_array(c.tb, c.sb, vb);
      write(".b", vb);
    }
    o.inputs[c.name] = {a, b};
    list << c.name << '\t' << c.op << '\t' << dtype_name(c.ta) << '\t' << shape_text(c.sa) << '\t' << dtype_name(c.tb)
         << '\t' << shape_text(c.sb) << '\t' << c.args << '\t' << c.view_a << '\t' << c.view_b << '\n';
  }
  list.close();
  o.why_not = lazyfuse_test::run_oracle_script(python, dir, kScript, {dir});
  if (!o.why_not.empty()) return o;
  std::ifstream meta(dir + "/meta.txt");
  for (std::string line; std::getline(meta, line);) {
    std::istringstream in(line);
    std::string name;
    Answer a;
    in >> name >> a.dtype >> a.k;
    for (std::int64_t d; in >> d;) a.shape.push_back(d);
    a.ref = read_doubles(dir + "/" + name + ".ref");
    a.mag = read_doubles(dir + "/" + name + ".mag");
    o.answers[name] = std::move(a);
  }
  std::filesystem::remove_all(dir);
  return o;
}

const Oracle& oracle() {
  static const Oracle o = run_oracle();
  return o;
}

bool tf32_active() {
  const char* v = std::getenv("LAZYFUSE_TF32");
  return backend() == Backend::Cuda && v && std::string(v) == "1";
}

// Roundoff of the type a result of `t` accumulates in, and of its own rounding.
double bound_factor(DType t, std::int64_t k) {
  const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
  const double kk = double(k + 2);
  switch (t) {
  case DType::Float64: return kk * u64;
  case DType::Complex128: return 2 * kk * u64;
  case DType::Float32: return kk * u32 + (tf32_active() ? std::ldexp(1.0, -10) : 0);
  case DType::Complex64: return 2 * (kk * u32 + (tf32_active() ? std::ldexp(1.0, -10) : 0));
  case DType::Float16: return kk * u32 + std::ldexp(1.0, -11);
  case DType::BFloat16: return kk * u32 + std::ldexp(1.0, -8);
  default: return 0;
  }
}

class MatmulOracle : public testing::TestWithParam<std::size_t> {};

TEST_P(MatmulOracle, AgreesWithNumPy) {
  LAZYFUSE_NEED_NUMPY(oracle().why_not);
  const Case& c = cases()[GetParam()];
  const auto& [a_in, b_in] = oracle().inputs.at(c.name);
  const Answer& want = oracle().answers.at(c.name);
  const Array a = apply_view(a_in, c.view_a);
  const Array b = one_operand(c) ? b_in : apply_view(b_in, c.view_b);
  const Array r = run_op(c, a, b);
  SCOPED_TRACE(c.name + ", " + lazyfuse_test::seed_note());
  EXPECT_EQ(std::string(dtype_name(r.dtype())), want.dtype);
  ASSERT_EQ(r.shape(), want.shape);
  const double factor = bound_factor(r.dtype(), want.k);
  if (is_complex(r.dtype())) {
    auto got = r.astype(DType::Complex128).get<std::complex<double>>();
    ASSERT_EQ(want.ref.size(), 2 * got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::complex<double> ref(want.ref[2 * i], want.ref[2 * i + 1]);
      EXPECT_LE(std::abs(got.data()[i] - ref), factor * want.mag[i] + 1e-300) << "element " << i;
    }
  } else {
    auto got = r.astype(DType::Float64).get<double>();
    ASSERT_EQ(want.ref.size(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_LE(std::abs(got.data()[i] - want.ref[i]), factor * want.mag[i])
          << "element " << i << ": got " << got.data()[i] << ", NumPy " << want.ref[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MatmulOracle, testing::Range<std::size_t>(0, cases().size()),
                         [](const testing::TestParamInfo<std::size_t>& info) { return cases()[info.param].name; });

// ---- shape rules and errors -----------------------------------------------------------------------------------

template <class E> std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(MatmulErrors, ScalarsRaiseAsNumPy) {
  const Array s = asarray({2.0f}).reshape({}), m = ones({3, 3});
  EXPECT_THROW(matmul(s, m), ShapeError);
  EXPECT_THROW(matmul(m, s), ShapeError);
  // dot and inner multiply scalars, as NumPy's do.
  EXPECT_EQ(dot(s, m).shape(), (Shape{3, 3}));
  EXPECT_EQ(inner(m, s).shape(), (Shape{3, 3}));
}

TEST(MatmulErrors, MismatchNamesBothShapesAndAxes) {
  const Array a = ones({2, 3, 4}), b = ones({5, 6});
  const std::string m = message_of<ShapeError>([&] { matmul(a, b); });
  EXPECT_NE(m.find("(2, 3, 4)"), std::string::npos) << m;
  EXPECT_NE(m.find("(5, 6)"), std::string::npos) << m;
  EXPECT_NE(m.find("axis 2"), std::string::npos) << m;
  EXPECT_NE(m.find("axis 0"), std::string::npos) << m;
  const std::string t = message_of<ShapeError>([&] { tensordot(a, b, {{2}, {1}}); });
  EXPECT_NE(t.find("(2, 3, 4)"), std::string::npos) << t;
  EXPECT_NE(t.find("(5, 6)"), std::string::npos) << t;
  EXPECT_THROW(matmul(ones({2, 3, 4}), ones({3, 4, 5})), ShapeError); // batch 2 against 3
  EXPECT_THROW(vdot(ones({3}), ones({4})), ShapeError);
  EXPECT_THROW(tensordot(a, b, {{0, 1}, {0}}), ShapeError);
  EXPECT_THROW(tensordot(a, a, {{0, 0}, {0, 1}}), IndexError);
  EXPECT_THROW(diagonal(ones({3})), ShapeError);
  EXPECT_THROW(diagonal(ones({3, 3}), 0, 1, -1), Error);
  EXPECT_THROW(matmul(Array(), b), Error);
  const std::string p = message_of<ShapeError>([&] { linalg::matrix_power(ones({2, 3}), 2); });
  EXPECT_NE(p.find("(2, 3)"), std::string::npos) << p;
  EXPECT_THROW(linalg::matrix_power(ones({3}), 2), ShapeError);
  const std::string neg = message_of<Error>([&] { linalg::matrix_power(ones({3, 3}), -1); });
  EXPECT_NE(neg.find("inverse"), std::string::npos) << neg;
  EXPECT_THROW(kron(Array(), b), Error);
  const std::string e = message_of<ShapeError>([&] { einsum("ij,jk->ik", {ones({2, 3}), ones({4, 5})}); });
  EXPECT_NE(e.find("label 'j'"), std::string::npos) << e;
  EXPECT_NE(e.find("(4, 5)"), std::string::npos) << e;
  EXPECT_THROW(einsum("ijk,jk", {ones({2, 3}), ones({3, 2})}), ShapeError);
  EXPECT_THROW(einsum("ij,jk", {ones({2, 3})}), Error);
  EXPECT_THROW(einsum("ij->ix", {ones({2, 3})}), Error);
  EXPECT_THROW(einsum("ij->ii", {ones({2, 3})}), Error);
  EXPECT_THROW(einsum("i1", {ones({2, 3})}), Error);
  const std::string dots = message_of<Error>([&] { einsum("...i...->i", {ones({2, 3})}); });
  EXPECT_NE(dots.find("more than one ellipsis"), std::string::npos) << dots;
  EXPECT_THROW(einsum("..i->i", {ones({2, 3})}), Error);
  const std::string no_out = message_of<Error>([&] { einsum("...i->i", {ones({2, 3})}); });
  EXPECT_NE(no_out.find("no '...'"), std::string::npos) << no_out;
  EXPECT_THROW(einsum("...ij,...jk", {ones({2, 3, 4}), ones({3, 4, 5})}), ShapeError); // batch 2 against 3
  EXPECT_THROW(einsum("ijk...", {ones({2, 3})}), ShapeError);
}

// ---- laziness, views without copies, kernel and library-call counts ----------------------------------------------

struct Counts {
  std::uint64_t kernels = 0, library = 0;
};
Counts counted(const std::function<void()>& f) {
  const auto before = kernel_cache_stats();
  f();
  const auto after = kernel_cache_stats();
  return {after.kernels_launched - before.kernels_launched, after.library_calls - before.library_calls};
}

Array ready(Shape s, DType t = DType::Float32, double start = 0) {
  Array x = (arange(start, start + double(graph::shape_size(s))) / 7.0).reshape(std::move(s)).astype(t);
  x.eval();
  return x;
}

TEST(MatmulCounts, StaysLazy) {
  const Array a = ready({8, 16}), b = ready({16, 4});
  const Counts c = counted([&] {
    Array p = matmul(a, b);
    Array q = p * 2.0;
  });
  EXPECT_EQ(c.kernels, 0u);
  EXPECT_EQ(c.library, 0u);
}

TEST(MatmulCounts, ViewsAreReadInPlace) {
  const Array a = ready({8, 16}), b = ready({16, 4}), at = ready({16, 8}), batch = ready({3, 8, 16});
  const Array rows = ready({16, 16}), wide = ready({8, 32}), bt = ready({4, 16});
  const std::vector<std::pair<const char*, std::function<Array()>>> products = {
      {"contiguous", [&] { return matmul(a, b); }},
      {"transposed a", [&] { return matmul(at.transpose(), b); }},
      {"transposed b", [&] { return matmul(a, bt.transpose()); }},
      {"every second row", [&] { return matmul(rows(slice(none, none, 2), slice(none, none)), b); }},
      {"column slice", [&] { return matmul(wide(slice(none, none), slice(4, 20)), b); }},
      {"broadcast batch", [&] { return matmul(batch, b); }},
      {"broadcast view",
       [&] {
         return matmul(broadcast_to(a, {5, 8, 16}), b);
       }},
  };
  for (auto& [name, make] : products) {
    Array p;
    const Counts c = counted([&] {
      p = make();
      p.eval();
    });
    EXPECT_EQ(c.kernels, 0u) << name;
    EXPECT_EQ(c.library, 1u) << name;
  }
}

TEST(MatmulCounts, PendingWorkOrUnreadableViewIsOneKernel) {
  const Array a = ready({8, 16}), b = ready({16, 4}), a2 = ready({16, 8});
  const std::vector<std::pair<const char*, std::function<Array()>>> products = {
      {"(a2 * 2).T @ b", [&] { return matmul((a2 * 2.0).transpose(), b); }},
      {"flip(a) @ b", [&] { return matmul(flip(a, 1), b); }},
      {"exp(a) @ b", [&] { return matmul(exp(a), b); }},
  };
  for (auto& [name, make] : products) {
    Array p;
    const Counts c = counted([&] {
      p = make();
      p.eval();
    });
    EXPECT_EQ(c.kernels, 1u) << name;
    EXPECT_EQ(c.library, 1u) << name;
  }
  // Both operands pending: one kernel each, then the product.
  const Counts both = counted([&] { matmul(exp(a), b + 1.0).eval(); });
  EXPECT_EQ(both.kernels, 2u);
  EXPECT_EQ(both.library, 1u);
  // A scale folds into alpha: no kernel (tests/test_matmul_epilogue.cpp has the rest of the folding).
  const Counts scaled = counted([&] { matmul(a * 2.0, b + 1.0).eval(); });
  EXPECT_EQ(scaled.kernels, 1u);
  EXPECT_EQ(scaled.library, 1u);
}

TEST(MatmulCounts, ProductFeedsAFusedKernel) {
  const Array a = ready({8, 16}), b = ready({16, 4}), c = ready({8, 4});
  const Counts n = counted([&] { (exp(matmul(a, b)) * 2.0 + c).eval(); });
  EXPECT_EQ(n.kernels, 1u);
  EXPECT_EQ(n.library, 1u);
  // 2 * (a @ b) + c is the library call alone (alpha, beta, C != D).
  const Counts folded = counted([&] { (matmul(a, b) * 2.0 + c).eval(); });
  EXPECT_EQ(folded.kernels, 0u);
  EXPECT_EQ(folded.library, 1u);
  // A chain of products: each a library call, nothing copied between them.
  const Array w = ready({4, 4});
  const Counts chain = counted([&] { matmul(matmul(matmul(a, b), w), w.transpose()).eval(); });
  EXPECT_EQ(chain.kernels, 0u);
  EXPECT_EQ(chain.library, 3u);
  // A product and another root of the same shape: the product is never inside the roots' kernel.
  Array p = matmul(a, b), q = c + 1.0;
  const Counts roots = counted([&] { eval(p, q, p + q); });
  EXPECT_EQ(roots.library, 1u);
  EXPECT_EQ(roots.kernels, 1u);
}

TEST(MatmulCounts, IntegerProductsOnTheGpuAreOneKernel) {
  const Array a = ready({8, 16}, DType::Int32), b = ready({16, 4}, DType::Int32);
  const Counts c = counted([&] { matmul(a, b).eval(); });
  if (backend() == Backend::Cuda) {
    EXPECT_EQ(c.kernels, 1u); // the generated reduction kernel
    EXPECT_EQ(c.library, 0u);
  } else {
    EXPECT_EQ(c.kernels, 0u); // the blocked loop
    EXPECT_EQ(c.library, 1u);
  }
}

TEST(MatmulViews, DiagonalIsAViewOfTheBuffer) {
  const Array m = ready({4, 5});
  Array d;
  const Counts c = counted([&] { d = diagonal(m, 1); });
  EXPECT_EQ(c.kernels, 0u);
  const auto& node = detail::graph_node(d);
  EXPECT_EQ(node->kind, graph::NodeKind::Buffer); // folded into the buffer's strides: no copy, no kernel
  EXPECT_EQ(node->buffer()->storage, detail::graph_node(m)->buffer()->storage);
  EXPECT_EQ(d.shape(), (Shape{4}));
}

TEST(MatmulEmpty, EmptyAndZeroLengthContractions) {
  const Counts c = counted([&] {
    Array z = matmul(ready({3, 0}), ready({0, 2}));
    auto v = z.get<float>();
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v.data()[i], 0.0f);
    EXPECT_EQ(matmul(ready({0, 3}), ready({3, 2})).shape(), (Shape{0, 2}));
  });
  EXPECT_EQ(c.library, 0u);
}

// Three operands contract left to right, a pair at a time, each pair on one product: the same as the matmuls.
TEST(MatmulEinsum, ThreeOperandsContractPairwiseOnProducts) {
  const Array a = ready({3, 4}), b = ready({4, 5}, DType::Float32, 1), c = ready({5, 2}, DType::Float32, 2);
  Array r;
  const Counts n = counted([&] {
    r = einsum("ij,jk,kl->il", {a, b, c});
    r.eval();
  });
  EXPECT_EQ(n.library, 2u);
  const auto got = r.get<float>(), want = matmul(matmul(a, b), c).get<float>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
  // A label shared by the first and the third operand is kept through the first pair.
  const Array x = ready({3, 4}), y = ready({4}), z = ready({3}, DType::Float32, 5);
  const auto g = einsum("ij,j,i->", {x, y, z}).get<float>();
  double w = 0;
  const auto hx = x.get<float>(), hy = y.get<float>(), hz = z.get<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) w += double(hx[std::size_t(i * 4 + j)]) * hy[std::size_t(j)] * hz[std::size_t(i)];
  EXPECT_NEAR(g[0], w, 1e-5 * std::abs(w));
}

} // namespace

// BLAS is opened at the first product it runs, never when lazyfuse loads: OpenBLAS starts its threads in a library
// constructor, and they spin for about 0.1 s (runtime/CMakeLists.txt). So no BLAS may be mapped into a process
// that has run no product, and on the CPU backend a float32 product opens it (in a build that found one).
TEST(CpuProducts, BlasIsOpenedByTheFirstProductNotAtLoad) {
  if (runtime::cpu_gemm::blas_opened())
    GTEST_SKIP() << "a product ran earlier in this process (ctest runs this test alone, where it checks)";
  std::vector<std::string> mapped_blas;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("blas") != std::string::npos) static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &mapped_blas);
  EXPECT_TRUE(mapped_blas.empty()) << "mapped before any product: " << mapped_blas.front();
  const Array a = arange(0.0, 12.0, 1.0).astype(DType::Float32).reshape({3, 4});
  const auto c = matmul(a, a.T()).get<float>();
  EXPECT_FLOAT_EQ(c[0], 0 * 0 + 1 * 1 + 2 * 2 + 3 * 3);
  const bool opened = runtime::cpu_gemm::blas_opened();
  // description() opens the library itself: asked after.
  const bool built_with_blas =
      runtime::cpu_gemm::description().find("blocked loop (built without BLAS)") == std::string::npos;
  EXPECT_EQ(opened, backend() == Backend::Cpu && built_with_blas);
}
