/* Distributed arrays: construction, distributions and collect, against
 * serial references, with several block sizes (dividing and not). */
#include "array_util.h"
#include "core/array/collect_bundle.h"
#include "core/array/collect_pull.h"

static const dagger_dtype_t all_types[] = {DAGGER_F32, DAGGER_F64, DAGGER_I32, DAGGER_I64};

Test(array_build, zeros_ones_full_every_type)
{
    dagger_runtime_t *rt = ar_init();
    for (int t = 0; t < 4; t++) {
        dagger_array_desc_t d = AR_D2(all_types[t], 7, 5, 3, 2);
        dagger_array_t *z, *o, *f;
        AR_OK(dagger_array_zeros(rt, &d, &z));
        AR_OK(dagger_array_ones(rt, &d, &o));
        AR_OK(dagger_array_full(rt, &d, -3, &f));
        double want[35];
        for (int i = 0; i < 35; i++)
            want[i] = 0;
        ar_expect(z, want, 0, "zeros");
        for (int i = 0; i < 35; i++)
            want[i] = 1;
        ar_expect(o, want, 0, "ones");
        for (int i = 0; i < 35; i++)
            want[i] = -3;
        ar_expect(f, want, 0, "full");
        AR_OK(dagger_array_destroy(z));
        AR_OK(dagger_array_destroy(o));
        AR_OK(dagger_array_destroy(f));
    }
    AR_OK(dagger_finalize(rt));
}

/* rand gives the same array whatever the block sizes and distribution, and
 * element i is dagger_rand_uniform(seed, i). */
Test(array_build, rand_independent_of_blocks)
{
    dagger_runtime_t *rt = ar_init();
    const size_t blocks[][2] = {{13, 9}, {4, 4}, {5, 3}, {1, 7}};
    double *first = NULL;
    for (int b = 0; b < 4; b++) {
        dagger_array_desc_t d = AR_D2(DAGGER_F64, 13, 9, blocks[b][0], blocks[b][1]);
        dagger_dist_t twod = {.kind = DAGGER_DIST_CYCLIC_2D};
        if (b == 3)
            d.dist = &twod;
        dagger_array_t *a;
        AR_OK(dagger_array_rand(rt, &d, 42, &a));
        double *got = ar_collect(a);
        for (size_t i = 0; i < 117; i++) {
            cr_assert_eq(got[i], dagger_rand_uniform(42, i), "block %d element %zu", b, i);
            cr_assert(got[i] >= 0 && got[i] < 1);
            if (first)
                cr_assert_eq(got[i], first[i]);
        }
        if (!first)
            first = got;
        else
            free(got);
        AR_OK(dagger_array_destroy(a));
    }
    free(first);
    AR_OK(dagger_finalize(rt));
}

Test(array_build, rand_types_and_randn_statistics)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D1(DAGGER_F64, 20000, 3000);
    dagger_array_t *n, *u32;
    AR_OK(dagger_array_randn(rt, &d, 7, &n));
    double *x = ar_collect(n);
    double mean = 0, var = 0;
    for (int i = 0; i < 20000; i++) {
        cr_assert_eq(x[i], dagger_rand_normal(7, (uint64_t)i));
        mean += x[i];
    }
    mean /= 20000;
    for (int i = 0; i < 20000; i++)
        var += (x[i] - mean) * (x[i] - mean);
    var /= 20000;
    cr_assert(fabs(mean) < 0.05 && fabs(var - 1) < 0.05, "mean %g variance %g", mean, var);
    free(x);
    /* f32 rand stays in [0, 1); i32 rand is the low 32 bits of the stream. */
    dagger_array_desc_t di = AR_D1(DAGGER_I32, 100, 7), df = AR_D1(DAGGER_F32, 100, 7);
    dagger_array_t *f32;
    AR_OK(dagger_array_rand(rt, &di, 9, &u32));
    AR_OK(dagger_array_rand(rt, &df, 9, &f32));
    int32_t gi[100];
    float gf[100];
    AR_OK(dagger_array_collect(u32, gi));
    AR_OK(dagger_array_collect(f32, gf));
    for (int i = 0; i < 100; i++) {
        cr_assert_eq((uint32_t)gi[i], (uint32_t)dagger_rand_bits(9, (uint64_t)i));
        cr_assert(gf[i] >= 0 && gf[i] < 1);
    }
    /* Normal numbers need a floating-point type. */
    dagger_array_t *bad = (dagger_array_t *)1;
    AR_FAILS(dagger_array_randn(rt, &di, 1, &bad), DAGGER_ERR_DTYPE, "f32 or f64");
    AR_OK(dagger_array_destroy(n));
    AR_OK(dagger_array_destroy(u32));
    AR_OK(dagger_array_destroy(f32));
    AR_OK(dagger_finalize(rt));
}

