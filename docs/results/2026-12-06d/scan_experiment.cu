// Why does lazyfuse's tiled float32 scan reach ~41% of copy (2^25) and ~65% (rows of 8192)? A standalone experiment
// (not part of the library). `replica` is the kernel the printer generates for cumsum of float32 (tiles of 256
// threads x 16 values, a ticket per tile, the packed look-back folding forward), with switches: no look-back at all
// (a bound: the tiles' own work, results wrong), other pauses, a minimum of resident blocks. `persistent` keeps the
// same order (its results must equal the replica's bit for bit) but each block loops over tiles and, while it scans
// one, copies the next into shared memory (cp.async), taking that tile's ticket ahead. CUB's InclusiveSum and a copy
// kernel are the references. CUDA events, median of 5 trials of 20 launches.
//   nvcc -O3 -std=c++17 -arch=sm_90 scan_experiment.cu -o scan_experiment && ./scan_experiment
#include <cub/cub.cuh>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
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

constexpr int kTile = 4096, kItems = 16, kWords = 4, kWindow = 128, kSaved = 3;

__device__ __forceinline__ unsigned long long status_word(unsigned flag, float v) {
  return (unsigned long long)flag << 32 | __float_as_uint(v);
}

// Warp 0 of a tile t > first of its row: publish the aggregate, search back, fold forward (the printer's code).
// Returns the prefix in lane 0 (and publishes the inclusive value).
template <int FIRST_NS, int POLL_NS>
__device__ __forceinline__ float look_back(int t, int tr, float agg, volatile unsigned long long* words,
                                           unsigned long long* seen, float* vals, int lane) {
  if (lane == 0) words[t] = status_word(1u, agg);
  if (FIRST_NS > 0) __nanosleep(FIRST_NS);
  const int row0 = t - tr;
  int m = 0, from = 0;
  for (;; ++m) {
    const int q0 = t - (m + 1) * kWindow + lane * kWords;
    unsigned long long x[kWords];
#pragma unroll
    for (int k = 0; k < kWords; ++k) x[k] = q0 + k >= row0 ? words[q0 + k] : 0ull;
    int last = -1;
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      if (q0 + k >= row0)
        while ((x[k] >> 32) == 0ull) {
          if (POLL_NS > 0) __nanosleep(POLL_NS);
          x[k] = words[q0 + k];
        }
      if ((x[k] >> 32) == 2ull) last = k;
      if (m < kSaved) seen[m * kWindow + lane * kWords + k] = x[k];
    }
    const unsigned inc = __ballot_sync(0xffffffffu, last >= 0);
    if (inc != 0u) {
      const int l = 31 - __clz((int)inc);
      from = l * kWords + __shfl_sync(0xffffffffu, last, l);
      break;
    }
  }
  float p = 0.f;
  for (; m >= 0; --m, from = 0) {
    unsigned long long* ws = seen + (m < kSaved ? m : kSaved) * kWindow;
    if (m >= kSaved) {
      const int q0 = t - (m + 1) * kWindow + lane * kWords;
#pragma unroll
      for (int k = 0; k < kWords; ++k) ws[lane * kWords + k] = q0 + k >= row0 ? words[q0 + k] : 0ull;
    }
    __syncwarp();
    int mine = -1;
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      const int q = lane * kWords + k;
      const unsigned long long y = ws[q];
      vals[q] = __uint_as_float((unsigned)y);
      if (q >= from && (y >> 32) == 2ull) mine = q;
    }
    const unsigned incs = __ballot_sync(0xffffffffu, mine >= 0);
    const int restart = incs != 0u ? __shfl_sync(0xffffffffu, mine, 31 - __clz((int)incs)) : -1;
    __syncwarp();
    if (lane == 0) {
      if (restart >= 0) p = vals[restart];
      const int lo = restart >= 0 ? restart + 1 : from;
#pragma unroll 1
      for (int c = lo / 8 * 8; c < kWindow; c += 8) {
        float y[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) y[k] = vals[c + k];
#pragma unroll
        for (int k = 0; k < 8; ++k)
          if (c + k >= lo) p = p + y[k];
      }
    }
    __syncwarp();
  }
  if (lane == 0) words[t] = status_word(2u, p + agg);
  return p;
}

// The tile's own scan: s holds the thread's 16 values (count - first of them valid); returns w (the thread's
// inclusive prefix inside the tile) and leaves each thread's inclusive value in incl.
__device__ __forceinline__ float block_scan(float (&s)[kItems], int items, float* incl, float* warps, int lane,
                                            int warp) {
  float w = 0.f;
#pragma unroll
  for (int k = 0; k < kItems; ++k)
    if (k < items) {
      if (k > 0) s[k] = s[k - 1] + s[k];
      w = s[k];
    }
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float y = __shfl_up_sync(0xffffffffu, w, off);
    if (lane >= off) w = y + w;
  }
  if (lane == 31) warps[warp] = w;
  __syncthreads();
  if (warp == 0) {
    float p = lane < 8 ? warps[lane] : w;
#pragma unroll
    for (int off = 1; off < 8; off <<= 1) {
      const float y = __shfl_up_sync(0xffffffffu, p, off);
      if (lane >= off) p = y + p;
    }
    if (lane < 8) warps[lane] = p;
  }
  __syncthreads();
  incl[threadIdx.x] = warp > 0 ? warps[warp - 1] + w : w;
  __syncthreads();
  return w;
}

