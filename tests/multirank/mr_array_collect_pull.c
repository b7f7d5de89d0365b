/* collect by pulling and scatter by pushing (core/array/collect_pull.h):
 * from an array's second collect or scatter on (its first when that is 4
 * MiB or more), where the ranks can read each other's memory, a collecting
 * rank reads the other ranks' tiles straight from their blocks, and a
 * scatter's rank 0 writes them. Checked here: that it pulls exactly where
 * this job's ranks can read each other (the test probes that itself) and
 * from which call on, the values against serial references (every root,
 * boxes of partial tiles, a view, 1-D to 3-D, every dtype; each owner's
 * blocks after a scatter), the order against an owner that writes its
 * blocks late (collect) or reads them late (scatter), the job agreeing
 * when one rank turns it off, and a NULL buffer failing every rank. */
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "array_util.h"
#include "core/array/collect_pull.h"

/* Whether every rank of this job can read every other rank's memory, found
 * without the runtime's table: each rank publishes a word, reads the
 * others', and the job takes the minimum. */
static int ranks_read_each_other(dagger_runtime_t *rt)
{
    static uint64_t word;
    word = 0x5eed0000u + (uint64_t)getpid();
    uint64_t mine[3] = {(uint64_t)getpid(), word, (uint64_t)(uintptr_t)&word};
    int n = dagger_nranks(rt);
    size_t *lens = malloc((size_t)n * sizeof(size_t));
    void *all = NULL;
    cr_assert(lens);
    AR_OK(dagger_allgather(rt, mine, sizeof(mine), &all, lens));
    uint64_t ok = 1;
    for (int r = 0; r < n; r++) {
        uint64_t rec[3], v = 0;
        memcpy(rec, (char *)all + (size_t)r * sizeof(rec), sizeof(rec));
        struct iovec l = {&v, sizeof(v)}, rm = {(void *)(uintptr_t)rec[2], sizeof(v)};
        if (process_vm_readv((pid_t)rec[0], &l, 1, &rm, 1, 0) != (ssize_t)sizeof(v) || v != rec[1])
            ok = 0;
    }
    free(all);
    free(lens);
    AR_OK(dagger_allreduce(rt, &ok, 1, DAGGER_U64, DAGGER_OP_MIN));
    return ok == 1;
}

/* The ranks other than me that own a block of a. */
static uint64_t other_owners(dagger_array_t *a, int me, int n)
{
    int seen[4] = {0};
    cr_assert(n <= 4);
    for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
        dagger_array_block_t bi;
        AR_OK(dagger_array_block_info(a, b, &bi));
        seen[bi.owner] = 1;
    }
    uint64_t k = 0;
    for (int r = 0; r < n; r++)
        k += seen[r] && r != me;
    return k;
}

/* A collect of all of a to every rank that pulls plans one transfer (the
 * probe) for each pair of a collecting rank and another owner, and brings
 * this rank only the probes' bytes. */
static void expect_pulled(dagger_runtime_t *rt, dagger_array_t *a, size_t elsize, const char *what)
{
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t pairs = 0;
    for (int q = 0; q < n; q++)
        pairs += other_owners(a, q, n);
    cr_assert_eq(s.transfers, pairs, "%s: %llu transfers, want %llu (one probe a pair)", what,
                 (unsigned long long)s.transfers, (unsigned long long)pairs);
    cr_assert_eq(s.bytes_received, other_owners(a, me, n) * elsize,
                 "%s: rank %d received %llu bytes", what, me,
                 (unsigned long long)s.bytes_received);
}

