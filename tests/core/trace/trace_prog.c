/* A program with known numbers for the trace tests: it runs under
 * DAGGER_TRACE=dir (set by the caller) and writes what the trace must show
 * to OUT/expected-<rank>.txt.
 *
 *   trace_prog OUT            9 block increments, a 4x4-tile Cholesky, and
 *                             a chunk of rank 0 updated on rank 1 % n
 *   trace_prog OUT hang       a task that sleeps 1.5 s on rank 0 and a
 *                             consumer of its output on rank 1 % n (run
 *                             with DAGGER_HANG_TIMEOUT below 1.5 s)
 *   trace_prog OUT diverge    the same slow task, and rank 1 alone submits a
 *                             consumer: it waits for data rank 0 never
 *                             plans to send until rank 0's slow task ends
 *                             and the region's end finds the divergence */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "multirank/mr_codelets.h"

#define TILE 32
#define NT 4

static int fail(const char *what, dagger_status_t st)
{
    fprintf(stderr, "trace_prog: %s: %s: %s\n", what, dagger_strerror(st), dagger_error_detail());
    exit(1);
}

#define OK(call)                                                                  \
    do {                                                                          \
        dagger_status_t st_ = (call);                                             \
        if (st_ != DAGGER_OK)                                                     \
            fail(#call, st_);                                                     \
    } while (0)

static dagger_codelet_t reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn};
    dagger_codelet_t cl;
    OK(dagger_codelet_register(rt, &d, &cl));
    return cl;
}

static int sleepy(dagger_task_t *t)
{
    (void)t;
    struct timespec ts = {1, 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return DAGGER_OK;
}

static dagger_chunk_t chunk2(dagger_runtime_t *rt, size_t m, size_t n, int owner, double diag)
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {m, n}, .owner = owner};
    dagger_chunk_t c;
    OK(dagger_chunk_create(rt, &d, &c));
    double *p;
    OK(dagger_chunk_data(rt, c, (void **)&p, NULL));
    for (size_t j = 0; p && j < n; j++)
        for (size_t i = 0; i < m; i++)
            p[i + j * m] = i == j ? diag : 1.0 / (1.0 + (double)(i + j));
    return c;
}

typedef struct totals {
    uint64_t tasks, local, bytes_sent, transfers;
} totals_t;

static void end_region(dagger_runtime_t *rt, dagger_region_t *r, totals_t *t)
{
    OK(dagger_region_end(r));
    dagger_region_stats_t s;
    OK(dagger_region_stats(rt, &s));
    t->tasks += s.tasks;
    t->local += s.tasks_local;
    t->bytes_sent += s.bytes_sent;
    t->transfers += s.transfers;
}

static void on_rank(dagger_region_t *r, dagger_codelet_t cl, int rank, dagger_arg_t a)
{
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(rank)};
    OK(dagger_submit(r, cl, 1, &a, &o, NULL, NULL));
}

static void known_program(dagger_runtime_t *rt, totals_t *tot)
{
    int n = dagger_nranks(rt);
    dagger_codelet_t add1 = reg(rt, "add1", mr_add1), potrf = reg(rt, "potrf", mr_potrf),
                     trsm = reg(rt, "trsm", mr_trsm), syrk = reg(rt, "syrk", mr_syrk),
                     gemm = reg(rt, "gemm", mr_gemm);
    dagger_chunk_t blk[9], a[NT][NT], shared = chunk2(rt, 64, 64, 0, 1.0);
    for (int b = 0; b < 9; b++)
        blk[b] = chunk2(rt, 4, 4, -1, 1.0);
    for (int j = 0; j < NT; j++)
        for (int i = j; i < NT; i++)
            a[i][j] = chunk2(rt, TILE, TILE, -1, i == j ? 4.0 * TILE * NT : 0.0);
    dagger_region_t *r;
    OK(dagger_region_begin(rt, NULL, &r));
    for (int b = 0; b < 9; b++)
        OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, blk[b])), DAGGER_END));
    end_region(rt, r, tot);