static double poly(const size_t idx[], int nd, const void *args)
{
    double scale;
    memcpy(&scale, args, sizeof(scale));
    double v = 0;
    for (int k = 0; k < nd; k++)
        v = v * 100 + (double)idx[k];
    return v * scale;
}

Test(array_build, from_fn_3d)
{
    dagger_runtime_t *rt = ar_init();
    dagger_index_fn_id_t f;
    AR_OK(dagger_index_fn_register(rt, "test.poly", poly, &f));
    dagger_index_fn_id_t again;
    AR_OK(dagger_index_fn_register(rt, "test.poly", poly, &again));
    cr_assert_eq(f.id, again.id);
    double want[60];
    for (size_t k = 0; k < 3; k++)
        for (size_t j = 0; j < 4; j++)
            for (size_t i = 0; i < 5; i++)
                want[i + 5 * (j + 4 * k)] = 2 * (double)(i * 10000 + j * 100 + k);
    const size_t blocks[][3] = {{2, 3, 2}, {5, 1, 3}, {4, 4, 1}};
    for (int b = 0; b < 3; b++) {
        dagger_array_desc_t d = AR_D3(DAGGER_I64, 5, 4, 3, blocks[b][0], blocks[b][1], blocks[b][2]);
        double scale = 2;
        dagger_array_t *a;
        AR_OK(dagger_array_from_fn(rt, &d, f, &scale, sizeof(scale), &a));
        ar_expect(a, want, 0, "from_fn");
        AR_OK(dagger_array_destroy(a));
    }
    AR_OK(dagger_finalize(rt));
}

/* Rank 0's buffer reaches every block; only the blocks held elsewhere move. */
Test(array_build, from_host_and_scatter)
{
    setenv("DAGGER_COLLECT_PULL", "0", 1); /* the transfers' bytes below; pushing: collect_pull */
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    double host[11 * 6];
    for (int i = 0; i < 66; i++)
        host[i] = me == 0 ? i * 1.5 : -1; /* only rank 0's copy counts */
    double want[66];
    for (int i = 0; i < 66; i++)
        want[i] = i * 1.5;
    dagger_array_t *a;
    const size_t blocks[][2] = {{11, 6}, {2, 5}, {4, 4}}; /* the last one is kept */
    for (int b = 0; b < 3; b++) {
        dagger_array_desc_t d = AR_D2(DAGGER_F64, 11, 6, blocks[b][0], blocks[b][1]);
        AR_OK(dagger_array_from_host(rt, &d, me == 0 ? host : NULL, &a));
        ar_expect(a, want, 0, "from_host");
        if (b < 2)
            AR_OK(dagger_array_destroy(a));
    }
    /* similar: same shape and owners, zeros. */
    dagger_array_t *z;
    AR_OK(dagger_array_similar(a, &z));
    dagger_array_desc_t dz;
    AR_OK(dagger_array_info(z, &dz));
    cr_assert(dz.ndims == 2 && dz.dims[0] == 11 && dz.dims[1] == 6 && dz.block[0] == 4);
    for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
        dagger_array_block_t ia, iz;
        AR_OK(dagger_array_block_info(a, b, &ia));
        AR_OK(dagger_array_block_info(z, b, &iz));
        cr_assert_eq(ia.owner, iz.owner);
    }
    double zeros[66] = {0};
    ar_expect(z, zeros, 0, "similar");
    AR_OK(dagger_array_destroy(z));
    /* The scatter moves each block not on rank 0 once, from rank 0 to its
     * owner: rank 0 sends their bytes, every other rank receives its own. */
    AR_OK(dagger_array_scatter(a, me == 0 ? host : NULL));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t away = 0, mine = 0;
    for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
        dagger_array_block_t info;
        AR_OK(dagger_array_block_info(a, b, &info));
        uint64_t bytes = info.extent[0] * info.extent[1] * sizeof(double);
        away += info.owner != 0 ? bytes : 0;
        mine += info.owner == me ? bytes : 0;
    }
    cr_assert_eq(s.bytes_sent, me == 0 ? away : 0, "rank %d sent %llu bytes (%d ranks)", me,
                 (unsigned long long)s.bytes_sent, n);
    cr_assert_eq(s.bytes_received, me == 0 ? 0 : mine, "rank %d received %llu bytes", me,
                 (unsigned long long)s.bytes_received);
    /* A NULL buffer on rank 0 is an error on every rank. */
    AR_FAILS(dagger_array_scatter(a, NULL), DAGGER_ERR_TASK_FAILED, "NULL host buffer");
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_finalize(rt));
}