Test(array_collect_pull, pulls_where_the_ranks_read_each_other)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    int can = n > 1 && ranks_read_each_other(rt);
    if (me == 0)
        printf("collect_pull: %d ranks, %s\n", n,
               n < 2 ? "one rank (nothing to pull)"
               : can ? "the ranks read each other's memory: collects pull"
                     : "the ranks cannot read each other's memory here: collects send");
    double *host, *got;
    dagger_array_t *a = ar_40x36(rt, 0.25, &host, &got);
    for (int round = 0; round < 4; round++) {
        ar_collect_40x36(a, got, host, round);
        /* dagger_array_from_host's scatter was the array's first (small:
         * no table); this collect, its second, makes the table. */
        if (n > 1) {
            cr_assert(a->peers, "the second collect or scatter made no peer table");
            cr_assert_eq(a->peers->ok, can, "the table says %d, the ranks' own probe %d",
                         a->peers->ok, can);
            if (can)
                expect_pulled(rt, a, sizeof(double), "collect");
        }
        if (round == 1 && n > 1 && !getenv("DAGGER_PLAN_REPLAY")) {
            /* Repeated pulling collects replay (within ten: the regions
             * before were all new, so the planner records only every
             * eighth, docs/planner.md section 11). */
            dagger_region_stats_t s;
            for (int k = 0; k < 10; k++)
                ar_collect_40x36(a, got, host, round);
            AR_OK(dagger_region_stats(rt, &s));
            cr_assert_eq(s.tasks_replayed, s.tasks, "a repeated pulling collect is not replayed "
                         "(%llu of %llu tasks)", (unsigned long long)s.tasks_replayed,
                         (unsigned long long)s.tasks);
        }
        AR_OK(dagger_array_scalar(NULL, DAGGER_OP_ADD, a, a, 1.0));
    }
    ar_check_40x36_collects(rt, a, host, 4, got, 2); /* the view pulls through a's table */
    AR_DESTROY(a);

    /* Tiles of more lines than one system call takes (1000 lines of 1.6 KiB,
     * read in place; and 4000 of 96 bytes, staged), neither side contiguous:
     * the box [7, 207) x [0, 2000) and [3, 15) x [0, 4000) of 300 x 4000
     * f64 in blocks of 300 x 1000 (four, one per rank on 4 ranks). */
    dagger_array_desc_t dl = AR_D2(DAGGER_F64, 300, 4000, 300, 1000);
    double *big = malloc(300 * 4000 * sizeof(double)), *bgot = malloc(300 * 4000 * sizeof(double));
    cr_assert(big && bgot);
    for (int i = 0; i < 300 * 4000; i++)
        big[i] = 0.5 * i;
    AR_OK(dagger_array_from_host(rt, &dl, big, &a));
    static const size_t boxes[2][2][2] = {{{7, 0}, {200, 2000}}, {{3, 0}, {12, 4000}}};
    for (int k = 0; k < 4; k++) {
        const size_t *bo = boxes[k % 2][0], *be = boxes[k % 2][1];
        AR_OK(dagger_array_collect_box(a, bo, be, DAGGER_ALL_RANKS, bgot));
        for (size_t j = 0; j < be[1]; j++)
            for (size_t i = 0; i < be[0]; i++)
                cr_assert_eq(bgot[i + be[0] * j], big[(i + bo[0]) + 300 * (j + bo[1])],
                             "box %d, (%zu,%zu)", k % 2, i, j);
    }
    AR_DESTROY(a);
    free(big);
    free(bgot);

    /* Every dtype, 1-D to 3-D, blocks that divide and that do not. */
    static const dagger_dtype_t types[] = {DAGGER_F32, DAGGER_F64, DAGGER_I32, DAGGER_I64};
    for (int t = 0; t < 4; t++) {
        dagger_array_desc_t ds[3] = {AR_D1(types[t], 1000, 64), AR_D2(types[t], 33, 17, 8, 5),
                                     AR_D3(types[t], 9, 8, 7, 2, 3, 2)};
        for (int k = 0; k < 3; k++) {
            size_t cnt = ar_count(&ds[k]), es = dagger_dtype_size(types[t]);
            unsigned char *h = malloc(cnt * es), *g = malloc(cnt * es);
            cr_assert(h && g);
            for (size_t i = 0; i < cnt; i++)
                switch (types[t]) {
                case DAGGER_F32: ((float *)h)[i] = (float)i * 0.5f; break;
                case DAGGER_F64: ((double *)h)[i] = (double)i * -0.25; break;
                case DAGGER_I32: ((int32_t *)h)[i] = 7 * (int32_t)i - 1000; break;
                default: ((int64_t *)h)[i] = -(int64_t)i * 1000003; break;
                }
            AR_OK(dagger_array_from_host(rt, &ds[k], h, &a));
            for (int rep = 0; rep < 2; rep++) {
                memset(g, 0, cnt * es);
                AR_OK(dagger_array_collect(a, g));
                cr_assert(!memcmp(h, g, cnt * es), "dtype %d, %d-D, collect %d", t, k + 1, rep);
            }
            AR_DESTROY(a);
            free(h);
            free(g);
        }
    }
    free(host);
    free(got);
    AR_OK(dagger_finalize(rt));
}

/* A first collect of 4 MiB or more pulls already (the table is made then);
 * a smaller first one does not. */
