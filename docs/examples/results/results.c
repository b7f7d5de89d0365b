/* Task results as data (docs/regions.md, "Results as data"): a task returns a
 * 4x4 matrix, every rank fetches it, a task on another rank updates it in
 * place, and the fetch shows the update; a view of a chunk is fetched inside
 * a region; a failed task's value is an error when fetched, never stale
 * bytes. Exits non-zero when something is wrong. */
#include <dagger.h>
#include <stdio.h>

static int rand44(dagger_task_t *t)                  /* t = spawn rand(4, 4) */
{
    uint64_t x = *(const uint64_t *)dagger_task_arg(t, 0).data;
    size_t size;
    double *m = dagger_task_result(t, &size);        /* 128 bytes, zeroed */
    for (size_t i = 0; i < size / sizeof(double); i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        m[i] = (double)(x >> 11) / 9007199254740992.0;
    }
    return DAGGER_OK;
}

static int add1(dagger_task_t *t)                    /* add1!(InOut(t)) */
{
    dagger_slot_t v = dagger_task_arg(t, 0);         /* the value, on this rank */
    for (size_t i = 0; i < v.bytes / sizeof(double); i++)
        ((double *)v.data)[i] += 1.0;
    return DAGGER_OK;
}

static int broken(dagger_task_t *t)
{
    return dagger_task_fail(t, "no result today");
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    if (dagger_init(&argc, &argv, NULL, &rt) != DAGGER_OK)
        return 1;
    int me = dagger_rank(rt), other = dagger_nranks(rt) - 1, bad = 0;
    dagger_codelet_t crand, cadd, cbroken;
    dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "rand44", .cpu = rand44,
                                                         .return_size = 16 * sizeof(double)},
                            &crand);
    dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "add1", .cpu = add1}, &cadd);
    dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "broken", .cpu = broken,
                                                         .return_size = 8}, &cbroken);
    uint64_t seed = 7;
    dagger_future_t t, f;
    dagger_region_t *r;
    dagger_region_begin(rt, NULL, &r);
    dagger_task_opts_t on0 = {.scope = &DAGGER_SCOPE_RANK(0)};
    dagger_submit(r, crand, 1, &DAGGER_VALUE(&seed, sizeof(seed)), &on0, NULL, &t);
    dagger_region_end(r);

    double b[16], c[16];
    dagger_fetch(rt, t, b, sizeof(b), NULL);         /* B = fetch(t), on every rank */

    dagger_region_begin(rt, NULL, &r);
    dagger_task_opts_t elsewhere = {.scope = &DAGGER_SCOPE_RANK(other)};
    dagger_submit(r, cadd, 1, &DAGGER_FUTURE_INOUT(t), &elsewhere, NULL, NULL);
    dagger_region_end(r);
    dagger_fetch(rt, t, c, sizeof(c), NULL);         /* fetch(t) == B .+ 1 */
    for (int i = 0; i < 16; i++)
        bad |= c[i] != b[i] + 1.0;
    if (me == 0)
        printf("B[0] = %.6f, after add1! on rank %d: %.6f\n", b[0], other, c[0]);

    /* A chunk's and a view's current bytes, inside a region, on every rank. */
    dagger_chunk_t m;
    dagger_chunk_create(rt, &(dagger_chunk_desc_t){.dtype = DAGGER_F64, .ndims = 1, .dims = {8},
                                                   .owner = 0}, &m);
    dagger_view_t tail = dagger_view_sub(dagger_view(rt, m), (size_t[]){4}, (size_t[]){4});
    double got[4];
    dagger_region_begin(rt, NULL, &r);
    dagger_submit(r, cadd, 1, &DAGGER_INOUT(tail), &elsewhere, NULL, NULL);
    dagger_fetch_view(rt, tail, got, sizeof(got), NULL); /* elements 4..7, now 1.0 */
    dagger_region_end(r);
    for (int i = 0; i < 4; i++)
        bad |= got[i] != 1.0;

    dagger_region_begin(rt, NULL, &r);
    dagger_submit(r, cbroken, 0, NULL, &elsewhere, NULL, &f);
    dagger_status_t st = dagger_region_end(r);       /* DAGGER_ERR_TASK_FAILED everywhere */
    double v;
    dagger_status_t fs = dagger_fetch(rt, f, &v, sizeof(v), NULL);
    bad |= st != DAGGER_ERR_TASK_FAILED || fs != st;
    if (me == 0)
        printf("fetch of the failed task's value: %s\n  %s\n", dagger_strerror(fs),
               dagger_error_detail());
    dagger_finalize(rt);
    return bad;
}
