/* One rank out of memory while the others are not (1-4 ranks): the call
 * that needed the memory fails on every rank with the same status and
 * detail, naming the rank, and the runtime stays usable. No crash, no
 * divergence, no hang. */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>

#include "array_util.h"

/* Under ASan or TSan an allocation beyond its limit aborts unless told to
 * return NULL, as the C library does; these tests need the library's
 * answer. (TSAN_OPTIONS from tools/tsan-tests adds to this.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* The same detail on every rank. */
static void expect_same_detail_everywhere(dagger_runtime_t *rt)
{
    char mine[512];
    snprintf(mine, sizeof(mine), "%s", dagger_error_detail());
    void *all = NULL;
    size_t lens[8];
    int n = dagger_nranks(rt);
    cr_assert_leq(n, 8);
    AR_OK(dagger_allgather(rt, mine, strlen(mine) + 1, &all, lens));
    for (int r = 0; r < n; r++) {
        const char *theirs = (const char *)all;
        for (int q = 0; q < r; q++)
            theirs += lens[q];
        cr_expect_str_eq(theirs, mine, "rank %d said '%s', this rank '%s'", r, theirs, mine);
    }
    free(all);
}

/* An owner whose memory cannot hold its block fails the call on every rank
 * with the same detail naming it, and nothing is created; the runtime stays
 * usable. The block is 2^47 doubles (1 PiB, beyond any address space, so
 * the allocation fails whatever the overcommit setting) and lives on the
 * last rank alone: before 2026-12-06 that rank failed and the others
 * returned DAGGER_OK with an array, and the job diverged at the next call. */
Test(out_of_memory, an_owner_that_cannot_allocate_fails_creation_everywhere)
{
    dagger_runtime_t *rt = ar_init();
    int n = dagger_nranks(rt), last = n - 1;
    int table[2] = {last, 0};
    dagger_dist_t dist = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = 2};
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2,
                             .dims = {((size_t)1 << 40) + 1, 128},
                             .block = {(size_t)1 << 40, 128}, .dist = &dist};
    char want[128];
    snprintf(want, sizeof(want), "rank %d, the owner of chunk 0 of the call, cannot allocate", last);
    dagger_array_t *a = (dagger_array_t *)&d; /* not NULL before: the call clears it */
    AR_FAILS(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_NO_MEMORY, want);
    cr_expect_null(a);
    expect_same_detail_everywhere(rt);
    /* The raw chunk calls likewise, one or several. */
    dagger_chunk_desc_t huge = {.dtype = DAGGER_F64, .ndims = 2,
                                .dims = {(size_t)1 << 40, 128}, .owner = last};
    dagger_chunk_desc_t small = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .owner = 0};
    dagger_chunk_t c = {7};
    AR_FAILS(dagger_chunk_create(rt, &huge, &c), DAGGER_ERR_NO_MEMORY, "the owner of the chunk");
    cr_expect_eq(c.id, 0u);
    expect_same_detail_everywhere(rt);
    dagger_chunk_desc_t three[3] = {small, huge, small};
    dagger_chunk_t cs[3];
    snprintf(want, sizeof(want), "rank %d, the owner of chunk 1 of the call", last);
    AR_FAILS(dagger_chunk_create_many(rt, 3, three, cs), DAGGER_ERR_NO_MEMORY, want);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(cs[i].id, 0u, "chunk %d of a failed call has id %llu", i,
                     (unsigned long long)cs[i].id);
    expect_same_detail_everywhere(rt);
    /* Usable: a small array is made, filled and collected. */
    dagger_array_desc_t ok = AR_D2(DAGGER_F64, 5, 4, 2, 3);
    AR_OK(dagger_array_full(rt, &ok, 2.5, &a));
    double want_v[20];
    for (int i = 0; i < 20; i++)
        want_v[i] = 2.5;
    ar_expect(a, want_v, 0, "full after the failures");
    AR_OK(dagger_array_destroy(a));
    dagger_chunk_desc_t two[2] = {small, small};
    AR_OK(dagger_chunk_create_many(rt, 2, two, cs));
    cr_expect(cs[0].id && cs[1].id && cs[0].id != cs[1].id);
    AR_OK(dagger_chunk_free(rt, cs[0]));
    AR_OK(dagger_chunk_free(rt, cs[1]));
    AR_OK(dagger_chunk_create_many(rt, 0, NULL, NULL));
    AR_OK(dagger_finalize(rt));
}