Test(array_collect_pull, a_large_first_collect_pulls)
{
    dagger_runtime_t *rt = ar_init();
    int n = dagger_nranks(rt);
    int can = n > 1 && ranks_read_each_other(rt);
    static const size_t cols[2] = {511, 512}; /* 1024 x 512 f64 is 4 MiB */
    for (int c = 0; c < 2; c++) {
        dagger_array_desc_t d = AR_D2(DAGGER_F64, 1024, cols[c], 256, 160);
        dagger_array_t *a;
        AR_OK(dagger_array_full(rt, &d, 1.5, &a));
        double *got = malloc(1024 * cols[c] * sizeof(double));
        cr_assert(got);
        AR_OK(dagger_array_collect(a, got));
        for (size_t i = 0; i < 1024 * cols[c]; i++)
            cr_assert_eq(got[i], 1.5, "%zu columns, element %zu", cols[c], i);
        int big = 1024 * cols[c] * sizeof(double) >= DG_ARR_PULL_FIRST_BYTES;
        cr_assert_eq(big, c == 1);
        cr_assert_eq(a->peers != NULL, n > 1 && big, "%zu columns: the first collect %s a table",
                     cols[c], a->peers ? "made" : "made no");
        if (big && can)
            expect_pulled(rt, a, sizeof(double), "a large first collect");
        free(got);
        AR_DESTROY(a);
    }
    AR_OK(dagger_finalize(rt));
}

/* Every block of a owned by this rank, in place (dagger_chunk_data): set to
 * (write) or checked against base + its global index (column-major over
 * rows rows), so what a scatter wrote is seen without a collect. */
static void own_blocks(dagger_runtime_t *rt, dagger_array_t *a, size_t rows, double base,
                       int write, const char *what)
{
    int me = dagger_rank(rt);
    for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
        dagger_array_block_t bi;
        AR_OK(dagger_array_block_info(a, b, &bi));
        if (bi.owner != me)
            continue;
        double *data;
        size_t strides[DAGGER_MAX_DIMS];
        AR_OK(dagger_chunk_data(rt, bi.chunk, (void **)&data, strides));
        for (size_t j = 0; j < bi.extent[1]; j++)
            for (size_t i = 0; i < bi.extent[0]; i++) {
                double want = base + (double)(bi.offset[0] + i) +
                              (double)rows * (double)(bi.offset[1] + j);
                if (write)
                    data[i + j * strides[1]] = want;
                else
                    cr_assert_eq(data[i + j * strides[1]], want, "%s: rank %d, block %zu, (%zu,%zu)",
                                 what, me, b, i, j);
            }
    }
}

static void expect_own_blocks(dagger_runtime_t *rt, dagger_array_t *a, size_t rows, double base,
                              const char *what)
{
    own_blocks(rt, a, rows, base, 0, what);
}

static void fill_host(double *h, size_t count, double base)
{
    for (size_t i = 0; i < count; i++)
        h[i] = base + (double)i;
}

/* Scatters push: from an array's second collect or scatter on (its first
 * when that is 4 MiB or more), rank 0 writes the other ranks' blocks
 * straight from its buffer, with one probe transfer from each owner. */
Test(array_collect_pull, scatters_push)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    int can = n > 1 && ranks_read_each_other(rt);
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 40, 36, 4, 3);
    double *host = malloc(40 * 36 * sizeof(double));
    cr_assert(host);
    dagger_array_t *a;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    for (int round = 0; round < 4; round++) {
        fill_host(host, 40 * 36, 1000.0 * round);
        AR_OK(dagger_array_scatter(a, me == 0 ? host : NULL));
        expect_own_blocks(rt, a, 40, 1000.0 * round, "scatter");
        cr_assert_eq(a->peers != NULL, n > 1 && round > 0, "round %d: table %s", round,
                     a->peers ? "made" : "not made");
        if (round > 0 && can) {
            dagger_region_stats_t s;
            AR_OK(dagger_region_stats(rt, &s));
            uint64_t others = other_owners(a, 0, n);
            cr_assert_eq(s.transfers, others, "round %d: %llu transfers, want %llu (one probe an "
                         "owner)", round, (unsigned long long)s.transfers,
                         (unsigned long long)others);
            cr_assert_eq(s.bytes_received, me == 0 ? others * sizeof(double) : 0,
                         "round %d: rank %d received %llu bytes", round, me,
                         (unsigned long long)s.bytes_received);
        }
    }
    AR_FAILS(dagger_array_scatter(a, NULL), DAGGER_ERR_TASK_FAILED, "NULL host buffer");
    AR_DESTROY(a);
    /* A first scatter of 4 MiB or more (dagger_array_from_host's) pushes. */
    double *big = malloc(1024 * 512 * sizeof(double));
    cr_assert(big);
    fill_host(big, 1024 * 512, 0.5);
    dagger_array_desc_t db = AR_D2(DAGGER_F64, 1024, 512, 256, 160);
    AR_OK(dagger_array_from_host(rt, &db, me == 0 ? big : NULL, &a));
    cr_assert_eq(a->peers != NULL, n > 1, "a large first scatter made %s table",
                 a->peers ? "a" : "no");
    expect_own_blocks(rt, a, 1024, 0.5, "large from_host");
    AR_DESTROY(a);
    free(big);
    free(host);
    AR_OK(dagger_finalize(rt));
}

