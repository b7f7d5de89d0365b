/* Soak: many regions of many tasks, with resident memory printed along the
 * way, to show that a long run does not grow (issue 11: 10^6 tasks in 10^3
 * regions on 2 ranks, RSS flat). Not a benchmark of speed.
 *
 *   tools/dagger-run -n 2 build/tools/bench/bench_region_soak [regions] [tasks-per-region]
 *
 * Every region: two chunks created before it and freed after it, tasks that
 * each add 1 to one of 16 long-lived chunks (owners alternate between ranks;
 * every 4th task is scoped to a rank in turn, so data moves between ranks),
 * one task that returns a value, fetched and freed after the region. At the
 * end every chunk's count is checked. Each rank prints its VmRSS (from
 * /proc/self/status) after init, every 100 regions and at the end, and the
 * growth from the first checkpoint after warm-up (region 100) to the end. */
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCH 16
#define ELEMS 64

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

static void check(dagger_status_t st, const char *what)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "soak: %s: %s (%s)\n", what, dagger_strerror(st), dagger_error_detail());
        exit(1);
    }
}

static int add_one(dagger_task_t *t)
{
    double *x = dagger_task_arg(t, 0).data;
    x[0] += 1;
    return DAGGER_OK;
}

static int give_seq(dagger_task_t *t)
{
    double v = (double)dagger_task_seq(t);
    return dagger_task_return(t, &v, sizeof(v));
}

typedef struct soak {
    dagger_runtime_t *rt;
    dagger_codelet_t add, ret;
    dagger_chunk_t ch[NCH];
    long expect[NCH];
} soak_t;

static dagger_chunk_t make_chunk(dagger_runtime_t *rt, int owner)
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {ELEMS}, .owner = owner};
    dagger_chunk_t c;
    check(dagger_chunk_create(rt, &d, &c), "dagger_chunk_create");
    return c;
}

static void one_region(soak_t *s, long ntasks)
{
    int nranks = dagger_nranks(s->rt);
    dagger_chunk_t tmp[2] = {make_chunk(s->rt, 0), make_chunk(s->rt, nranks - 1)};
    dagger_region_t *r;
    check(dagger_region_begin(s->rt, NULL, &r), "dagger_region_begin");
    for (long i = 0; i < ntasks; i++) {
        int c = (int)(i % NCH);
        dagger_scope_t on = DAGGER_SCOPE_RANK((int)((i / 4) % nranks));
        dagger_task_opts_t o = {.scope = i % 4 == 0 ? &on : NULL};
        dagger_arg_t a = DAGGER_INOUT(dagger_view(s->rt, i % 97 ? s->ch[c] : tmp[i % 2]));
        check(dagger_submit(r, s->add, 1, &a, &o, NULL, NULL), "dagger_submit");
        if (i % 97)
            s->expect[c]++;
    }
    dagger_future_t f;
    check(dagger_submit(r, s->ret, 0, NULL, NULL, NULL, &f), "dagger_submit (value)");
    check(dagger_region_end(r), "dagger_region_end");
    double v;
    check(dagger_fetch(s->rt, f, &v, sizeof(v), NULL), "dagger_fetch");
    check(dagger_future_free(s->rt, f), "dagger_future_free");
    check(dagger_chunk_free(s->rt, tmp[0]), "dagger_chunk_free");
    check(dagger_chunk_free(s->rt, tmp[1]), "dagger_chunk_free");
}

/* Every long-lived chunk's element 0 counts the tasks that touched it. */
static int verify(soak_t *s)
{
    int bad = 0;
    for (int c = 0; c < NCH; c++) {
        double *p, v = 0;
        check(dagger_chunk_data(s->rt, s->ch[c], (void **)&p, NULL), "dagger_chunk_data");
        if (p)
            v = p[0];
        check(dagger_bcast(s->rt, &v, sizeof(v), dagger_chunk_owner(s->rt, s->ch[c])), "bcast");
        bad += v != (double)s->expect[c];
    }
    return bad;
}

int main(int argc, char **argv)
{
    long regions = argc > 1 ? atol(argv[1]) : 1000, ntasks = argc > 2 ? atol(argv[2]) : 1000;
    soak_t s = {0};
    check(dagger_init(&argc, &argv, NULL, &s.rt), "dagger_init");
    int rank = dagger_rank(s.rt);
    printf("rank %d: RSS %ld KiB after init\n", rank, rss_kib());
    dagger_codelet_desc_t add = {.name = "soak.add", .cpu = add_one, .nargs = 1};
    dagger_codelet_desc_t ret = {.name = "soak.ret", .cpu = give_seq, .return_size = 8};
    check(dagger_codelet_register(s.rt, &add, &s.add), "dagger_codelet_register");
    check(dagger_codelet_register(s.rt, &ret, &s.ret), "dagger_codelet_register");
    for (int c = 0; c < NCH; c++)
        s.ch[c] = make_chunk(s.rt, c % dagger_nranks(s.rt));
    long warm = -1;
    for (long i = 1; i <= regions; i++) {
        one_region(&s, ntasks);
        if (i % 100 == 0 || i == regions) {
            long kib = rss_kib();
            if (i == 100)
                warm = kib;
            printf("rank %d: RSS %ld KiB after %ld regions (%ld tasks)\n", rank, kib, i,
                   i * (ntasks + 1));
            fflush(stdout);
        }
    }
    int bad = verify(&s);
    long end = rss_kib();
    printf("rank %d: RSS %ld KiB at the end; growth since region 100: %ld KiB; %s\n", rank, end,
           warm >= 0 ? end - warm : 0, bad ? "WRONG COUNTS" : "counts correct");
    check(dagger_finalize(s.rt), "dagger_finalize");
    return bad ? 1 : 0;
}