/* Regression test of a runtime issue found here (fixed in e167590): the
 * region statistics document `transfers` as the transfers planned between
 * all ranks, but a rank counted the region-end copy-backs only where it
 * took part, so after a scatter from rank 0 the ranks disagreed. */
Test(array_build, transfer_counts_agree_across_ranks)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D1(DAGGER_F64, 60, 5);
    double host[60] = {0};
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, host, &a));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t lo = s.transfers, hi = s.transfers;
    AR_OK(dagger_allreduce(rt, &lo, 1, DAGGER_U64, DAGGER_OP_MIN));
    AR_OK(dagger_allreduce(rt, &hi, 1, DAGGER_U64, DAGGER_OP_MAX));
    cr_assert_eq(lo, hi, "rank %d counts %llu transfers; the ranks count from %llu to %llu",
                 dagger_rank(rt), (unsigned long long)s.transfers, (unsigned long long)lo,
                 (unsigned long long)hi);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_finalize(rt));
}

Test(array_build, collect_to_root_and_box)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_array_desc_t d = AR_D2(DAGGER_I32, 9, 7, 2, 3);
    dagger_array_t *a;
    AR_OK(dagger_array_rand(rt, &d, 3, &a));
    int32_t all[63], mine[63];
    AR_OK(dagger_array_collect(a, all));
    int root = n - 1;
    memset(mine, 0, sizeof(mine));
    AR_OK(dagger_array_collect_to(a, root, me == root ? mine : NULL));
    if (me == root)
        cr_assert(!memcmp(all, mine, sizeof(all)));
    /* The box [2,7) x [1,5): 5 x 4 elements, on every rank. */
    int32_t box[20];
    AR_OK(dagger_array_collect_box(a, (size_t[]){2, 1}, (size_t[]){5, 4}, DAGGER_ALL_RANKS, box));
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 5; i++)
            cr_assert_eq(box[i + 5 * j], all[(i + 2) + 9 * (j + 1)], "box (%d,%d)", i, j);
    /* Only the box's elements travel: a rank receives at most 20 elements. */
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    cr_assert_leq(s.bytes_received, 20 * sizeof(int32_t));
    AR_FAILS(dagger_array_collect_box(a, (size_t[]){5, 0}, (size_t[]){5, 1}, 0, box),
             DAGGER_ERR_BAD_VIEW, "outside");
    AR_FAILS(dagger_array_collect_to(a, n, all), DAGGER_ERR_INVALID_ARG, "root rank");
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_finalize(rt));
}

/* What one collect of all of a to every rank should plan when each owner's
 * small tiles (at most 256 KiB) travel to each other rank in bundles (at
 * least one per 15 tiles and per MiB, when it has two or more) and its
 * large ones one by one: the transfers, and in bundles[o] owner o's
 * bundles. */
