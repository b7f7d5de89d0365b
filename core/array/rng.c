/* A counter-based random stream: element i of a stream is a hash of
 * (seed, i), so an array's random contents do not depend on how it is
 * blocked or distributed, and any element can be recomputed alone. The
 * mixing steps are the well-known 64-bit finalizer shape (xor-shift,
 * multiply by an odd constant, three times). */
#include <math.h>
#include <stdint.h>

#include "core/array/array_internal.h"

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t dagger_rand_bits(uint64_t seed, uint64_t index)
{
    /* The seed is mixed on its own first, so that nearby seeds give
     * unrelated streams rather than shifted copies of one stream. */
    uint64_t s = mix64(seed + 0x9e3779b97f4a7c15ull);
    return mix64(s ^ mix64(index * 0xd1b54a32d192ed03ull + 0x632be59bd9b4e019ull));
}

double dagger_rand_uniform(uint64_t seed, uint64_t index)
{
    return (double)(dagger_rand_bits(seed, index) >> 11) * 0x1.0p-53;
}

/* Box-Muller with two independent streams of the seed; u1 in (0, 1]. */
double dagger_rand_normal(uint64_t seed, uint64_t index)
{
    double u1 = (double)((dagger_rand_bits(seed ^ 0x5851f42d4c957f2dull, index) >> 11) + 1) * 0x1.0p-53;
    double u2 = dagger_rand_uniform(seed ^ 0x14057b7ef767814full, index);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