// ---- The replica: a block per tile ----
template <bool LOOK, int FIRST_NS, int POLL_NS, int MINB>
__global__ void __launch_bounds__(256, MINB)
    replica(const float* __restrict__ in0, float* __restrict__ out0, int n, int len, unsigned* __restrict__ tickets) {
  __shared__ float incl[256], warps[8], prefix;
  __shared__ unsigned long long seen[(kSaved + 1) * kWindow];
  __shared__ float vals[kWindow];
  __shared__ unsigned tile_sm;
  __shared__ int last_sm;
  __shared__ __align__(16) float xp[kTile + kTile / 32];
  const int tiles_per_row = (len + kTile - 1) / kTile, tiles = n / len * tiles_per_row;
  if (threadIdx.x == 0) tile_sm = atomicAdd(tickets, 1u);
  __syncthreads();
  const int t = (int)tile_sm, tr = t % tiles_per_row, base = t / tiles_per_row * len + tr * kTile;
  const int count = min(len - tr * kTile, kTile), first = (int)threadIdx.x * kItems, items = count - first;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool whole = count - warp * 512 >= 512 && base % 4 == 0;
  const int xw = warp * 512;
  float s[kItems];
  if (whole) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      const float4 g = *reinterpret_cast<const float4*>(in0 + base + o);
      xp[o + (o) / 32] = g.x;
      xp[o + 1 + (o + 1) / 32] = g.y;
      xp[o + 2 + (o + 2) / 32] = g.z;
      xp[o + 3 + (o + 3) / 32] = g.w;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kItems; ++j) s[j] = xp[(first + j) + (first + j) / 32];
    __syncwarp();
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) s[k] = k < items ? in0[base + first + k] : 0.f;
  }
  const float w = block_scan(s, items, incl, warps, lane, warp);
  if (warp == 0) {
    const float agg = incl[(count - 1) / kItems];
    volatile unsigned long long* words = reinterpret_cast<volatile unsigned long long*>(tickets + 2);
    if (tr == 0 || !LOOK) {
      if (lane == 0) words[t] = status_word(2u, agg);
    } else {
      const float p = look_back<FIRST_NS, POLL_NS>(t, tr, agg, words, seen, vals, lane);
      if (lane == 0) prefix = p;
    }
    if (lane == 0) {
      __threadfence();
      last_sm = atomicAdd(tickets + 1, 1u) == (unsigned)(tiles - 1);
    }
  }
  __syncthreads();
  const float excl = threadIdx.x > 0 ? incl[threadIdx.x - 1] : w;
  const bool add_pre = LOOK && tr > 0;
  const float pre = add_pre ? prefix : w;
  float r[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    r[k] = threadIdx.x > 0 ? excl + s[k] : s[k];
    if (add_pre) r[k] = pre + r[k];
    if (!whole && k < items) out0[base + first + k] = r[k];
  }
  if (whole) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) xp[(first + j) + (first + j) / 32] = r[j];
    __syncwarp();
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      float4 g;
      g.x = xp[o + o / 32];
      g.y = xp[o + 1 + (o + 1) / 32];
      g.z = xp[o + 2 + (o + 2) / 32];
      g.w = xp[o + 3 + (o + 3) / 32];
      *reinterpret_cast<float4*>(out0 + base + o) = g;
    }
  }
  if (last_sm)
    for (int q = threadIdx.x; q < 2 * tiles + 2; q += blockDim.x) tickets[q] = 0u;
}

// ---- Persistent: each block loops over tiles; the next tile is copied into shared memory while this one is scanned.
// Shared layout: 4 floats of padding after every 32, so that a thread's 16 values (4 float4 at 16*j) are read without
// bank conflicts and the warp's 16-byte copies keep their alignment.
__device__ __forceinline__ int padded(int o) { return o + (o >> 5) * 4; }
constexpr int kPadded = kTile + kTile / 8; // (the persistent kernel, session 31 call 1)
static_assert(kPadded > kTile, "");

