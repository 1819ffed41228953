#!/usr/bin/env python3
"""An independent reimplementation of lazyfuse's random layout for tests/test_random.cpp (docs/semantics.md,
"Random numbers"): splitmix64 seeding, Philox4x32-10, the Philox group layout (four float32 or two float64 elements
per block, attempt blocks for rejection), NumPy's uniform grids and Box-Muller, written from the documentation in
Python integers and NumPy scalars, not from graph/RandomMath.inc.

Run through the interpreter LAZYFUSE_TEST_PYTHON names (NumPy 2). Prints, for Generator(2026) and 4096 elements:

  H <name> <hex>            the FNV-1a hash of the draw's element bits (as tests/test_random.cpp hashes them), for
                            the draws whose bits follow from the layout alone: random f32, random f64, uniform f32,
                            uniform f64, integers
  N <width> <z:lo:r>...     Box-Muller normals of the first 64 elements of standard_normal (width 1: float32, 2:
                            float64) in extended precision (long double) from the same uniforms the layout gives, as
                            a double z plus a correction lo, and the radius r: the references the library's normals
                            must stay near
"""
import struct
import sys

import numpy as np

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def philox(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32
        k0 = (k0 + 0x9E3779B9) & M32
        k1 = (k1 + 0xBB67AE85) & M32
    return [c0, c1, c2, c3]


def block(key, group, number):
    return philox([group & M32, group >> 32, number & M32, number >> 32], [key & M32, key >> 32])


def words(key, counter, index, width, count):
    """The first `count` words of element `index`'s stream: its own words of block (C + g, 0), then whole attempt
    blocks (C + g, 1 + lane), (C + g, 1 + lane + P), ..."""
    lanes = 4 // width
    group, lane = counter + index // lanes, index % lanes
    out = block(key, group, 0)[width * lane:width * lane + width]
    number = 1 + lane
    while len(out) < count:
        out += block(key, group, number)
        number += lanes
    return out


def fnv1a(values):
    h = 0xCBF29CE484222325
    for x in values:
        for k in range(8):
            h = ((h ^ ((x >> (8 * k)) & 0xFF)) * 0x100000001B3) & M64
    return h


def f32_bits(x):
    return struct.unpack('<I', struct.pack('<f', float(x)))[0]


def f64_bits(x):
    return struct.unpack('<Q', struct.pack('<d', float(x)))[0]


def unit24(w):
    return np.float32(w >> 8) * np.float32(2.0**-24)


def unit53(a, b):
    return ((a >> 5) * 67108864 + (b >> 6)) * 2.0**-53


def bounded(key, index, rng, width):
    """Masked rejection: the low bits of the next word (two words from 2^32) while above the range."""
    mask = (1 << rng.bit_length()) - 1
    need = width
    while True:
        w = words(key, 0, index, width, need)
        x = w[need - width] | ((w[need - 1] << 32) if width == 2 else 0)
        if (x & mask) <= rng:
            return x & mask
        need += width


def main():
    n = 4096
    key = splitmix64(2026)
    r32 = [unit24(words(key, 0, i, 1, 1)[0]) for i in range(n)]
    r64 = [unit53(*words(key, 0, i, 2, 2)) for i in range(n)]
    print('H random_f32 %016x' % fnv1a([f32_bits(x) for x in r32]))
    print('H random_f64 %016x' % fnv1a([f64_bits(x) for x in r64]))
    # uniform(-2, 3): low + (high - low) * x, each operation rounded in the output type.
    print('H uniform_f32 %016x' % fnv1a([f32_bits(np.float32(-2) + np.float32(5) * x) for x in r32]))
    print('H uniform_f64 %016x' % fnv1a([f64_bits(-2.0 + 5.0 * x) for x in r64]))
    # integers(-7, 12): range 18 (19 values), one word per element; int64 bits of low + x.
    print('H integers %016x' % fnv1a([(bounded(key, i, 18, 1) - 7) & M64 for i in range(n)]))

    # Box-Muller references for the first 64 elements of each width, in long double.
    ld = np.longdouble
    two_pi = ld('6.283185307179586476925286766559005768')
    refs32, refs64 = [], []
    for i in range(64):
        w = words(key, 0, i - i % 2, 1, 1) + words(key, 0, i - i % 2 + 1, 1, 1)
        # float32: u = a 2^-32 + 2^-33 rounded to float32 (a rounded to float32 first).
        u = np.float32(np.float32(w[0]) * np.float32(2.0**-32) + np.float32(2.0**-33))
        r = np.sqrt(ld(-2) * np.log(ld(u)))
        angle = two_pi * ld(w[1]) / ld(2**32)
        refs32.append((r * (np.sin(angle) if i % 2 else np.cos(angle)), r))
        # float64: u = (k + 1) 2^-53 for the 53 bits k of words 0-1, the angle from words 2-3 (2 the low one).
        b = block(key, i // 2, 0)
        u = ld((b[0] >> 5) * 67108864 + (b[1] >> 6) + 1) / ld(2**53)
        r = np.sqrt(ld(-2) * np.log(u))
        angle = two_pi * ld(b[2] | (b[3] << 32)) / ld(2**64)
        refs64.append((r * (np.sin(angle) if i % 2 else np.cos(angle)), r))
    for width, refs in ((1, refs32), (2, refs64)):
        print('N %d ' % width + ' '.join('%r:%r:%r' % (float(x), float(x - ld(float(x))), float(r)) for x, r in refs))
    return 0


if __name__ == '__main__':
    sys.exit(main())
