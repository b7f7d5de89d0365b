/* Tiles of a matrix and the tile tasks every DAG is built from. */
#include "core/linalg/linalg_internal.h"
#include "core/base/spmd_caller.h"

dagger_view_t dg_la_tile(const dg_la_mat_t *a, size_t i, size_t j)
{
    return dagger_array_block(a->a, i + j * a->mt);
}

dagger_view_t dg_la_qr_v(const dg_la_mat_t *a, size_t k)
{
    dagger_view_t v = dg_la_tile(a, k, k);
    return dg_la_tile_m(a, k) > 1 ? dagger_view_mod(v, DAGGER_UNIT_LOWER) : v;
}

size_t dg_la_tile_m(const dg_la_mat_t *a, size_t i)
{
    size_t r = a->m - i * a->mb;
    return r < a->mb ? r : a->mb;
}

size_t dg_la_tile_n(const dg_la_mat_t *a, size_t j)
{
    size_t r = a->n - j * a->nb;
    return r < a->nb ? r : a->nb;
}

dagger_status_t dg_la_begin(dg_la_ctx_t *c, dagger_runtime_t *rt, dagger_region_t *user,
                            const char *fn)
{
    c->fn = fn;
    dagger_status_t in = dg_spmd_allowed(fn); /* before the codelets' registration */
    if (in != DAGGER_OK)
        return in;
    for (int i = 0; i < DG_LA_CL_COUNT; i++) {
        dagger_status_t st = dg_la_codelet(rt, (dg_la_cl_t)i, &c->cl[i]);
        if (st != DAGGER_OK)
            return st;
    }
    return dg_arr_open(rt, user, &c->sub, fn);
}

dagger_status_t dg_la_end(dg_la_ctx_t *c, dagger_status_t st)
{
    return dg_arr_close(&c->sub, st);
}

dagger_status_t dg_la_submit_on(dg_la_ctx_t *c, dg_la_cl_t cl, int nargs,
                                const dagger_arg_t *args, const dg_la_par_t *par, int priority,
                                int rank)
{
    dagger_arg_t all[DAGGER_MAX_ARGS];
    for (int i = 0; i < nargs; i++)
        all[i] = args[i];
    all[nargs] = DAGGER_VALUE(par, sizeof(*par));
    /* In a region whose scope limits the ranks, a rank of the task's own
     * could admit no processor: placement decides there. */
    dagger_task_opts_t o = {.priority = priority,
                            .scope = rank >= 0 && c->sub.pin ? &DAGGER_SCOPE_RANK(rank) : NULL};
    return dagger_submit(c->sub.r, c->cl[cl], nargs + 1, all, &o, NULL, NULL);
}

dagger_status_t dg_la_submit(dg_la_ctx_t *c, dg_la_cl_t cl, int nargs, const dagger_arg_t *args,
                             const dg_la_par_t *par, int priority)
{
    return dg_la_submit_on(c, cl, nargs, args, par, priority, -1);
}

int dg_la_tile_owner(const dg_la_mat_t *a, size_t i, size_t j)
{
    dagger_array_block_t b;
    return dagger_array_block_info(a->a, i + j * a->mt, &b) == DAGGER_OK ? b.owner : -1;
}

dagger_status_t dg_la_gemm_tile_on(dg_la_ctx_t *r, int ta, int tb, double alpha, dagger_view_t a,
                                   dagger_view_t b, double beta, dagger_view_t c, int prio,
                                   int rank)
{
    dg_la_par_t p = {.ta = ta, .tb = tb, .alpha = alpha, .beta = beta};
    dagger_arg_t args[3] = {DAGGER_IN(a), DAGGER_IN(b), DAGGER_INOUT(c)};
    return dg_la_submit_on(r, DG_LA_CL_GEMM, 3, args, &p, prio, rank);
}

dagger_status_t dg_la_gemm_tile(dg_la_ctx_t *r, int ta, int tb, double alpha, dagger_view_t a,
                                dagger_view_t b, double beta, dagger_view_t c, int prio)
{
    return dg_la_gemm_tile_on(r, ta, tb, alpha, a, b, beta, c, prio, -1);
}

dagger_status_t dg_la_syrk_tile(dg_la_ctx_t *r, int uplo, int ta, double alpha,
                                dagger_view_t a, double beta, dagger_view_t c, int prio)
{
    dg_la_par_t p = {.uplo = uplo, .ta = ta, .alpha = alpha, .beta = beta};
    dagger_modifier_t mod = uplo == DAGGER_LA_UPPER ? DAGGER_UPPER : DAGGER_LOWER;
    dagger_arg_t args[2] = {DAGGER_IN(a), DAGGER_INOUT(dagger_view_mod(c, mod))};
    return dg_la_submit(r, DG_LA_CL_SYRK, 2, args, &p, prio);
}

dagger_status_t dg_la_trsm_tile_on(dg_la_ctx_t *r, const dg_la_par_t *par, dagger_view_t a,
                                   dagger_view_t b, int prio, int rank)
{
    dagger_modifier_t mod = par->uplo == DAGGER_LA_UPPER ? DAGGER_UPPER : DAGGER_LOWER;
    dagger_arg_t args[2] = {DAGGER_IN(dagger_view_mod(a, mod)), DAGGER_INOUT(b)};
    return dg_la_submit_on(r, DG_LA_CL_TRSM, 2, args, par, prio, rank);
}

dagger_status_t dg_la_trsm_tile(dg_la_ctx_t *r, const dg_la_par_t *par, dagger_view_t a,
                                dagger_view_t b, int prio)
{
    return dg_la_trsm_tile_on(r, par, a, b, prio, -1);
}
