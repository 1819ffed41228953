// NVRTC compiles on the CPU, so these run on machines without a GPU too.
#include "codegen/Nvrtc.h"

#include <lazyfuse/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace lf = lazyfuse;
using lf::codegen::compile_cuda;
using lf::codegen::CompileOptions;
using lf::codegen::nvrtc_options;

namespace {

// The shape of a generated elementwise kernel: about ten float ops, no includes.
const char* const kElementwise = R"(
extern "C" __global__ void lf_elementwise(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  float t = x * y + 1.5f;
  t = t - x / (y + 2.0f);
  t = t * t + y;
  t = fmaxf(t, -x) * 0.5f;
  out[i] = t + sqrtf(fabsf(x)) - y * 3.0f;
}
)";

const char* const kBroken = "extern \"C\" __global__ void k(float* p) {\n  p[0] = 1.0f\n  undeclared_thing;\n}\n";

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

TEST(Nvrtc, VersionIsRecent) {
  EXPECT_GT(lf::codegen::nvrtc_version(), 12000);
  EXPECT_EQ(lf::codegen::nvrtc_version() % 10, 0);
}

TEST(Nvrtc, OptionsHaveArchAndNoFastMath) {
  CompileOptions opt;
  auto o = nvrtc_options(opt);
  ASSERT_GE(o.size(), 7u);
  EXPECT_EQ(o[0], "--std=c++17");
  EXPECT_EQ(o[1], "-arch=sm_90");
  // The numerics policy (docs/semantics.md): no contraction, IEEE division and square root, subnormals kept.
  EXPECT_EQ(o[2], "--fmad=false");
  EXPECT_EQ(o[3], "--prec-div=true");
  EXPECT_EQ(o[4], "--prec-sqrt=true");
  EXPECT_EQ(o[5], "--ftz=false");
  EXPECT_EQ(o[6], "-default-device");
  EXPECT_EQ(o.size(), 7u);

  opt.arch = 80;
  opt.ptx = true;
  opt.debug = true;
  opt.pch = true;
  o = nvrtc_options(opt);
  EXPECT_EQ(o[1], "-arch=compute_80");
  EXPECT_TRUE(contains(o, "-G"));
  EXPECT_TRUE(contains(o, "-lineinfo"));
  if (lf::codegen::nvrtc_version() >= 12080) {
    EXPECT_TRUE(contains(o, "--pch"));
  }
  for (const auto& s : o) {
    EXPECT_EQ(s.find("fast"), std::string::npos) << s;
    EXPECT_NE(s, "--ftz=true") << s;
    EXPECT_NE(s, "--fmad=true") << s;
  }
}

TEST(Nvrtc, OptionsAreDeterministic) {
  CompileOptions opt;
  opt.debug = true;
  EXPECT_EQ(nvrtc_options(opt), nvrtc_options(opt));
}

TEST(Nvrtc, CompilesCubinForSm90) {
  auto k = compile_cuda(kElementwise, "lf_elementwise.cu", CompileOptions{});
  EXPECT_FALSE(k.is_ptx);
  ASSERT_GT(k.image.size(), 4u);
  EXPECT_EQ(k.image[0], '\x7f');
  EXPECT_EQ(k.image[1], 'E');
  EXPECT_EQ(k.image[2], 'L');
  EXPECT_EQ(k.image[3], 'F');
  EXPECT_GT(k.seconds, 0.0);
  // The cubin names the kernel with C linkage, so the runtime can look it up by that name.
  std::string bytes(k.image.begin(), k.image.end());
  EXPECT_NE(bytes.find("lf_elementwise"), std::string::npos);
  std::printf("[ info     ] elementwise cubin sm_90: %zu bytes, compiled in %.3f s\n", k.image.size(), k.seconds);
}

TEST(Nvrtc, CompilesPtxText) {
  CompileOptions opt;
  opt.ptx = true;
  auto k = compile_cuda(kElementwise, "lf_elementwise_ptx.cu", opt);
  EXPECT_TRUE(k.is_ptx);
  ASSERT_FALSE(k.image.empty());
  EXPECT_EQ(k.image.back(), '\0');
  std::string text(k.image.data());
  EXPECT_NE(text.find(".version"), std::string::npos);
  EXPECT_NE(text.find(".target sm_90"), std::string::npos);
  EXPECT_NE(text.find("lf_elementwise"), std::string::npos);
}

