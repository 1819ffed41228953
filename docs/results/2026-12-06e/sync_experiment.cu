// What does reading a few bytes back cost a call that must know them (bincount's range, a selection's count,
// unique's)? A standalone experiment, not part of the library. One call = the clearing memset, a bincount-like kernel
// over n int32 values in [0, 4096) (shared counters, then the range), then the read, by one of these mechanisms:
//   none        no read (the calls queue behind each other: the bound)
//   pageable    cudaMemcpyAsync into a pageable host word, cudaStreamSynchronize (the library's download today)
//   pinned      the same into page-locked host memory
//   mapped      the kernel's last block writes the range into mapped page-locked memory; cudaStreamSynchronize
//   mapped-spin the same, the host spinning on a sequence number the last block writes after the range
//   pinned-evq  pinned copy, an event recorded after it, the host polling cudaEventQuery
// each with and without the memset (the kernel alone: results wrong, the launch's share). n = 2^25 (the bench) and
// 2^16 (the round trip alone). CUDA events around 20 calls and the host's clock, median of 7 trials.
//   nvcc -O3 -std=c++17 -arch=sm_90 sync_experiment.cu -o sync_experiment && ./sync_experiment
#include <cuda_runtime.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                                     \
  do {                                                                                                               \
    cudaError_t e_ = (x);                                                                                            \
    if (e_ != cudaSuccess) {                                                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                        \
      std::exit(1);                                                                                                  \
    }                                                                                                                \
  } while (0)

constexpr int kThreads = 1024, kBins = 16384;

struct Mapped {
  unsigned long long range[2];
  unsigned long long sequence;
};

// counts[kBins] then range[2] (cleared together), ticket (self-resetting).
__global__ void __launch_bounds__(kThreads) count_kernel(const int* __restrict__ x, long long n,
                                                         unsigned long long* counts, unsigned long long* range,
                                                         unsigned* ticket, Mapped* mapped,
                                                         unsigned long long sequence) {
  extern __shared__ unsigned local[];
  __shared__ unsigned long long block_keys[2];
  __shared__ bool last;
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) local[b] = 0;
  if (threadIdx.x == 0) block_keys[0] = block_keys[1] = 0;
  __syncthreads();
  int lo = 0x7fffffff, hi = -0x7fffffff - 1;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const int4* xv = reinterpret_cast<const int4*>(x);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += stride) {
    const int4 v = __ldcs(xv + i);
    const int e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      lo = min(lo, e[k]);
      hi = max(hi, e[k]);
      if ((unsigned)e[k] < kBins) atomicAdd(local + e[k], 1u);
    }
  }
  unsigned long long lk = ~((unsigned long long)(long long)lo ^ (1ull << 63)),
                     hk = (unsigned long long)(long long)hi ^ (1ull << 63);
  for (int o = 16; o > 0; o >>= 1) {
    lk = max(lk, __shfl_xor_sync(~0u, lk, o));
    hk = max(hk, __shfl_xor_sync(~0u, hk, o));
  }
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    atomicMax(block_keys, lk);
    atomicMax(block_keys + 1, hk);
  }
  for (int b = threadIdx.x; b < kBins; b += blockDim.x)
    if (local[b]) atomicAdd(counts + b, (unsigned long long)local[b]);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMax(range, block_keys[0]);
    atomicMax(range + 1, block_keys[1]);
    if (mapped) {
      __threadfence();
      last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
  }
  __syncthreads();
  if (mapped && last && threadIdx.x == 0) {
    *ticket = 0;
    const unsigned long long r0 = atomicAdd(range, 0ull), r1 = atomicAdd(range + 1, 0ull);
    volatile Mapped* m = mapped;
    m->range[0] = r0;
    m->range[1] = r1;
    __threadfence_system();
    m->sequence = sequence;
  }
}

enum Mode { None, Pageable, Pinned, MappedSync, MappedSpin, PinnedEventQuery };
const char* names[] = {"none", "pageable", "pinned", "mapped", "mapped-spin", "pinned-evq"};