template <bool LOOK, int FIRST_NS, int POLL_NS, int MINB>
__global__ void __launch_bounds__(256, MINB)
    persistent(const float* __restrict__ in0, float* __restrict__ out0, int n, int len, unsigned* __restrict__ tickets) {
  __shared__ __align__(16) float buf[2][kPadded];
  __shared__ float incl[256], warps[8], prefix;
  __shared__ unsigned long long seen[(kSaved + 1) * kWindow];
  __shared__ float vals[kWindow];
  __shared__ int tile_sm[2];
  __shared__ int last_sm;
  const int tiles_per_row = (len + kTile - 1) / kTile, tiles = n / len * tiles_per_row;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int first = (int)threadIdx.x * kItems;
  volatile unsigned long long* words = reinterpret_cast<volatile unsigned long long*>(tickets + 2);
  auto issue = [&](int t, float* dst) {
    const int tr = t % tiles_per_row, base = t / tiles_per_row * len + tr * kTile;
    const int count = min(len - tr * kTile, kTile);
    if (count == kTile && base % 4 == 0) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int o = warp * 512 + (u * 32 + lane) * 4;
        __pipeline_memcpy_async(dst + padded(o), in0 + base + o, 16);
      }
    } else {
      for (int o = threadIdx.x; o < count; o += 256) dst[padded(o)] = in0[base + o];
    }
  };
  if (threadIdx.x == 0) tile_sm[0] = (int)atomicAdd(tickets, 1u);
  __syncthreads();
  int t = tile_sm[0];
  if (t < tiles) issue(t, buf[0]);
  __pipeline_commit();
  for (int it = 0; t < tiles; ++it) {
    float* cur = buf[it & 1];
    float* nxt = buf[(it & 1) ^ 1];
    if (threadIdx.x == 0) tile_sm[(it + 1) & 1] = (int)atomicAdd(tickets, 1u);
    __pipeline_wait_prior(0);
    __syncthreads();
    const int tn = tile_sm[(it + 1) & 1];
    if (tn < tiles) issue(tn, nxt);
    __pipeline_commit();
    const int tr = t % tiles_per_row, base = t / tiles_per_row * len + tr * kTile;
    const int count = min(len - tr * kTile, kTile), items = count - first;
    const bool whole = count == kTile && base % 4 == 0;
    float s[kItems];
    if (whole) {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float4 g = *reinterpret_cast<const float4*>(cur + padded(first + 4 * k));
        s[4 * k] = g.x, s[4 * k + 1] = g.y, s[4 * k + 2] = g.z, s[4 * k + 3] = g.w;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k) s[k] = k < items ? cur[padded(first + k)] : 0.f;
    }
    const float w = block_scan(s, items, incl, warps, lane, warp);
    if (warp == 0) {
      const float agg = incl[(count - 1) / kItems];
      if (tr == 0 || !LOOK) {
        if (lane == 0) words[t] = status_word(2u, agg);
      } else {
        const float p = look_back<FIRST_NS, POLL_NS>(t, tr, agg, words, seen, vals, lane);
        if (lane == 0) prefix = p;
      }
    }
    __syncthreads();
    const float excl = threadIdx.x > 0 ? incl[threadIdx.x - 1] : w;
    const bool add_pre = LOOK && tr > 0;
    const float pre = add_pre ? prefix : w;
    float r[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      r[k] = threadIdx.x > 0 ? excl + s[k] : s[k];
      if (add_pre) r[k] = pre + r[k];
    }
    if (whole) {
#pragma unroll
      for (int k = 0; k < 4; ++k)
        *reinterpret_cast<float4*>(cur + padded(first + 4 * k)) = make_float4(r[4 * k], r[4 * k + 1], r[4 * k + 2],
                                                                               r[4 * k + 3]);
      __syncwarp();
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int o = warp * 512 + (u * 32 + lane) * 4;
        *reinterpret_cast<float4*>(out0 + base + o) = *reinterpret_cast<const float4*>(cur + padded(o));
      }
    } else {
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        if (k < items) out0[base + first + k] = r[k];
    }
    t = tn;
  }
  if (threadIdx.x == 0) {
    __threadfence();
    last_sm = atomicAdd(tickets + 1, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last_sm)
    for (int q = threadIdx.x; q < 2 * tiles + 2; q += blockDim.x) tickets[q] = 0u;
}


// ---- The grouped order (the candidate): tiles in groups of 32; inside a group, Kogge-Stone over the tiles'
// aggregates; a group's inclusive value GI(q) = GI(q-1) + its Kogge-Stone total, published by the group's last tile.
// A tile's prefix is GI(q-1) + (Kogge-Stone of its group up to the tile before it). The look-back waits only on
// aggregates: GI(q-1) is found by walking back over whole groups to the nearest one whose last tile has published
// GI (or group 0), then folding the group totals forward: one combine per group, not per tile.
template <class T> __device__ __forceinline__ T shfl_from(T v, int src) {
  return __shfl_sync(0xffffffffu, v, src);
}
template <class T, class F> __device__ __forceinline__ T warp_inclusive(T v, int lane, F combine) {
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off) v = combine(y, v);
  }
  return v;
}
struct Words {
  volatile unsigned long long* words;
  __device__ unsigned long long load(long long t) const { return words[t]; }
  __device__ static unsigned flag(unsigned long long r) { return (unsigned)(r >> 32); }
  __device__ float value(unsigned long long r) const { return __uint_as_float((unsigned)r); }
  __device__ void publish(long long t, unsigned f, float v) const { words[t] = status_word(f, v); }
};
template <int POLL_NS> __device__ __forceinline__ unsigned long long wait_word(const Words& s, long long t,
                                                                              unsigned long long r) {
  while (Words::flag(r) == 0u) {
    if (POLL_NS > 0) __nanosleep(POLL_NS);
    r = s.load(t);
  }
  return r;
}
constexpr int kSavedGroups = 64;
template <int FIRST_NS, int POLL_NS, int WIN, class F>
__device__ float grouped_look_back(const Words& s, long long t, long long tr, float agg, int lane, F combine,
                                   float* saved) {
  const long long row0 = t - tr, g = tr / 32;
  const int gl = (int)(tr % 32);
  if (lane == 0) s.publish(t, 1u, agg);
  if (tr == 0) return agg;
  if (FIRST_NS > 0) __nanosleep(FIRST_NS);
  unsigned long long r = 0ull;
  if (lane < gl) r = wait_word<POLL_NS>(s, row0 + g * 32 + lane, s.load(row0 + g * 32 + lane));
  float v = lane < gl ? s.value(r) : agg;
  v = warp_inclusive(v, lane, combine);
  const float before = shfl_from(v, gl > 0 ? gl - 1 : 0), upto = shfl_from(v, gl);
  if (g == 0) {
    if (gl == 31 && lane == 0) s.publish(t, 2u, upto);
    return before;
  }
  long long d = 0, h = 0;
  float p = 0.f;
  for (;; d += WIN) {
    unsigned long long rr[WIN];
#pragma unroll
    for (int j = 0; j < WIN; ++j) {
      const long long m = g - 1 - d - j;
      rr[j] = m >= 0 ? s.load(row0 + m * 32 + lane) : 0ull;
    }
    int found = -1;
#pragma unroll
    for (int j = 0; j < WIN; ++j) {
      const long long m = g - 1 - d - j;
      if (m < 0) break;
      rr[j] = wait_word<POLL_NS>(s, row0 + m * 32 + lane, rr[j]);
      const float own = s.value(rr[j]);
      const float x = warp_inclusive(own, lane, combine);
      const bool gi = __shfl_sync(0xffffffffu, Words::flag(rr[j]), 31) == 2u;
      const float sum = shfl_from(gi ? own : x, 31);
      if (d + j < kSavedGroups && lane == 0) saved[d + j] = sum;
      if (found < 0 && (gi || m == 0)) {
        found = j;
        p = sum;
      }
    }
    if (found >= 0) {
      h = d + found;
      break;
    }
  }
  __syncwarp();
  for (long long e = h - 1; e >= 0; --e) {
    if (e < kSavedGroups) {
      p = combine(p, saved[e]);
    } else {
      const long long m = g - 1 - e;
      const unsigned long long r2 = wait_word<POLL_NS>(s, row0 + m * 32 + lane, s.load(row0 + m * 32 + lane));
      const float own = s.value(r2);
      const float x = warp_inclusive(own, lane, combine);
      const bool gi = __shfl_sync(0xffffffffu, Words::flag(r2), 31) == 2u;
      const float sum = shfl_from(gi ? own : x, 31);
      p = gi ? sum : combine(p, sum);
    }
  }
  if (gl == 31 && lane == 0) s.publish(t, 2u, combine(p, upto));
  return gl > 0 ? combine(p, before) : p;
}