static uint64_t bundled_transfers(dagger_array_t *a, int n, uint64_t bundles[4])
{
    size_t nb = dagger_array_nblocks(a), es = 0;
    dagger_array_desc_t d;
    AR_OK(dagger_array_info(a, &d));
    es = dagger_dtype_size(d.dtype);
    uint64_t small[4] = {0}, bytes[4] = {0}, large = 0;
    for (size_t b = 0; b < nb; b++) {
        dagger_array_block_t bi;
        AR_OK(dagger_array_block_info(a, b, &bi));
        size_t sz = es;
        for (int k = 0; k < d.ndims; k++)
            sz *= bi.extent[k];
        if (sz > (256u << 10))
            large++;
        else {
            small[bi.owner]++;
            bytes[bi.owner] += sz;
        }
    }
    uint64_t t = large * (uint64_t)(n - 1);
    for (int o = 0; o < 4; o++) {
        uint64_t by_count = (small[o] + 14) / 15, by_bytes = (bytes[o] + (1u << 20) - 1) >> 20;
        bundles[o] = n < 2 || small[o] < 2 ? 0 : by_count > by_bytes ? by_count : by_bytes;
        t += (small[o] == 1 ? 1 : bundles[o]) * (uint64_t)(n - 1);
    }
    return t;
}

/* collect's bundles: many small tiles per owner (several bundles each),
 * large tiles beside small ones, a box of partial tiles, one root after
 * another and back; the kept bundles carry the array's new values and a
 * repeated collect is planned once. */
Test(array_build, collect_bundles)
{
    setenv("DAGGER_COLLECT_PULL", "0", 1); /* repeated collects would pull (collect_pull) */
    dagger_runtime_t *rt = ar_init();
    int n = dagger_nranks(rt);
    double *host, *got;
    dagger_array_t *a = ar_40x36(rt, 0.5, &host, &got);
    for (int round = 0; round < 2; round++) {
        ar_collect_40x36(a, got, host, round);
        dagger_region_stats_t s;
        AR_OK(dagger_region_stats(rt, &s));
        uint64_t per_owner[4];
        cr_assert_eq(s.transfers, bundled_transfers(a, n, per_owner), "round %d: %llu transfers",
                     round, (unsigned long long)s.transfers);
        if (round == 0) { /* the same collect again, then new values */
            /* A one-off collect keeps no bundle; its repeat keeps them. */
            cr_assert(!a->bundles || a->bundles->count == 0, "a first collect keeps its bundles");
            AR_OK(dagger_array_collect(a, got));
            cr_assert(n < 2 || (a->bundles && a->bundles->count > 0), "a repeat drops its bundles");
            /* The third starts with the second's bundles and their copies
             * cached: the fourth starts as the third did. */
            AR_OK(dagger_array_collect(a, got));
            AR_OK(dagger_array_collect(a, got));
            AR_OK(dagger_region_stats(rt, &s));
            if (n > 1 && !getenv("DAGGER_PLAN_REPLAY"))
                cr_assert_eq(s.tasks_replayed, s.tasks, "a repeated collect is replayed");
            AR_OK(dagger_array_scalar(NULL, DAGGER_OP_ADD, a, a, 1.0));
        }
    }
    ar_check_40x36_collects(rt, a, host, 1, got, 1);
    AR_OK(dagger_array_collect(a, got));
    cr_assert_eq(got[40 * 36 - 1], host[40 * 36 - 1] + 1);
    AR_DESTROY(a);

    /* Large tiles (288 KiB) beside small ones (32 KiB), the small ones all
     * on the last rank; and a 3-D i32 array. */
    int table[6] = {0, 1 % n, 2 % n, n - 1, n - 1, n - 1};
    dagger_dist_t dist = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = 6};
    dagger_array_desc_t dl = AR_D2(DAGGER_F64, 600, 200, 200, 180);
    dl.dist = &dist;
    double *big = malloc(600 * 200 * sizeof(double)), *bgot = malloc(600 * 200 * sizeof(double));
    cr_assert(big && bgot);
    for (int i = 0; i < 600 * 200; i++)
        big[i] = -i;
    AR_OK(dagger_array_from_host(rt, &dl, big, &a));
    AR_OK(dagger_array_collect(a, bgot));
    cr_assert(!memcmp(big, bgot, 600 * 200 * sizeof(double)));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t per_owner[4];
    cr_assert_eq(s.transfers, bundled_transfers(a, n, per_owner), "%llu transfers",
                 (unsigned long long)s.transfers);
    AR_DESTROY(a);
    /* 8 tiles of 200 KiB per rank: two bundles each (1.6 MiB), and one put
     * task per tile a rank collects from itself (two make over 256 KiB). */
    dagger_array_desc_t dm = AR_D1(DAGGER_F64, 25600 * 8 * (size_t)n, 25600);
    AR_OK(dagger_array_zeros(rt, &dm, &a));
    double *mgot = malloc(25600 * 8 * (size_t)n * sizeof(double));
    cr_assert(mgot);
    AR_OK(dagger_array_fill(NULL, a, 3.0));
    AR_OK(dagger_array_collect(a, mgot));
    for (size_t i = 0; i < 25600 * 8 * (size_t)n; i++)
        cr_assert_eq(mgot[i], 3.0, "element %zu", i);
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t want = bundled_transfers(a, n, per_owner), packs = 0;
    cr_assert_eq(s.transfers, want, "%llu transfers", (unsigned long long)s.transfers);
    for (int o = 0; o < n; o++)
        packs += per_owner[o];
    cr_assert_eq(packs, n > 1 ? 2 * (uint64_t)n : 0, "two bundles per owner");
    cr_assert_eq(s.tasks, packs * (uint64_t)n + 8 * (uint64_t)n, "%llu tasks", (unsigned long long)s.tasks);
    free(mgot);
    AR_DESTROY(a);
    dagger_array_desc_t d3 = AR_D3(DAGGER_I32, 9, 8, 7, 2, 3, 2);
    int32_t h3[504], g3[504];
    for (int i = 0; i < 504; i++)
        h3[i] = 7 * i - 1000;
    AR_OK(dagger_array_from_host(rt, &d3, h3, &a));
    AR_OK(dagger_array_collect(a, g3));
    cr_assert(!memcmp(h3, g3, sizeof(h3)));
    AR_DESTROY(a);
    free(big);
    free(bgot);
    free(host);
    free(got);
    AR_OK(dagger_finalize(rt));
}

