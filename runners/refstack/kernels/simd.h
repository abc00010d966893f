// Function multiversioning for the vectorizable row loops (decode, absmax, encode, sum
// of squares): g++ compiles each marked function for AVX-512, AVX2 and baseline x86-64
// and the loader picks one for the CPU. The library builds with -ffp-contract=off and
// these loops never reassociate, so every version gives the same bits.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HARNESS_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HARNESS_SIMD_CLONES
#endif