// The library's look-back (lf_scan_look_back: a group a round trip) with OVERLAP: the first group of the walk read in
// the same round trip as the tile's own group.
template <int FIRST_NS, int POLL_NS, bool OVERLAP, class F>
__device__ float library_look_back(const Words& s, long long t, long long tr, float agg, int lane, F combine,
                                   float* saved) {
  if (lane == 0) s.publish(t, 1u, agg);
  if (tr == 0) return agg;
  if (FIRST_NS > 0) __nanosleep(FIRST_NS);
  const long long row0 = t - tr, g = tr / 32;
  const int gl = (int)(tr % 32);
  unsigned long long r = 0ull, first = 0ull;
  if (lane < gl) r = s.load(row0 + g * 32 + lane);
  if (OVERLAP && g > 0) first = s.load(row0 + (g - 1) * 32 + lane);
  float v = agg;
  if (lane < gl) v = s.value(wait_word<POLL_NS>(s, row0 + g * 32 + lane, r));
  v = warp_inclusive(v, lane, combine);
  const float before = shfl_from(v, gl > 0 ? gl - 1 : 0), upto = shfl_from(v, gl);
  float prefix = before, inclusive = upto;
  if (g > 0) {
    long long d = 0;
    bool found = false;
    float p;
    for (;; ++d) {
      const long long at = row0 + (g - 1 - d) * 32 + lane;
      const unsigned long long w = wait_word<POLL_NS>(s, at, OVERLAP && d == 0 ? first : s.load(at));
      const float own = s.value(w);
      const float sum = warp_inclusive(own, lane, combine);
      found = __shfl_sync(0xffffffffu, Words::flag(w), 31) == 2u;
      p = shfl_from(found ? own : sum, 31);
      if (found || d == g - 1) break;
      if (d < kSavedGroups && lane == 0) saved[d] = p;
    }
    __syncwarp();
    for (--d; d >= 0; --d) p = combine(p, saved[d]); // (the experiment's walks stay within kSavedGroups)
    prefix = gl > 0 ? combine(p, before) : p;
    inclusive = combine(p, upto);
  }
  if (gl == 31 && lane == 0) s.publish(t, 2u, inclusive);
  return prefix;
}

