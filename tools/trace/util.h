/* Small helpers of dagger-trace: checked allocation, growable arrays, a
 * u64 -> index map, and formatting of times, sizes and colours. */
#ifndef TR_UTIL_H
#define TR_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The tool cannot go on without memory: these print and exit. */
void *tr_alloc(size_t bytes);
void *tr_realloc(void *p, size_t bytes);
char *tr_strdup(const char *s);

/* A growable array of elsize-byte elements. */
typedef struct tr_vec {
    void *data;
    size_t n, cap, elsize;
} tr_vec_t;

void tr_vec_init(tr_vec_t *v, size_t elsize);
void tr_vec_free(tr_vec_t *v);
/* Appends a zeroed element and returns it. */
void *tr_vec_push(tr_vec_t *v);
#define TR_AT(v, type, i) (&((type *)(v)->data)[i])

/* Open addressing map from a non-zero u64 key to a u32 value. */
typedef struct tr_map {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, n;
} tr_map_t;

void tr_map_init(tr_map_t *m);
void tr_map_free(tr_map_t *m);
void tr_map_put(tr_map_t *m, uint64_t key, uint32_t val);
/* 1 and *val when found. */
int tr_map_get(const tr_map_t *m, uint64_t key, uint32_t *val);

/* "12.3 ms"-style text of a duration in ns (buf of 32 bytes). */
const char *tr_fmt_time(char *buf, double ns);
/* "1.5 MiB"-style text of a byte count (buf of 32 bytes). */
const char *tr_fmt_bytes(char *buf, double bytes);
/* The colour of the key-th item of a legend as "#rrggbb" (buf of 8 bytes). */
const char *tr_color(char *buf, uint32_t key);
/* Writes s escaped for JSON (without quotes) / for XML text and attributes. */
void tr_put_json(FILE *f, const char *s);
void tr_put_xml(FILE *f, const char *s);

#endif
