/* The tile kernels' ceiling (linalg_ceiling.h). */
#include "tools/bench/linalg_ceiling.h"

#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* The start: every thread makes its tiles, counts itself ready and waits
 * for go (1: run; -1: a thread could not be started, so none runs). */
typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ready, go;
} gate_t;

typedef struct worker {
    dg_ceiling_t *c;
    int ok;
    long count;
    double **tiles; /* 3 * ntiles */
    double t0, t1;
    gate_t *gate;
} worker_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void free_tiles(double **t, int n)
{
    for (int i = 0; t && i < n; i++)
        free(t[i]);
    free(t);
}

/* Allocates and fills the thread's tiles on the thread itself (first touch:
 * the memory lands near the core that uses it). */
static double **make_tiles(const dg_ceiling_t *c)
{
    size_t elems = (size_t)c->tile * (size_t)c->tile, n = 3 * (size_t)c->ntiles;
    double **t = calloc(n, sizeof(*t));
    if (!t)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t bytes = (elems * sizeof(double) + 63) / 64 * 64;
        if (!(t[i] = aligned_alloc(64, bytes))) {
            free_tiles(t, (int)n);
            return NULL;
        }
        double v = i < 2 * (size_t)c->ntiles ? 1.0 : 0.0;
        for (size_t e = 0; e < elems; e++)
            t[i][e] = v;
    }
    return t;
}

/* OpenBLAS sets up a new thread's buffers at its first call: one product
 * into scratch memory, before the start and untimed. */
static void warm_up(const dg_ceiling_t *c, double **tiles)
{
    int n = c->tile;
    size_t bytes = ((size_t)n * (size_t)n * sizeof(double) + 63) / 64 * 64;
    double *scratch = aligned_alloc(64, bytes);
    if (scratch)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, tiles[0], n,
                    tiles[c->ntiles], n, 0.0, scratch, n);
    free(scratch);
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    dg_ceiling_t *c = w->c;
    w->tiles = make_tiles(c);
    w->ok = w->tiles != NULL;
    if (w->ok)
        warm_up(c, w->tiles);
    gate_t *g = w->gate;
    pthread_mutex_lock(&g->lock);
    g->ready++;
    pthread_cond_broadcast(&g->cond);
    while (!g->go)
        pthread_cond_wait(&g->cond, &g->lock);
    int go = g->go;
    pthread_mutex_unlock(&g->lock);
    if (!w->ok || go < 0)
        return NULL;
    int n = c->tile, k = c->ntiles;
    double **a = w->tiles, **b = a + k, **cc = b + k;
    w->t0 = now_s();
    for (long p = 0; p < w->count; p++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, -1.0,
                    a[(p * 5 + 1) % k], n, b[(p * 7 + 2) % k], n, 1.0, cc[p % k], n);
    w->t1 = now_s();
    return NULL;
}

double dg_ceiling_run(dg_ceiling_t *c)
{
    if (!c || c->tile < 1 || c->threads < 1 || c->ntiles < 1 || c->products < 0)
        return -1;
    openblas_set_num_threads(1); /* each thread's calls stay on it */
    worker_t *w = calloc((size_t)c->threads, sizeof(*w));
    pthread_t *tid = calloc((size_t)c->threads, sizeof(*tid));
    gate_t gate = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    if (!w || !tid) {
        free(w);
        free(tid);
        return -1;
    }
    int started = 0;
    for (int i = 0; i < c->threads; i++) {
        w[i] = (worker_t){.c = c, .gate = &gate,
                          .count = c->products / c->threads + (i < c->products % c->threads)};
        if (pthread_create(&tid[i], NULL, worker_main, &w[i]))
            break;
        started++;
    }
    int ok = started == c->threads;
    pthread_mutex_lock(&gate.lock);
    while (gate.ready < started)
        pthread_cond_wait(&gate.cond, &gate.lock);
    gate.go = ok ? 1 : -1;
    pthread_cond_broadcast(&gate.cond);
    pthread_mutex_unlock(&gate.lock);
    double t0 = 1e300, t1 = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
        ok = ok && w[i].ok;
        if (w[i].ok && w[i].t0 < t0)
            t0 = w[i].t0;
        if (w[i].ok && w[i].t1 > t1)
            t1 = w[i].t1;
    }
    if (ok && c->keep) {
        c->tiles = calloc((size_t)c->threads, sizeof(*c->tiles));
        c->done = calloc((size_t)c->threads, sizeof(*c->done));
        ok = c->tiles && c->done;
    }
    for (int i = 0; i < c->threads; i++) {
        if (ok && c->keep) {
            c->tiles[i] = w[i].tiles;
            c->done[i] = w[i].count;
        } else {
            free_tiles(w[i].tiles, 3 * c->ntiles);
        }
    }
    if (!ok && c->keep) {
        free(c->tiles);
        free(c->done);
        c->tiles = NULL;
        c->done = NULL;
    }
    free(w);
    free(tid);
    return ok ? t1 - t0 : -1;
}

void dg_ceiling_free(dg_ceiling_t *c)
{
    for (int i = 0; c && c->tiles && i < c->threads; i++)
        free_tiles(c->tiles[i], 3 * c->ntiles);
    if (c) {
        free(c->tiles);
        free(c->done);
        c->tiles = NULL;
        c->done = NULL;
    }
}