// TICKET: 0 a tile per ticket (the library); 1 the tile is blockIdx.x (CUB's way: no atomic before the loads, safe
// only if blocks start in index order, which CUDA does not promise); 2 the ticket's tile, but tile blockIdx.x's loads
// issued while the ticket is in flight and used where the ticket names it (else loaded again; counted).
template <int FIRST_NS, int POLL_NS, int WIN, int MINB, int TICKET = 0>
__global__ void __launch_bounds__(256, MINB)
    grouped(const float* __restrict__ in0, float* __restrict__ out0, int n, int len, unsigned* __restrict__ tickets) {
  __shared__ float incl[256], warps[8], prefix;
  __shared__ float saved[kSavedGroups];
  __shared__ unsigned tile_sm;
  __shared__ int last_sm;
  __shared__ __align__(16) float xp[kTile + kTile / 32];
  const int tiles_per_row = (len + kTile - 1) / kTile, tiles = n / len * tiles_per_row;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int xw = warp * 512;
  const int spec = (int)blockIdx.x, spec_tr = spec % tiles_per_row;
  const int spec_base = spec / tiles_per_row * len + spec_tr * kTile;
  const bool spec_whole = min(len - spec_tr * kTile, kTile) - warp * 512 >= 512 && spec_base % 4 == 0;
  float4 early[4];
  if (TICKET == 2 && spec_whole)
#pragma unroll
    for (int u = 0; u < 4; ++u) early[u] = *reinterpret_cast<const float4*>(in0 + spec_base + xw + (u * 32 + lane) * 4);
  if (threadIdx.x == 0) tile_sm = TICKET == 1 ? blockIdx.x : atomicAdd(tickets, 1u);
  __syncthreads();
  const int t = (int)tile_sm, tr = t % tiles_per_row, base = t / tiles_per_row * len + tr * kTile;
  if (TICKET == 2 && threadIdx.x == 0 && t != spec) atomicAdd(tickets + 2 * tiles + 4, 1u);
  const int count = min(len - tr * kTile, kTile), first = (int)threadIdx.x * kItems, items = count - first;
  const bool whole = count - warp * 512 >= 512 && base % 4 == 0;
  const bool use_early = TICKET == 2 && t == spec && spec_whole;
  float s[kItems];
  if (whole) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      const float4 g = use_early ? early[u] : *reinterpret_cast<const float4*>(in0 + base + o);
      xp[o + (o) / 32] = g.x;
      xp[o + 1 + (o + 1) / 32] = g.y;
      xp[o + 2 + (o + 2) / 32] = g.z;
      xp[o + 3 + (o + 3) / 32] = g.w;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kItems; ++j) s[j] = xp[(first + j) + (first + j) / 32];
    __syncwarp();
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) s[k] = k < items ? in0[base + first + k] : 0.f;
  }
  const float w = block_scan(s, items, incl, warps, lane, warp);
  if (warp == 0) {
    const float agg = incl[(count - 1) / kItems];
    const Words words{reinterpret_cast<volatile unsigned long long*>(tickets + 2)};
    const auto add = [](float a, float b) { return a + b; };
    float p;
    if constexpr (WIN == -1)
      p = library_look_back<FIRST_NS, POLL_NS, false>(words, t, tr, agg, lane, add, saved);
    else if constexpr (WIN == -2)
      p = library_look_back<FIRST_NS, POLL_NS, true>(words, t, tr, agg, lane, add, saved);
    else
      p = grouped_look_back<FIRST_NS, POLL_NS, (WIN > 0 ? WIN : 1)>(words, t, tr, agg, lane, add, saved);
    if (lane == 0) {
      prefix = p;
      __threadfence();
      last_sm = atomicAdd(tickets + 1, 1u) == (unsigned)(tiles - 1);
    }
  }
  __syncthreads();
  const float excl = threadIdx.x > 0 ? incl[threadIdx.x - 1] : w;
  const float pre = tr > 0 ? prefix : w;
  float r[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    r[k] = threadIdx.x > 0 ? excl + s[k] : s[k];
    if (tr > 0) r[k] = pre + r[k];
    if (!whole && k < items) out0[base + first + k] = r[k];
  }
  if (whole) {
#pragma unroll
    for (int j = 0; j < kItems; ++j) xp[(first + j) + (first + j) / 32] = r[j];
    __syncwarp();
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      float4 g;
      g.x = xp[o + o / 32];
      g.y = xp[o + 1 + (o + 1) / 32];
      g.z = xp[o + 2 + (o + 2) / 32];
      g.w = xp[o + 3 + (o + 3) / 32];
      *reinterpret_cast<float4*>(out0 + base + o) = g;
    }
  }
  if (last_sm)
    for (int q = threadIdx.x; q < 2 * tiles + 2; q += blockDim.x) tickets[q] = 0u;
}

// The grouped order on the host (the tile's own scan as codegen/Schedule.h writes it), for the bits.
void grouped_reference(const float* x, float* y, int len) {
  const int tiles = (len + kTile - 1) / kTile;
  std::vector<float> agg(tiles);
  for (int t = 0; t < tiles; ++t) {
    const int count = std::min(kTile, len - t * kTile);
    float* e = y + size_t(t) * kTile;
    std::memcpy(e, x + size_t(t) * kTile, size_t(count) * 4);
    const int threads = (count + kItems - 1) / kItems;
    std::vector<float> w(256), incl(256);
    for (int j = 0; j < threads; ++j) {
      const int own = std::min(kItems, count - j * kItems);
      for (int k = 1; k < own; ++k) e[j * kItems + k] = e[j * kItems + k - 1] + e[j * kItems + k];
      w[j] = e[j * kItems + own - 1];
    }
    for (int off = 1; off < 32; off *= 2)
      for (int l = threads - 1; l >= 0; --l)
        if (l % 32 >= off) w[l] = w[l - off] + w[l];
    float p[8];
    const int warps = (threads - 1) / 32;
    for (int q = 0; q < warps; ++q) p[q] = w[q * 32 + 31];
    for (int off = 1; off < 8; off *= 2)
      for (int q = warps - 1; q >= off; --q) p[q] = p[q - off] + p[q];
    for (int j = 0; j < threads; ++j) incl[j] = j / 32 > 0 ? p[j / 32 - 1] + w[j] : w[j];
    for (int j = 1; j < threads; ++j)
      for (int k = 0; k < std::min(kItems, count - j * kItems); ++k) e[j * kItems + k] = incl[j - 1] + e[j * kItems + k];
    agg[t] = incl[threads - 1];
  }
  float gi = 0.f;
  for (int g0 = 0; g0 < tiles; g0 += 32) {
    std::vector<float> pre(agg.begin() + g0, agg.begin() + std::min(tiles, g0 + 32));
    for (int off = 1; off < 32; off *= 2)
      for (int l = int(pre.size()) - 1; l >= off; --l) pre[l] = pre[l - off] + pre[l];
    for (int l = 0; l < int(pre.size()); ++l) {
      const int t = g0 + l;
      if (t == 0) continue;
      const float e = g0 == 0 ? pre[l - 1] : l == 0 ? gi : gi + pre[l - 1];
      float* o = y + size_t(t) * kTile;
      for (int k = 0; k < std::min(kTile, len - t * kTile); ++k) o[k] = e + o[k];
    }
    if (pre.size() == 32) gi = g0 == 0 ? pre[31] : gi + pre[31];
  }
}

