/* Kernels compiled for more than one instruction set, the right one picked
 * when the library is loaded.
 *
 * The library is built for the baseline of its target (x86-64: SSE2, two
 * doubles a vector), so that one binary runs on every machine. A loop
 * marked DG_SIMD_CLONES is compiled twice: as it is, and for AVX2 (four
 * doubles a vector); the dynamic loader calls the AVX2 one where the CPU
 * has it (GCC's target_clones, an ifunc resolved by glibc). Only
 * AVX2 itself: no FMA, so the compiler cannot fuse a multiply and an add,
 * and each element's operations stay in their order: both clones give the
 * same bits. AVX-512 is not cloned: on the machines measured it ran these
 * loops slower than AVX2 (docs/benchmarks.md, "AVX2 clones").
 *
 * GCC only: clang 14 gives the resolver of a static function a global
 * symbol (sum_rows.resolver), which the library would then export. Where
 * it cannot be had (clang, not x86-64, not glibc, a GCC without the
 * attribute), the macro is empty and the baseline build is all there is. */
#ifndef DG_SIMD_H
#define DG_SIMD_H

#include <limits.h> /* defines __GLIBC__ under glibc */

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define DG_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif

#ifndef DG_SIMD_CLONES
#define DG_SIMD_CLONES
#endif

#endif
