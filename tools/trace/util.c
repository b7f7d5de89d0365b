/* Helpers of dagger-trace (see util.h). */
#include "util.h"

#include <stdlib.h>
#include <string.h>

void *tr_alloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "dagger-trace: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

void *tr_realloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) {
        fprintf(stderr, "dagger-trace: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return q;
}

char *tr_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tr_alloc(n);
    memcpy(d, s, n);
    return d;
}

void tr_vec_init(tr_vec_t *v, size_t elsize)
{
    memset(v, 0, sizeof(*v));
    v->elsize = elsize;
}

void tr_vec_free(tr_vec_t *v)
{
    free(v->data);
    v->data = NULL;
    v->n = v->cap = 0;
}

void *tr_vec_push(tr_vec_t *v)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 16;
        v->data = tr_realloc(v->data, v->cap * v->elsize);
    }
    void *e = (char *)v->data + v->n++ * v->elsize;
    memset(e, 0, v->elsize);
    return e;
}

/* ------------------------------------------------------------ map */

static size_t slot_of(uint64_t key, size_t cap)
{
    key *= 0x9e3779b97f4a7c15ull;
    return (size_t)(key ^ (key >> 31)) & (cap - 1);
}

void tr_map_init(tr_map_t *m)
{
    memset(m, 0, sizeof(*m));
}

void tr_map_free(tr_map_t *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

static void map_grow(tr_map_t *m)
{
    tr_map_t n = {0};
    n.cap = m->cap ? m->cap * 2 : 64;
    n.keys = tr_alloc(n.cap * sizeof(uint64_t));
    n.vals = tr_alloc(n.cap * sizeof(uint32_t));
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            tr_map_put(&n, m->keys[i], m->vals[i]);
    tr_map_free(m);
    *m = n;
}

void tr_map_put(tr_map_t *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap)
        map_grow(m);
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    m->n += !m->keys[i];
    m->keys[i] = key;
    m->vals[i] = val;
}

int tr_map_get(const tr_map_t *m, uint64_t key, uint32_t *val)
{
    if (!m->cap || !key)
        return 0;
    for (size_t i = slot_of(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return 1;
        }
    return 0;
}

/* ------------------------------------------------------------ formatting */

const char *tr_fmt_time(char *buf, double ns)
{
    if (ns < 0)
        ns = 0;
    if (ns < 1e3)
        snprintf(buf, 32, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, 32, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, 32, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, 32, "%.3f s", ns / 1e9);
    return buf;
}

const char *tr_fmt_bytes(char *buf, double bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, 32, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

const char *tr_color(char *buf, uint32_t key)
{
    /* Twelve well separated hues; later keys reuse them darker. */
    static const uint32_t palette[12] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                         0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0x8cd17d,
                                         0x499894, 0xd37295};
    uint32_t rgb = palette[key % 12], shade = 100 - 20 * ((key / 12) % 3);
    snprintf(buf, 8, "#%02x%02x%02x", (unsigned)(((rgb >> 16) & 255) * shade / 100),
             (unsigned)(((rgb >> 8) & 255) * shade / 100), (unsigned)((rgb & 255) * shade / 100));
    return buf;
}

void tr_put_json(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x80) /* names are bytes, not always UTF-8 */
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

void tr_put_xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x80)
                fputc('?', f); /* names are bytes, not always UTF-8 */
            else if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
                fputc(*s, f);
        }
    }
}