// ---- Tile shapes (session 31, for the next session): the grouped order and the library's look-back with THREADS
// threads of ITEMS values a tile (the library: 256 x 16; CUB's sm90 float scan: 128 x 24, more blocks an SM).
template <int THREADS, int ITEMS>
__device__ __forceinline__ float shaped_block_scan(float (&s)[ITEMS], int items, float* incl, float* warps, int lane,
                                                   int warp) {
  constexpr int kWarpsT = THREADS / 32;
  float w = 0.f;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (k < items) {
      if (k > 0) s[k] = s[k - 1] + s[k];
      w = s[k];
    }
  w = warp_inclusive(w, lane, [](float a, float b) { return a + b; });
  if (lane == 31) warps[warp] = w;
  __syncthreads();
  if (warp == 0) {
    float p = lane < kWarpsT ? warps[lane] : w;
#pragma unroll
    for (int off = 1; off < kWarpsT; off <<= 1) {
      const float y = __shfl_up_sync(0xffffffffu, p, off);
      if (lane >= off) p = y + p;
    }
    if (lane < kWarpsT) warps[lane] = p;
  }
  __syncthreads();
  incl[threadIdx.x] = warp > 0 ? warps[warp - 1] + w : w;
  __syncthreads();
  return w;
}

template <int THREADS, int ITEMS, int MINB>
__global__ void __launch_bounds__(THREADS, MINB)
    shaped(const float* __restrict__ in0, float* __restrict__ out0, int n, int len, unsigned* __restrict__ tickets) {
  constexpr int kT = THREADS * ITEMS, kW = 32 * ITEMS; // a tile, a warp's part of it
  static_assert(ITEMS % 4 == 0, "whole float4 vectors a thread");
  __shared__ float incl[THREADS], warps[THREADS / 32], prefix;
  __shared__ float saved[kSavedGroups];
  __shared__ unsigned tile_sm;
  __shared__ int last_sm;
  __shared__ __align__(16) float xp[kT + kT / 32];
  const int tiles_per_row = (len + kT - 1) / kT, tiles = n / len * tiles_per_row;
  if (threadIdx.x == 0) tile_sm = atomicAdd(tickets, 1u);
  __syncthreads();
  const int t = (int)tile_sm, tr = t % tiles_per_row, base = t / tiles_per_row * len + tr * kT;
  const int count = min(len - tr * kT, kT), first = (int)threadIdx.x * ITEMS, items = count - first;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool whole = count - warp * kW >= kW && base % 4 == 0;
  const int xw = warp * kW;
  float s[ITEMS];
  if (whole) {
#pragma unroll
    for (int u = 0; u < ITEMS / 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      const float4 g = *reinterpret_cast<const float4*>(in0 + base + o);
      xp[o + o / 32] = g.x;
      xp[o + 1 + (o + 1) / 32] = g.y;
      xp[o + 2 + (o + 2) / 32] = g.z;
      xp[o + 3 + (o + 3) / 32] = g.w;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) s[j] = xp[(first + j) + (first + j) / 32];
    __syncwarp();
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) s[k] = k < items ? in0[base + first + k] : 0.f;
  }
  const float w = shaped_block_scan<THREADS, ITEMS>(s, items, incl, warps, lane, warp);
  if (warp == 0) {
    const float agg = incl[(count - 1) / ITEMS];
    const Words words{reinterpret_cast<volatile unsigned long long*>(tickets + 2)};
    const float p = library_look_back<700, 300, false>(words, t, tr, agg, lane, [](float a, float b) { return a + b; },
                                                       saved);
    if (lane == 0) {
      prefix = p;
      __threadfence();
      last_sm = atomicAdd(tickets + 1, 1u) == (unsigned)(tiles - 1);
    }
  }
  __syncthreads();
  const float excl = threadIdx.x > 0 ? incl[threadIdx.x - 1] : w;
  const float pre = tr > 0 ? prefix : w;
  float r[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    r[k] = threadIdx.x > 0 ? excl + s[k] : s[k];
    if (tr > 0) r[k] = pre + r[k];
    if (!whole && k < items) out0[base + first + k] = r[k];
  }
  if (whole) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) xp[(first + j) + (first + j) / 32] = r[j];
    __syncwarp();
#pragma unroll
    for (int u = 0; u < ITEMS / 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      float4 g;
      g.x = xp[o + o / 32];
      g.y = xp[o + 1 + (o + 1) / 32];
      g.z = xp[o + 2 + (o + 2) / 32];
      g.w = xp[o + 3 + (o + 3) / 32];
      *reinterpret_cast<float4*>(out0 + base + o) = g;
    }
  }
  if (last_sm)
    for (int q = threadIdx.x; q < 2 * tiles + 2; q += blockDim.x) tickets[q] = 0u;
}