static int by_column(const size_t block[], int nd, int nranks, void *ctx)
{
    (void)ctx;
    return (int)(block[nd > 1 ? 1 : 0] % (size_t)nranks);
}

Test(array_build, distributions)
{
    dagger_runtime_t *rt = ar_init();
    int n = dagger_nranks(rt);
    int nprocs = dagger_procs(rt, NULL, 0);
    dagger_proc_info_t procs[64];
    cr_assert_leq(nprocs, 64);
    dagger_procs(rt, procs, 64);
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 10, 10, 3, 3); /* 4 x 4 blocks */
    dagger_array_t *a;
    /* Default: cyclic over the CPU processors of all ranks. */
    AR_OK(dagger_array_zeros(rt, &d, &a));
    for (size_t b = 0; b < 16; b++) {
        dagger_array_block_t info;
        AR_OK(dagger_array_block_info(a, b, &info));
        cr_assert_eq(info.owner, procs[b % (size_t)nprocs].rank, "block %zu", b);
        cr_assert_eq(info.offset[0], 3 * (b % 4));
        cr_assert_eq(info.extent[0], b % 4 == 3 ? 1u : 3u);
    }
    AR_OK(dagger_array_destroy(a));
    /* 2-D block-cyclic on the squarest grid. */
    dagger_dist_t cyc = {.kind = DAGGER_DIST_CYCLIC_2D};
    d.dist = &cyc;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    int pr = n == 4 ? 2 : 1;
    for (size_t b = 0; b < 16; b++) {
        dagger_array_block_t info;
        AR_OK(dagger_array_block_info(a, b, &info));
        cr_assert_eq(info.owner, (int)(info.index[0] % (size_t)pr) +
                                     pr * (int)(info.index[1] % (size_t)(n / pr)));
    }
    AR_OK(dagger_array_destroy(a));
    /* A user map and a table. */
    dagger_dist_t map = {.kind = DAGGER_DIST_MAP, .map = by_column};
    d.dist = &map;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    for (size_t b = 0; b < 16; b++)
        cr_assert_eq(dagger_chunk_owner(rt, dagger_array_block(a, b).chunk), (int)(b / 4) % n);
    AR_OK(dagger_array_destroy(a));
    int table[16];
    for (int b = 0; b < 16; b++)
        table[b] = n - 1 - b % n;
    dagger_dist_t tab = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = 16};
    d.dist = &tab;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    for (size_t b = 0; b < 16; b++)
        cr_assert_eq(dagger_chunk_owner(rt, dagger_array_block(a, b).chunk), table[b]);
    AR_OK(dagger_array_destroy(a));
    /* Errors name what to change. */
    tab.ntable = 15;
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_INVALID_ARG, "15 entries");
    table[3] = n;
    tab.ntable = 16;
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_INVALID_ARG, "to rank");
    dagger_dist_t grid = {.kind = DAGGER_DIST_CYCLIC_2D, .prows = n + 1, .pcols = 1};
    d.dist = &grid;
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_INVALID_ARG, "rank grid");
    AR_OK(dagger_finalize(rt));
}

