// Scratch: compile k41.cu (grouped-order int32 column max) with NVRTC as lazyfuse does, run on the GPU.
#include <cuda.h>
#include <nvrtc.h>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s; cuGetErrorString(r_, &s); printf("CUDA %s: %s\n", #x, s); exit(1);} } while (0)
static std::string replace_all(std::string s, const std::string& a, const std::string& b) {
  for (size_t p = 0; (p = s.find(a, p)) != std::string::npos; p += b.size()) s.replace(p, a.size(), b);
  return s;
}
static std::vector<char> compile(const std::string& src, bool debug, const std::string& extra, std::string& log) {
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, src.c_str(), "k.cu", 0, nullptr, nullptr);
  std::vector<const char*> opts = {"--std=c++17", "-arch=sm_90", "--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "-default-device"};
  if (debug) { opts.push_back("-G"); opts.push_back("-lineinfo"); }
  if (!extra.empty()) opts.push_back(extra.c_str());
  nvrtcResult rc = nvrtcCompileProgram(prog, (int)opts.size(), opts.data());
  size_t n; nvrtcGetProgramLogSize(prog, &n); log.resize(n); nvrtcGetProgramLog(prog, log.data());
  if (rc != NVRTC_SUCCESS) { printf("compile failed\n%s\n", log.c_str()); exit(1); }
  nvrtcGetCUBINSize(prog, &n); std::vector<char> cubin(n); nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  return cubin;
}
int main(int argc, char** argv) {
  std::ifstream f(argc > 1 ? argv[1] : "k41.cu"); std::stringstream ss; ss << f.rdbuf();
  const std::string base = ss.str();
  std::string name = base.substr(base.find("lf_k"), 20);
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  std::vector<int> in = {-5, 9, 8, -7, -8, -5, -8, 3, -9, 8, -9, 2, -2, 1, -6, -7, -4, -7, 8, -9, -6, -4, -4, -8, 7, 6, -6, 9, 6, 6, 3, 6, -8, 4, -4, 5};
  std::vector<int> want(6, -1000);
  for (int r = 0; r < 6; ++r) for (int c = 0; c < 6; ++c) want[c] = std::max(want[c], -in[r * 6 + c]);
  struct Variant { const char* name; std::string src; bool debug; std::string extra; };
  std::vector<Variant> vs = {
    {"as-is", base, false, ""},
    {"asm setp selp max", replace_all(base, "LF_HD lf_i32 lf_maximum(lf_i32 a, lf_i32 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }", "LF_HD lf_i32 lf_maximum(lf_i32 a, lf_i32 b) { lf_i32 r; asm(\"{ .reg .pred p; setp.gt.s32 p, %2, %1; selp.b32 %0, %2, %1, p; }\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }"), false, ""},
    {"asm not add neg", replace_all(base, "LF_HD lf_i32 lf_negative(lf_i32 a) { return (lf_i32)((unsigned)0 - (unsigned)a); }", "LF_HD lf_i32 lf_negative(lf_i32 a) { lf_i32 r; asm(\"{ .reg .b32 t; not.b32 t, %1; add.s32 %0, t, 1; }\" : \"=r\"(r) : \"r\"(a)); return r; }"), false, ""},
    {"asm sub neg", replace_all(base, "LF_HD lf_i32 lf_negative(lf_i32 a) { return (lf_i32)((unsigned)0 - (unsigned)a); }", "LF_HD lf_i32 lf_negative(lf_i32 a) { lf_i32 r; asm(\"sub.s32 %0, 0, %1;\" : \"=r\"(r) : \"r\"(a)); return r; }"), false, ""},
    {"bit trick max", replace_all(base, "LF_HD lf_i32 lf_maximum(lf_i32 a, lf_i32 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }", "LF_HD lf_i32 lf_maximum(lf_i32 a, lf_i32 b) { return a ^ ((a ^ b) & -(lf_i32)(b > a)); }"), false, ""},
    {"asm max.s32", replace_all(base, "LF_HD lf_i32 lf_maximum(lf_i32 a, lf_i32 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }", "LF_HD lf_i32 lf_maximum(lf_i32 a, lf_i32 b) { lf_i32 r; asm(\"max.s32 %0, %1, %2;\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }"), false, ""},
    {"ptxas O2", base, false, "--ptxas-options=-O2"},
    {"ptxas O1", base, false, "--ptxas-options=-O1"},
    {"ptxas O0", base, false, "--ptxas-options=-O0"},
  };
  CUdeviceptr din, dout, dpart, dtick;
  CK(cuMemAlloc(&din, 36 * 4)); CK(cuMemAlloc(&dout, 6 * 4)); CK(cuMemAlloc(&dpart, 6 * 64 * 16)); CK(cuMemAlloc(&dtick, 6 * 4));
  CK(cuMemcpyHtoD(din, in.data(), 36 * 4));
  int failures = 0;
  for (auto& v : vs) {
    if (std::string(v.name) != "as-is" && v.src == base && v.extra.empty()) printf("%s: NO CHANGE\n", v.name);
    std::string log; auto cubin = compile(v.src, v.debug, v.extra, log);
    if (argc > 2) { std::string p = std::string(argv[2]) + "/" + replace_all(v.name, " ", "_") + ".cubin"; std::ofstream(p, std::ios::binary).write(cubin.data(), cubin.size()); }
    CUmodule mod; CK(cuModuleLoadData(&mod, cubin.data())); CUfunction fn; CK(cuModuleGetFunction(&fn, mod, name.c_str()));
    for (int block : {32, 256}) for (int splits : {1, 2}) {
      CK(cuMemsetD32(dout, 0x7f7f7f7f, 6)); CK(cuMemsetD32(dtick, 0, 6));
      int n = 6, p0 = 6, p1 = 6;
      void* args[] = {&din, &dout, &n, &p0, &p1, &dpart, &dtick, &splits};
      CK(cuLaunchKernel(fn, 6 * splits, 1, 1, block, 1, 1, 0, nullptr, args, nullptr)); CK(cuCtxSynchronize());
      std::vector<int> got(6); CK(cuMemcpyDtoH(got.data(), dout, 24));
      bool ok = got == want; failures += !ok;
      printf("%-18s block %3d splits %d: %s [", v.name, block, splits, ok ? "ok  " : "FAIL");
      for (int c = 0; c < 6; ++c) printf("%d%s", got[c], c < 5 ? " " : "]");
      printf(" want [%d %d %d %d %d %d]\n", want[0], want[1], want[2], want[3], want[4], want[5]);
    }
    cuModuleUnload(mod);
  }
  printf("failures: %d\n", failures);
  return 0;
}
