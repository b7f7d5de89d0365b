/* Deterministic hashing: the same bytes give the same value on every rank and
 * every build. Used for message type ids, codelet ids and the uniformity hash. */
#ifndef DG_HASH_H
#define DG_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DG_HASH_SEED 0xcbf29ce484222325ull

/* 64-bit FNV-1a, continuing from h (start with DG_HASH_SEED). */
static inline uint64_t dg_hash_bytes(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static inline uint64_t dg_hash_u64(uint64_t h, uint64_t v)
{
    return dg_hash_bytes(h, &v, sizeof(v));
}

/* A 64-bit word mixed into h with one multiply (the planner's uniformity
 * hash is built on it, core/plan/uhash.h): for hot paths that
 * hash words, where FNV's eight rounds a word cost too much (a transfer's
 * span list, hashed by both ranks of every transfer). */
static inline uint64_t dg_hash_mix64(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static inline uint64_t dg_hash_str(const char *s)
{
    return dg_hash_bytes(DG_HASH_SEED, s, strlen(s));
}

/* A 32-bit id from a name: the folded 64-bit hash, never 0 (0 means "none"). */
static inline uint32_t dg_name_id(const char *name)
{
    uint64_t h = dg_hash_str(name);
    uint32_t id = (uint32_t)(h ^ (h >> 32));
    return id ? id : 1u;
}

#endif