/* The last rank, 30 ms after the others: they are in the call by then. */
static void late(int me, int n)
{
    if (me == n - 1) {
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* An owner late by 30 ms: one that reads its blocks (dagger_chunk_data)
 * after rank 0 has entered a scatter still reads the values from before,
 * and the new ones after; one that writes its blocks after the other ranks
 * have entered a collect has them collect the new values. */
Test(array_collect_pull, waits_for_an_owner_that_is_late)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 64, 64, 16, 16);
    double *host = malloc(64 * 64 * sizeof(double));
    cr_assert(host);
    fill_host(host, 64 * 64, 0);
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, me == 0 ? host : NULL, &a));
    for (int round = 1; round <= 4; round++) { /* scatters push from the second */
        late(me, n);
        if (me == n - 1)
            expect_own_blocks(rt, a, 64, 10000.0 * (round - 1), "before the scatter");
        fill_host(host, 64 * 64, 10000.0 * round);
        AR_OK(dagger_array_scatter(a, me == 0 ? host : NULL));
        expect_own_blocks(rt, a, 64, 10000.0 * round, "after the scatter");
    }
    for (int round = 5; round <= 8; round++) { /* collects pull */
        late(me, n);
        own_blocks(rt, a, 64, 10000.0 * round, 1, NULL);
        memset(host, 0, 64 * 64 * sizeof(double));
        AR_OK(dagger_array_collect(a, host));
        for (int i = 0; i < 64 * 64; i++)
            cr_assert_eq(host[i], round * 10000.0 + i, "round %d, element %d", round, i);
    }
    free(host);
    AR_DESTROY(a);
    AR_OK(dagger_finalize(rt));
}

/* One rank's DAGGER_COLLECT_PULL=0 turns pulling off for the whole job. */
Test(array_collect_pull, one_rank_off_turns_it_off_everywhere)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    if (me == n - 1)
        setenv("DAGGER_COLLECT_PULL", "0", 1); /* read when the table is made */
    dagger_array_desc_t d = AR_D1(DAGGER_F64, 4096, 256);
    dagger_array_t *a;
    AR_OK(dagger_array_full(rt, &d, 2.5, &a));
    double *got = malloc(4096 * sizeof(double));
    cr_assert(got);
    for (int k = 0; k < 3; k++) {
        AR_OK(dagger_array_collect(a, got));
        for (int i = 0; i < 4096; i++)
            cr_assert_eq(got[i], 2.5, "collect %d, element %d", k, i);
    }
    cr_assert(n < 2 || (a->peers && !a->peers->ok), "rank %d pulls", me);
    /* The blocks other ranks own came as transfers (how many depends on
     * the worker count: the default distribution deals blocks over the
     * CPU processors, so with 3 workers a rank of 2 owns 9 of the 16). */
    size_t others = 0;
    for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
        dagger_array_block_t bi;
        AR_OK(dagger_array_block_info(a, b, &bi));
        others += bi.owner != me ? bi.extent[0] * sizeof(double) : 0;
    }
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    cr_assert(s.bytes_received >= others, "rank %d received %llu bytes, the others own %zu",
              me, (unsigned long long)s.bytes_received, others);
    free(got);
    AR_DESTROY(a);
    AR_OK(dagger_finalize(rt));
}

/* A NULL buffer on one collecting rank fails the collect on every rank,
 * when it pulls as when it does not. */
Test(array_collect_pull, a_null_buffer_fails_every_rank)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 32, 32, 8, 8);
    dagger_array_t *a;
    AR_OK(dagger_array_ones(rt, &d, &a));
    double *got = malloc(32 * 32 * sizeof(double));
    cr_assert(got);
    for (int k = 0; k < 2; k++)
        AR_OK(dagger_array_collect(a, got));
    AR_FAILS(dagger_array_collect(a, me == n - 1 ? NULL : got), DAGGER_ERR_TASK_FAILED,
             "NULL host buffer");
    AR_OK(dagger_array_collect(a, got)); /* and the next one works */
    for (int i = 0; i < 32 * 32; i++)
        cr_assert_eq(got[i], 1.0, "element %d", i);
    free(got);
    AR_DESTROY(a);
    AR_OK(dagger_finalize(rt));
}