Test(array_build, bad_input)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *a = NULL;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 4, 4, 0, 2);
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_INVALID_ARG, "block size of dimension 0");
    d = AR_D2(DAGGER_F64, 4, 0, 2, 2);
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_INVALID_ARG, "dimension 1 is 0");
    d = AR_D2(DAGGER_U8, 4, 4, 2, 2);
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_DTYPE, "f32, f64, i32 or i64");
    d = AR_D2(DAGGER_F64, 4, 4, 2, 2);
    d.ndims = 5;
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_INVALID_ARG, "ndims");
    d = AR_D2(DAGGER_I32, 4, 4, 2, 2);
    AR_FAILS(dagger_array_full(rt, &d, 0.5, &a), DAGGER_ERR_INVALID_ARG, "not an integer");
    AR_FAILS(dagger_array_full(rt, &d, 3e9, &a), DAGGER_ERR_INVALID_ARG, "not an integer");
    AR_FAILS(dagger_array_from_fn(rt, &d, (dagger_index_fn_id_t){12345}, NULL, 0, &a),
             DAGGER_ERR_NOT_FOUND, "not registered");
    /* Destroyed handles are errors, not crashes. */
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_destroy(a));
    AR_FAILS(dagger_array_destroy(a), DAGGER_ERR_BAD_HANDLE, "not a live array");
    int32_t buf[16];
    AR_FAILS(dagger_array_collect(a, buf), DAGGER_ERR_BAD_HANDLE, "not a live array");
    cr_assert_eq(dagger_array_nblocks(a), 0u);
    /* Not inside a region. */
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_STATE,
             "dagger_array_zeros: cannot create the array's blocks: dagger_chunk_create_many: a region "
             "is open");
    AR_OK(dagger_region_end(r));
    /* A call that opens a region of its own says so, under its own name,
     * when one is open already. */
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_FAILS(dagger_array_collect(a, buf), DAGGER_ERR_STATE,
             "dagger_array_collect: opens a region of its own, and cannot: dagger_region_begin: "
             "region");
    AR_FAILS(dagger_array_fill(NULL, a, 1.0), DAGGER_ERR_STATE,
             "dagger_array_fill: opens a region of its own");
    AR_OK(dagger_region_end(r));
    AR_OK(dagger_array_destroy(a));
    AR_FAILS(dagger_index_fn_register(rt, "test.poly", NULL, &(dagger_index_fn_id_t){0}),
             DAGGER_ERR_INVALID_ARG, "NULL");
    AR_OK(dagger_finalize(rt));
}
