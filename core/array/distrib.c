/* Block -> rank maps. Every rank computes them from uniform inputs only
 * (the processor table, the block grid, the user's map), so every rank
 * agrees on who owns what without a message. */
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/array/array_internal.h"
#include "core/base/status_internal.h"

/* Blocks dealt over the CPU processors of all ranks, in table order. */
static dagger_status_t deal_over_procs(const dagger_array_t *a, int *owners, const char *fn)
{
    int n = dagger_procs(a->rt, NULL, 0);
    dagger_proc_info_t *p = n > 0 ? dg_calloc((size_t)n, sizeof(*p)) : NULL;
    if (!p)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn);
    dagger_procs(a->rt, p, n);
    int ncpu = 0;
    for (int i = 0; i < n; i++)
        if (p[i].kind == DAGGER_PROC_CPU)
            p[ncpu++] = p[i];
    for (size_t b = 0; b < a->nblocks; b++)
        owners[b] = ncpu ? p[b % (size_t)ncpu].rank : (int)(b % (size_t)dagger_nranks(a->rt));
    free(p);
    return DAGGER_OK;
}

/* The squarest prows x pcols = nranks with prows <= pcols. */
static void squarest(int nranks, int *prows, int *pcols)
{
    int r = 1;
    for (int q = 1; q * q <= nranks; q++)
        if (nranks % q == 0)
            r = q;
    *prows = r;
    *pcols = nranks / r;
}

static dagger_status_t cyclic_2d(const dagger_array_t *a, const dagger_dist_t *d, int *owners,
                                 const char *fn)
{
    int nranks = dagger_nranks(a->rt), pr = d->prows, pc = d->pcols;
    if (pr == 0 && pc == 0)
        squarest(nranks, &pr, &pc);
    DG_CHECK_ARG(pr > 0 && pc > 0 && (long)pr * pc <= nranks,
                 "%s: a %d x %d rank grid for a job of %d ranks; use prows * pcols <= %d (or 0, 0 "
                 "for the squarest grid)", fn, d->prows, d->pcols, nranks, nranks);
    for (size_t b = 0; b < a->nblocks; b++) {
        size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
        dg_arr_block_box(a, b, idx, off, ext);
        owners[b] = (int)(idx[0] % (size_t)pr) + pr * (int)(idx[1] % (size_t)pc);
    }
    return DAGGER_OK;
}

static dagger_status_t user_map(const dagger_array_t *a, const dagger_dist_t *d, int *owners,
                                const char *fn)
{
    int nranks = dagger_nranks(a->rt);
    if (d->kind == DAGGER_DIST_MAP)
        DG_CHECK_ARG(d->map, "%s: DAGGER_DIST_MAP without a map function", fn);
    else
        DG_CHECK_ARG(d->table && d->ntable == a->nblocks, "%s: DAGGER_DIST_TABLE has %zu entries "
                     "for an array of %zu blocks", fn, d->table ? d->ntable : 0, a->nblocks);
    for (size_t b = 0; b < a->nblocks; b++) {
        size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
        dg_arr_block_box(a, b, idx, off, ext);
        int r = d->kind == DAGGER_DIST_MAP ? d->map(idx, a->ndims, nranks, d->map_ctx) : d->table[b];
        DG_CHECK_ARG(r >= 0 && r < nranks, "%s: the distribution gives block %zu to rank %d; the "
                     "job has ranks 0 to %d", fn, b, r, nranks - 1);
        owners[b] = r;
    }
    return DAGGER_OK;
}

dagger_status_t dg_arr_owners(const dagger_array_t *a, const dagger_dist_t *dist, int *owners,
                              const char *fn)
{
    if (!dist || dist->kind == DAGGER_DIST_DEFAULT)
        return deal_over_procs(a, owners, fn);
    switch (dist->kind) {
    case DAGGER_DIST_CYCLIC_2D:
        return cyclic_2d(a, dist, owners, fn);
    case DAGGER_DIST_MAP:
    case DAGGER_DIST_TABLE:
        return user_map(a, dist, owners, fn);
    default:
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: unknown distribution kind %d", fn,
                        (int)dist->kind);
    }
}
