/* The running uniformity hash over planning inputs: word-at-a-time mixing
 * (pure integer arithmetic, so identical on every rank and build). The
 * byte-wise FNV of core/base/hash.h costs ~1 ns per byte, which would be a third
 * of the planning budget for a three-argument task. */
#ifndef DG_PLAN_UHASH_H
#define DG_PLAN_UHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/base/hash.h"

static inline uint64_t dg_plan_hmix(uint64_t h, uint64_t v)
{
    return dg_hash_mix64(h, v);
}

/* Long inputs (a task's by-value bytes: a stencil sweep's are over 1 KiB)
 * go through four independent lanes, 32 bytes a step, so the multiplies
 * overlap instead of waiting on each other; the rest word by word. */
static inline uint64_t dg_plan_hbytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    h = dg_plan_hmix(h, len);
    if (len >= 64) {
        uint64_t l[4] = {h, h ^ 0x9e3779b97f4a7c15ull, h ^ 0xc2b2ae3d27d4eb4full,
                         h ^ 0x165667b19e3779f9ull};
        for (; len >= 32; p += 32, len -= 32)
            for (int i = 0; i < 4; i++) {
                uint64_t w;
                memcpy(&w, p + 8 * i, 8);
                l[i] = dg_plan_hmix(l[i], w);
            }
        h = dg_plan_hmix(dg_plan_hmix(dg_plan_hmix(l[0], l[1]), l[2]), l[3]);
    }
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