// The numerics policy: x * y + c stays a multiply and an add, each rounded (mul.rn/add.rn, which ptxas may not fuse
// either), and the division and square root are the IEEE-rounded instructions. With --fmad=true the same source
// compiles to fma.rn.f32 (about three of them here).
TEST(Nvrtc, PtxHasNoFusedMultiplyAddAndRoundsDivisionAndSqrt) {
  CompileOptions opt;
  opt.ptx = true;
  auto k = compile_cuda(kElementwise, "lf_elementwise_nofma.cu", opt);
  ASSERT_TRUE(k.is_ptx);
  const std::string text(k.image.data());
  EXPECT_EQ(text.find("fma."), std::string::npos) << text;
  EXPECT_NE(text.find("mul.rn.f32"), std::string::npos) << text;
  EXPECT_NE(text.find("add.rn.f32"), std::string::npos) << text;
  EXPECT_NE(text.find("div.rn.f32"), std::string::npos) << text;
  EXPECT_NE(text.find("sqrt.rn.f32"), std::string::npos) << text;
  EXPECT_EQ(text.find(".ftz"), std::string::npos) << text;
}

TEST(Nvrtc, DebugAndPchCompile) {
  CompileOptions opt;
  opt.debug = true;
  opt.pch = true;
  auto k = compile_cuda(kElementwise, "lf_elementwise_dbg.cu", opt);
  ASSERT_GT(k.image.size(), 4u);
  EXPECT_EQ(k.image[1], 'E');
}

TEST(Nvrtc, OtherArchitecture) {
  CompileOptions opt;
  opt.arch = 80;
  auto k = compile_cuda(kElementwise, "lf_elementwise_80.cu", opt);
  ASSERT_GT(k.image.size(), 4u);
  EXPECT_EQ(k.image[0], '\x7f');
}

TEST(Nvrtc, SyntaxErrorThrowsCompileErrorWithoutSource) {
  try {
    compile_cuda(kBroken, "broken_kernel.cu", CompileOptions{});
    FAIL() << "expected CompileError";
  } catch (const lf::CompileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken_kernel.cu"), std::string::npos) << msg;
    EXPECT_NE(msg.find("LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR"), std::string::npos) << msg;
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("broken_kernel.cu"), std::string::npos) << e.log();
    EXPECT_NE(e.options().find("-arch=sm_90"), std::string::npos) << e.options();
    EXPECT_EQ(e.options(),
              "--std=c++17 -arch=sm_90 --fmad=false --prec-div=true --prec-sqrt=true --ftz=false -default-device");
    EXPECT_TRUE(e.source().empty());
    EXPECT_EQ(msg.find("   1| "), std::string::npos);
  }
}

TEST(Nvrtc, SyntaxErrorDumpsNumberedSourceWhenAsked) {
  CompileOptions opt;
  opt.dump_source_on_error = true;
  try {
    compile_cuda(kBroken, "broken_kernel.cu", opt);
    FAIL() << "expected CompileError";
  } catch (const lf::CompileError& e) {
    EXPECT_NE(e.log().find("error"), std::string::npos);
    EXPECT_EQ(e.source(), "   1| extern \"C\" __global__ void k(float* p) {\n"
                          "   2|   p[0] = 1.0f\n"
                          "   3|   undeclared_thing;\n"
                          "   4| }\n");
    EXPECT_NE(std::string(e.what()).find("   3|   undeclared_thing;"), std::string::npos);
  }
}

TEST(Nvrtc, CompileErrorIsALazyfuseError) {
  EXPECT_THROW(compile_cuda("this is not C++", "garbage.cu", CompileOptions{}), lf::Error);
}

TEST(Nvrtc, InvalidArchIsACompileError) {
  CompileOptions opt;
  opt.arch = 1;
  try {
    compile_cuda(kElementwise, "bad_arch.cu", opt);
    FAIL() << "expected CompileError";
  } catch (const lf::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad_arch.cu"), std::string::npos) << e.what();
    EXPECT_NE(e.options().find("-arch=sm_1"), std::string::npos);
  }
}

TEST(Nvrtc, NumberedSource) {
  using lf::codegen::numbered_source;
  EXPECT_EQ(numbered_source(""), "   1| \n");
  EXPECT_EQ(numbered_source("a"), "   1| a\n");
  EXPECT_EQ(numbered_source("a\n"), "   1| a\n");
  EXPECT_EQ(numbered_source("a\n\nb"), "   1| a\n   2| \n   3| b\n");
  std::string many;
  for (int i = 0; i < 10000; ++i) many += "x\n";
  const std::string n = numbered_source(many);
  EXPECT_EQ(n.substr(0, 8), "    1| x");
  EXPECT_NE(n.find("10000| x\n"), std::string::npos);
}