int main() {
  int sms = 0;
  CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long big = 1ll << 25;
  std::vector<int> h(big);
  unsigned seed = 12345u;
  for (auto& v : h) {
    seed = seed * 1664525u + 1013904223u;
    v = int(seed >> 20); // [0, 4096)
  }
  int* x;
  unsigned long long* counts;
  unsigned* ticket;
  CHECK(cudaMalloc(&x, big * 4));
  CHECK(cudaMalloc(&counts, (kBins + 2) * 8));
  CHECK(cudaMalloc(&ticket, 4));
  CHECK(cudaMemset(ticket, 0, 4));
  CHECK(cudaMemcpy(x, h.data(), big * 4, cudaMemcpyHostToDevice));
  Mapped* mapped_host;
  CHECK(cudaHostAlloc(&mapped_host, sizeof(Mapped), cudaHostAllocMapped));
  std::memset(mapped_host, 0, sizeof(Mapped));
  Mapped* mapped_dev;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_dev), mapped_host, 0));
  unsigned long long* pinned;
  CHECK(cudaMallocHost(&pinned, 16));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1, q;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventCreateWithFlags(&q, cudaEventDisableTiming));
  int per_sm = 0;
  const int shared = kBins * 4;
  CHECK(cudaFuncSetAttribute(count_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, count_kernel, kThreads, shared));
  std::printf("%d SMs, %d blocks of %d a multiprocessor\n", sms, per_sm, kThreads);
  unsigned long long sequence = 0;
  for (long long n : {big, 1ll << 16}) {
    const int grid = (int)std::min<long long>((n / 4 + kThreads * 4 - 1) / (kThreads * 4), (long long)sms * per_sm);
    std::printf("\n== n = %lld int32 (%.1f MB), grid %d ==\n", n, n * 4 / 1e6, grid);
    std::printf("%-12s %-8s %10s %10s %10s\n", "read", "memset", "event ms", "host ms", "check");
    for (int mode = None; mode <= PinnedEventQuery; ++mode)
      for (int memset_too : {1, 0}) {
        bool ok = true;
        auto call = [&] {
          if (memset_too) CHECK(cudaMemsetAsync(counts, 0, (kBins + 2) * 8, s));
          const bool to_mapped = mode == MappedSync || mode == MappedSpin;
          ++sequence;
          count_kernel<<<grid, kThreads, shared, s>>>(x, n, counts, counts + kBins, ticket,
                                                 to_mapped ? mapped_dev : nullptr, sequence);
          unsigned long long got[2] = {0, 0}, page[2];
          switch (mode) {
          case None:
            return;
          case Pageable:
            CHECK(cudaMemcpyAsync(page, counts + kBins, 16, cudaMemcpyDeviceToHost, s));
            CHECK(cudaStreamSynchronize(s));
            std::memcpy(got, page, 16);
            break;
          case Pinned:
            CHECK(cudaMemcpyAsync(pinned, counts + kBins, 16, cudaMemcpyDeviceToHost, s));
            CHECK(cudaStreamSynchronize(s));
            std::memcpy(got, pinned, 16);
            break;
          case MappedSync:
            CHECK(cudaStreamSynchronize(s));
            std::memcpy(got, (const void*)mapped_host->range, 16);
            break;
          case MappedSpin: {
            const volatile unsigned long long* seq = &mapped_host->sequence;
            long spins = 0;
            while (*seq != sequence)
              if (++spins % 4096 == 0 && cudaStreamQuery(s) == cudaSuccess && *seq != sequence) {
                std::fprintf(stderr, "the stream finished without the sequence number\n");
                std::exit(1);
              }
            std::atomic_thread_fence(std::memory_order_acquire);
            got[0] = ((volatile Mapped*)mapped_host)->range[0];
            got[1] = ((volatile Mapped*)mapped_host)->range[1];
            break;
          }
          case PinnedEventQuery:
            CHECK(cudaMemcpyAsync(pinned, counts + kBins, 16, cudaMemcpyDeviceToHost, s));
            CHECK(cudaEventRecord(q, s));
            while (cudaEventQuery(q) == cudaErrorNotReady) {
            }
            std::memcpy(got, pinned, 16);
            break;
          }
          // The range of [0, 4096): keys of 0 and 4095 (when the memset cleared them first).
          const long long smallest = (long long)(~got[0] ^ (1ull << 63)), largest = (long long)(got[1] ^ (1ull << 63));
          if (memset_too && (smallest < 0 || smallest > 2 || largest < 4093 || largest > 4095)) ok = false;
        };
        for (int w = 0; w < 3; ++w) call();
        CHECK(cudaStreamSynchronize(s));
        std::vector<float> ev;
        std::vector<double> host;
        for (int trial = 0; trial < 7; ++trial) {
          const auto t0 = std::chrono::steady_clock::now();
          CHECK(cudaEventRecord(e0, s));
          for (int c = 0; c < 20; ++c) call();
          CHECK(cudaEventRecord(e1, s));
          CHECK(cudaEventSynchronize(e1));
          const auto t1 = std::chrono::steady_clock::now();
          float ms = 0;
          CHECK(cudaEventElapsedTime(&ms, e0, e1));
          ev.push_back(ms / 20);
          host.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / 20);
        }
        std::sort(ev.begin(), ev.end());
        std::sort(host.begin(), host.end());
        std::printf("%-12s %-8s %10.4f %10.4f %10s\n", names[mode], memset_too ? "yes" : "no", ev[3], host[3],
                    mode == None || !memset_too ? "-" : ok ? "ok" : "WRONG");
      }
  }
  return 0;
}