// The grouped order on the host for tiles of THREADS x ITEMS.
template <int THREADS, int ITEMS> void shaped_reference(const float* x, float* y, int len) {
  constexpr int kT = THREADS * ITEMS, kWarpsT = THREADS / 32;
  const int tiles = (len + kT - 1) / kT;
  std::vector<float> agg(tiles);
  for (int t = 0; t < tiles; ++t) {
    const int count = std::min(kT, len - t * kT);
    float* e = y + size_t(t) * kT;
    std::memcpy(e, x + size_t(t) * kT, size_t(count) * 4);
    const int threads = (count + ITEMS - 1) / ITEMS;
    std::vector<float> w(THREADS), incl(THREADS);
    for (int j = 0; j < threads; ++j) {
      const int own = std::min(ITEMS, count - j * ITEMS);
      for (int k = 1; k < own; ++k) e[j * ITEMS + k] = e[j * ITEMS + k - 1] + e[j * ITEMS + k];
      w[j] = e[j * ITEMS + own - 1];
    }
    for (int off = 1; off < 32; off *= 2)
      for (int l = threads - 1; l >= 0; --l)
        if (l % 32 >= off) w[l] = w[l - off] + w[l];
    std::vector<float> p(kWarpsT);
    const int warps = (threads - 1) / 32;
    for (int q = 0; q < warps; ++q) p[q] = w[q * 32 + 31];
    for (int off = 1; off < kWarpsT; off *= 2)
      for (int q = warps - 1; q >= off; --q) p[q] = p[q - off] + p[q];
    for (int j = 0; j < threads; ++j) incl[j] = j / 32 > 0 ? p[j / 32 - 1] + w[j] : w[j];
    for (int j = 1; j < threads; ++j)
      for (int k = 0; k < std::min(ITEMS, count - j * ITEMS); ++k) e[j * ITEMS + k] = incl[j - 1] + e[j * ITEMS + k];
    agg[t] = incl[threads - 1];
  }
  float gi = 0.f;
  for (int g0 = 0; g0 < tiles; g0 += 32) {
    std::vector<float> pre(agg.begin() + g0, agg.begin() + std::min(tiles, g0 + 32));
    for (int off = 1; off < 32; off *= 2)
      for (int l = int(pre.size()) - 1; l >= off; --l) pre[l] = pre[l - off] + pre[l];
    for (int l = 0; l < int(pre.size()); ++l) {
      const int t = g0 + l;
      if (t == 0) continue;
      const float e = g0 == 0 ? pre[l - 1] : l == 0 ? gi : gi + pre[l - 1];
      float* o = y + size_t(t) * kT;
      for (int k = 0; k < std::min(kT, len - t * kT); ++k) o[k] = e + o[k];
    }
    if (pre.size() == 32) gi = g0 == 0 ? pre[31] : gi + pre[31];
  }
}

__global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, int n4) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) b[i] = a[i];
}

template <class F> float time_ms(F&& launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> trials;
  for (int k = 0; k < 5; ++k) {
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < 20; ++i) launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    trials.push_back(ms / 20);
  }
  CHECK(cudaGetLastError());
  std::sort(trials.begin(), trials.end());
  return trials[2];
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int n = 1 << 25;
  std::vector<float> h(n);
  unsigned seed = 12345u;
  for (auto& v : h) {
    seed = seed * 1664525u + 1013904223u;
    v = float(seed >> 8) / float(1 << 24);
  }
  float *in, *out, *out2;
  unsigned* tickets;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMalloc(&out, n * 4));
  CHECK(cudaMalloc(&out2, n * 4));
  CHECK(cudaMalloc(&tickets, (2 * (n / 1024) + 64) * 4));
  CHECK(cudaMemset(tickets, 0, (2 * (n / 1024) + 64) * 4));
  CHECK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
  const double bytes = 2.0 * n * 4;
  const float copy = time_ms([&] { copy4<<<sms * 8, 256>>>((const float4*)in, (float4*)out, n / 4); });
  const float memcpy_ms = time_ms([&] { CHECK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice)); });
  std::printf("copy kernel %.4f ms (%.2f TB/s), cudaMemcpy D2D %.4f ms; %d SMs\n", copy, bytes / copy / 1e9,
              memcpy_ms, sms);
  size_t temp_bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, n);
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  for (int len : {n, 8192}) {
    std::printf("\n== %s (len %d) ==\n", len == n ? "cumsum of 2^25 float32" : "rows of 8192 (4096 x 8192)", len);
    const int tiles = n / len * ((len + kTile - 1) / kTile);
    std::vector<float> ref(n), got(n);
    // The reference output: the replica with its look-back.
    CHECK(cudaMemset(out, 0xff, n * 4));
    replica<true, 700, 300, 1><<<tiles, 256>>>(in, out, n, len, tickets);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(ref.data(), out, n * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int r = 0; r < n / len; r += std::max(1, n / len / 7)) {
      double acc = 0;
      for (int i = 0; i < len; ++i) {
        acc += h[size_t(r) * len + i];
        worst = std::max(worst, std::fabs(ref[size_t(r) * len + i] - acc) / acc);
      }
    }
    std::printf("replica against a float64 prefix: worst relative error %.3g\n", worst);
    auto report = [&](const char* name, float ms, bool compare, int regs) {
      int same = -1;
      if (compare) {
        CHECK(cudaMemcpy(got.data(), out2, n * 4, cudaMemcpyDeviceToHost));
        same = std::memcmp(got.data(), ref.data(), size_t(n) * 4) == 0;
      }
      std::printf("%-44s %.4f ms  %5.1f%% of copy kernel  regs %3d  %s\n", name, ms, 100.0 * copy / ms, regs,
                  same < 0 ? "" : same ? "bits equal the replica's" : "BITS DIFFER");
    };
    auto regs_of = [](const void* f) {
      cudaFuncAttributes a;
      CHECK(cudaFuncGetAttributes(&a, f));
      return a.numRegs;
    };
#define REPLICA(NAME, LOOK, FIRST, POLL, MINB)                                                                       \
  {                                                                                                                  \
    auto k = replica<LOOK, FIRST, POLL, MINB>;                                                                       \
    CHECK(cudaMemset(out2, 0xff, n * 4));                                                                            \
    const float ms = time_ms([&] { k<<<tiles, 256>>>(in, out2, n, len, tickets); });                                 \
    report(NAME, ms, LOOK, regs_of((const void*)k));                                                                 \
  }
#define PERSISTENT(NAME, LOOK, FIRST, POLL, MINB)                                                                    \
  {                                                                                                                  \
    auto k = persistent<LOOK, FIRST, POLL, MINB>;                                                                    \
    int per_sm = 0;                                                                                                  \
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, 256, 0));                                        \
    const int grid = std::min(tiles, per_sm * sms);                                                                  \
    CHECK(cudaMemset(out2, 0xff, n * 4));                                                                            \
    const float ms = time_ms([&] { k<<<grid, 256>>>(in, out2, n, len, tickets); });                                  \
    char label[96];                                                                                                  \
    std::snprintf(label, sizeof label, "%s (%d/SM)", NAME, per_sm);                                                  \
    report(label, ms, LOOK, regs_of((const void*)k));                                                                \
  }

    {
      std::vector<float> gref(n);
      for (int r0 = 0; r0 < n; r0 += len) grouped_reference(h.data() + r0, gref.data() + r0, len);
      double gworst = 0;
      for (int r = 0; r < n / len; r += std::max(1, n / len / 7)) {
        double acc = 0;
        for (int i = 0; i < len; ++i) {
          acc += h[size_t(r) * len + i];
          gworst = std::max(gworst, std::fabs(gref[size_t(r) * len + i] - acc) / acc);
        }
      }
      std::printf("grouped order (host) against a float64 prefix: worst relative error %.3g\n", gworst);
#define GROUPED(NAME, FIRST, POLL, WIN, MINB) GROUPED_T(NAME, FIRST, POLL, WIN, MINB, 0)
#define GROUPED_T(NAME, FIRST, POLL, WIN, MINB, TICKET)                                                              \
  {                                                                                                                  \
    auto k = grouped<FIRST, POLL, WIN, MINB, TICKET>;                                                                \
    CHECK(cudaMemset(tickets + 2 * tiles + 4, 0, 4));                                                                \
    CHECK(cudaMemset(out2, 0xff, n * 4));                                                                            \
    const float ms = time_ms([&] { k<<<tiles, 256>>>(in, out2, n, len, tickets); });                                 \
    CHECK(cudaMemcpy(got.data(), out2, n * 4, cudaMemcpyDeviceToHost));                                             \
    const bool same = std::memcmp(got.data(), gref.data(), size_t(n) * 4) == 0;                                      \
    std::printf("%-44s %.4f ms  %5.1f%% of copy kernel  regs %3d  %s\n", NAME, ms, 100.0 * copy / ms,              \
                regs_of((const void*)k), same ? "bits equal the grouped order's" : "BITS DIFFER from the grouped order");\
    unsigned missed = 0;                                                                                             \
    CHECK(cudaMemcpy(&missed, tickets + 2 * tiles + 4, 4, cudaMemcpyDeviceToHost));                                  \
    if (TICKET == 2) std::printf("    tiles whose early loads were not their ticket's: %.1f of %d a launch\n",       \
                                 missed / 103.0, tiles);                                                             \
  }
      GROUPED("library look-back, >= 5 blocks/SM", 700, 300, -1, 5);
      GROUPED_T("library, tile = blockIdx.x (no ticket)", 700, 300, -1, 5, 1);
      GROUPED_T("library, loads before the ticket", 700, 300, -1, 5, 2);
    }

    // Tile shapes: each against its own host reference, bit for bit.