#define V(i, j) dagger_view(rt, a[i][j])
    OK(dagger_region_begin(rt, NULL, &r));
    for (int k = 0; k < NT; k++) {
        OK(dagger_spawn(r, potrf, DAGGER_INOUT(V(k, k)), DAGGER_END));
        for (int i = k + 1; i < NT; i++)
            OK(dagger_spawn(r, trsm, DAGGER_IN(V(k, k)), DAGGER_INOUT(V(i, k)), DAGGER_END));
        for (int i = k + 1; i < NT; i++) {
            OK(dagger_spawn(r, syrk, DAGGER_IN(V(i, k)), DAGGER_INOUT(V(i, i)), DAGGER_END));
            for (int j = k + 1; j < i; j++)
                OK(dagger_spawn(r, gemm, DAGGER_IN(V(i, k)), DAGGER_IN(V(j, k)),
                                DAGGER_INOUT(V(i, j)), DAGGER_END));
        }
    }
#undef V
    end_region(rt, r, tot);
    /* Data of rank 0 updated on rank 1 % n: one transfer each way with 2+ ranks. */
    OK(dagger_region_begin(rt, NULL, &r));
    on_rank(r, add1, 1 % n, DAGGER_INOUT(dagger_view(rt, shared)));
    end_region(rt, r, tot);
}

static void hang_program(dagger_runtime_t *rt, totals_t *tot, int diverge)
{
    int n = dagger_nranks(rt);
    dagger_codelet_t slow = reg(rt, "sleepy", sleepy), add1 = reg(rt, "add1", mr_add1);
    dagger_chunk_t c = chunk2(rt, 16, 16, 0, 1.0);
    dagger_region_t *r;
    OK(dagger_region_begin(rt, NULL, &r));
    if (diverge) {
        /* Only rank 1 plans the second task: it waits for data rank 0 never
         * sends. Rank 0's slow task keeps it from the region's end for a
         * while, so the hang dumps come first; then the runtime finds the
         * divergence (the region's end carries what each rank planned) and
         * the region fails on both ranks. */
        on_rank(r, slow, 0, DAGGER_INOUT(dagger_view(rt, c)));
        if (dagger_rank(rt) == 1)
            on_rank(r, add1, 1, DAGGER_INOUT(dagger_view(rt, c)));
    } else {
        on_rank(r, slow, 0, DAGGER_INOUT(dagger_view(rt, c)));
        on_rank(r, add1, 1 % n, DAGGER_INOUT(dagger_view(rt, c)));
    }
    end_region(rt, r, tot);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: trace_prog OUTDIR [hang|diverge]\n");
        return 2;
    }
    const char *mode = argc > 2 ? argv[2] : "";
    dagger_runtime_t *rt;
    OK(dagger_init(&argc, &argv, NULL, &rt));
    totals_t tot = {0};
    if (!strcmp(mode, "hang") || !strcmp(mode, "diverge"))
        hang_program(rt, &tot, !strcmp(mode, "diverge"));
    else
        known_program(rt, &tot);
    char path[4096];
    snprintf(path, sizeof(path), "%s/expected-%d.txt", argv[1], dagger_rank(rt));
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f, "ranks %d\ntasks %llu\nlocal_tasks %llu\nbytes_sent %llu\ntransfers %llu\n",
            dagger_nranks(rt), (unsigned long long)tot.tasks, (unsigned long long)tot.local,
            (unsigned long long)tot.bytes_sent, (unsigned long long)tot.transfers);
    if (!mode[0])
        fprintf(f, "codelet add1 10\ncodelet potrf %d\ncodelet trsm %d\ncodelet syrk %d\n"
                "codelet gemm %d\n", NT, NT * (NT - 1) / 2, NT * (NT - 1) / 2,
                NT * (NT - 1) * (NT - 2) / 6);
    fclose(f);
    OK(dagger_finalize(rt));
    return 0;
}
