/* Union scopes and exact processors (docs/regions.md, "Scopes"). Every rank
 * runs this; each task records where it ran, and the program checks it. */
#include <dagger.h>
#include <stdio.h>

static int where(dagger_task_t *t)
{
    int32_t *p = dagger_task_arg(t, 0).data;
    p[0] = dagger_task_rank(t);
    p[1] = dagger_task_proc(t);
    return DAGGER_OK;
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    if (dagger_init(&argc, &argv, NULL, &rt) != DAGGER_OK)
        return 1;
    int n = dagger_nranks(rt), last = n - 1, bad = 0;
    dagger_codelet_t cl;
    dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "where", .cpu = where}, &cl);

    /* The last CPU thread of the last rank, from the processor table. */
    dagger_proc_info_t procs[256];
    int np = dagger_procs(rt, procs, 256), q = 0;
    for (int i = 0; i < np && i < 256; i++)
        if (procs[i].rank == last && procs[i].kind == DAGGER_PROC_CPU)
            q = i;

    dagger_chunk_t c[4]; /* one (rank, processor) pair per task, owners 0, 1, 2, ... */
    for (int i = 0; i < 4; i++)
        dagger_chunk_create(rt, &(dagger_chunk_desc_t){.dtype = DAGGER_I32, .ndims = 1,
                                                       .dims = {2}, .owner = i % n}, &c[i]);

    /* "Rank 0's CPUs, or processor q, or the last rank's GPU (if it has one)". */
    dagger_scope_t u = DAGGER_SCOPE_UNION(
        DAGGER_SCOPE_RANK(0), DAGGER_SCOPE_PROC(q),
        ((dagger_scope_t){.ranks = (const int[]){last}, .nranks = 1, .kinds = DAGGER_PROC_CUDA}));
    dagger_task_opts_t o = {.scope = &u};
    dagger_region_t *r;
    dagger_region_begin(rt, NULL, &r);
    for (int i = 0; i < 4; i++)
        dagger_submit(r, cl, 1, &DAGGER_INOUT(dagger_view(rt, c[i])), &o, NULL, NULL);
    dagger_status_t st = dagger_region_end(r);

    for (int i = 0; i < 4; i++) {
        int32_t got[2];
        dagger_fetch_chunk(rt, c[i], got, sizeof(got), NULL); /* the same bytes on every rank */
        /* Owner computes among the candidates: the owner when it is one, else rank 0. */
        int owner = i % n, want = owner == last ? last : 0;
        if (got[0] != want || (want == last && last > 0 && got[1] != q))
            bad = 1;
        if (dagger_rank(rt) == 0)
            printf("task %d (data on rank %d) ran on rank %d, processor %d\n", i, owner, got[0],
                   got[1]);
    }
    /* A union that names no processor here is an error on every rank. */
    dagger_scope_t gpus = DAGGER_SCOPE_UNION(
        ((dagger_scope_t){.kinds = DAGGER_PROC_CUDA}),
        ((dagger_scope_t){.kinds = DAGGER_PROC_HIP}));
    if (dagger_region_begin(rt, &gpus, &r) != DAGGER_ERR_SCOPE) {
        bad = 1;
        dagger_region_end(r);
    } else if (dagger_rank(rt) == 0) {
        printf("%s\n", dagger_error_detail());
    }
    dagger_finalize(rt);
    return st != DAGGER_OK || bad;
}