#define SHAPED(THREADS, ITEMS, MINB)                                                                                 \
  {                                                                                                                  \
    constexpr int kT = THREADS * ITEMS;                                                                              \
    const int shaped_tiles = n / len * ((len + kT - 1) / kT);                                                        \
    std::vector<float> sref(n);                                                                                      \
    for (int r0 = 0; r0 < n; r0 += len) shaped_reference<THREADS, ITEMS>(h.data() + r0, sref.data() + r0, len);      \
    auto k = shaped<THREADS, ITEMS, MINB>;                                                                           \
    int per_sm = 0;                                                                                                  \
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, THREADS, 0));                                    \
    CHECK(cudaMemset(out2, 0xff, n * 4));                                                                            \
    const float ms = time_ms([&] { k<<<shaped_tiles, THREADS>>>(in, out2, n, len, tickets); });                      \
    CHECK(cudaMemcpy(got.data(), out2, n * 4, cudaMemcpyDeviceToHost));                                             \
    const bool same = std::memcmp(got.data(), sref.data(), size_t(n) * 4) == 0;                                      \
    char label[96];                                                                                                  \
    std::snprintf(label, sizeof label, "tiles of %d x %d, >= %d blocks (%d/SM)", THREADS, ITEMS, MINB, per_sm);      \
    std::printf("%-44s %.4f ms  %5.1f%% of copy kernel  regs %3d  %s\n", label, ms, 100.0 * copy / ms,              \
                regs_of((const void*)k), same ? "bits equal its order's" : "BITS DIFFER from its order");             \
  }
    SHAPED(256, 16, 5);
    SHAPED(128, 16, 1);
    SHAPED(128, 24, 1);
    SHAPED(128, 32, 1);
    SHAPED(256, 8, 1);
    SHAPED(256, 24, 1);
    SHAPED(384, 16, 1);
    SHAPED(512, 16, 1);
    REPLICA("replica (as generated)", true, 700, 300, 1);
    REPLICA("replica, no look-back (bound, wrong)", false, 700, 300, 1);
    REPLICA("replica, >= 5 blocks/SM", true, 700, 300, 5);
    if (len == n) {
      const float ms = time_ms([&] { cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out2, n); });
      std::printf("%-44s %.4f ms  %5.1f%% of copy kernel\n", "CUB DeviceScan::InclusiveSum", ms, 100.0 * copy / ms);
    }
  }
  return 0;
}