/* This process's address space in bytes (/proc/self/statm), or 0. */
static size_t address_space(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (size_t)pages * 4096;
}

static int read_first(dagger_task_t *t)
{
    const double *p = dagger_task_data(t, 0);
    return p && p[0] == 0 ? DAGGER_OK : DAGGER_ERR_INTERNAL;
}

/* A task on the last rank reads a 512 MiB chunk of rank 0; the last rank's
 * address space is capped 256 MiB above what it uses (RLIMIT_AS), so the
 * buffer for the incoming bytes cannot be had there. Before 2026-12-06 that
 * rank crashed: its task ran with no data (a NULL argument), or the
 * transport released the incoming message's descriptor inside UCX's
 * callback (a segfault in ucp_am_data_release). Now the region ends with
 * DAGGER_ERR_NO_MEMORY on every rank, the same detail naming the rank and
 * the buffer, the task does not run, and after the cap is lifted the same
 * region runs. */
Test(out_of_memory, a_receiver_that_cannot_allocate_fails_the_region_everywhere, .timeout = 120)
{
    dagger_runtime_t *rt = ar_init();
    int n = dagger_nranks(rt), last = n - 1, me = dagger_rank(rt);
    if (n < 2) {
        AR_OK(dagger_finalize(rt));
        cr_skip_test("one rank receives nothing");
    }
    dagger_codelet_t cl;
    dagger_codelet_desc_t cd = {.name = "oom.read_first", .cpu = read_first};
    AR_OK(dagger_codelet_register(rt, &cd, &cl));
    dagger_chunk_desc_t big = {.dtype = DAGGER_F64, .ndims = 1, .dims = {(size_t)1 << 26},
                               .owner = 0};
    dagger_chunk_t c;
    AR_OK(dagger_chunk_create(rt, &big, &c));
    struct rlimit was;
    cr_assert_eq(getrlimit(RLIMIT_AS, &was), 0);
    for (int round = 0; round < 2; round++) {
        if (me == last && round == 0) {
            struct rlimit cap = was;
            cap.rlim_cur = address_space() + ((size_t)256 << 20);
            cr_assert_eq(setrlimit(RLIMIT_AS, &cap), 0, "setrlimit: %s", strerror(errno));
        }
        dagger_region_t *r;
        AR_OK(dagger_region_begin(rt, NULL, &r));
        dagger_arg_t a = DAGGER_IN(dagger_view(rt, c));
        dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(last)};
        AR_OK(dagger_submit(r, cl, 1, &a, &o, NULL, NULL));
        dagger_status_t st = dagger_region_end(r);
        if (me == last && round == 0)
            cr_assert_eq(setrlimit(RLIMIT_AS, &was), 0);
        if (round == 1) {
            AR_OK(st);
            break;
        }
        char want[64];
        snprintf(want, sizeof(want), "rank %d", last);
        cr_expect_eq(st, DAGGER_ERR_NO_MEMORY, "the region ended with %s: %s",
                     dagger_strerror(st), dagger_error_detail());
        cr_expect(strstr(dagger_error_detail(), want), "the detail names rank %d: %s", last,
                  dagger_error_detail());
        expect_same_detail_everywhere(rt);
    }
    AR_OK(dagger_chunk_free(rt, c));
    AR_OK(dagger_finalize(rt));
}
