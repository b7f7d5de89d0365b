/* The running uniformity hash over planning inputs: word-at-a-time mixing
 * (pure integer arithmetic, so identical on every rank and build). The
 * byte-wise FNV of core/base/hash.h costs ~1 ns per byte, which would be a third
 * of the planning budget for a three-argument task. */
#ifndef DG_PLAN_UHASH_H
#define DG_PLAN_UHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t dg_plan_hmix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static inline uint64_t dg_plan_hbytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    h = dg_plan_hmix(h, len);
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = dg_plan_hmix(h, w);
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, p, len);
        h = dg_plan_hmix(h, w);
    }
    return h;
}

#endif
