/* Argument checks shared by every routine: what a matrix is, and whether
 * operands fit together. Messages say what to change. */
#include <stdio.h>

#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

dagger_status_t dg_la_mat(dagger_array_t *a, int ndims, const char *fn, const char *name,
                          dg_la_mat_t *out)
{
    dagger_array_t *x = dg_arr_get(a, fn);
    if (!x)
        return DAGGER_ERR_BAD_HANDLE;
    if (x->dtype != DAGGER_F64 && x->dtype != DAGGER_F32)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s is an array of %s; linear algebra takes f64 or "
                        "f32 arrays", fn, name, dg_arr_dtype_name(x->dtype));
    if (x->ndims != ndims)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s has %d dimension(s); give it %d (%s)", fn,
                        name, x->ndims, ndims, ndims == 1 ? "a vector" : "a matrix");
    /* The tiles are the array's blocks: a view's box cuts them (its tasks
     * called BLAS with a wrong leading dimension and returned success). */
    if (x->parent)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s is a view of an array; linear algebra "
                        "works on whole arrays: copy the view into an array of its own first "
                        "(dagger_array_similar + dagger_array_copy)", fn, name);
    dg_la_describe(x, out);
    return DAGGER_OK;
}

void dg_la_describe(dagger_array_t *x, dg_la_mat_t *out)
{
    *out = (dg_la_mat_t){.a = x, .vec = x->ndims == 1, .m = x->dims[0], .n = x->dims[1],
                         .mb = x->block[0], .nb = x->block[1], .mt = x->nb[0], .nt = x->nb[1]};
    if (out->mb > out->m)
        out->mb = out->m;
    if (out->nb > out->n)
        out->nb = out->n;
}

dagger_status_t dg_la_same_kind(const dg_la_mat_t *a, const dg_la_mat_t *b, const char *fn,
                                const char *an, const char *bn)
{
    if (a->a->rt != b->a->rt)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s and %s belong to different runtimes", fn,
                        an, bn);
    if (a->a->dtype != b->a->dtype)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s is %s but %s is %s; give both the same dtype",
                        fn, an, dg_arr_dtype_name(a->a->dtype), bn,
                        dg_arr_dtype_name(b->a->dtype));
    return DAGGER_OK;
}

dagger_status_t dg_la_check_block(size_t have, size_t want, const char *fn, const char *what,
                                  const char *against)
{
    if (have == want)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s is %zu but must equal %s (%zu): create it "
                    "with that block size (or re-block a copy with dagger_array_copy)", fn, what,
                    have, against, want);
}

/* Checks the dimension `have` of an operand against the `want` of another. */
dagger_status_t dg_la_check_dim(size_t have, size_t want, const char *fn, const char *what,
                                const char *against)
{
    if (have == want)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s is %zu but must equal %s (%zu)", fn, what,
                    have, against, want);
}

dagger_status_t dg_la_check_square(const dg_la_mat_t *a, const char *fn, const char *name)
{
    if (a->m == a->n)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s is %zu x %zu; it must be square", fn, name,
                    a->m, a->n);
}

dagger_status_t dg_la_check_flag(int v, int max, const char *fn, const char *what)
{
    if (v >= 0 && v <= max)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s %d is not one of its DAGGER_LA_* values", fn,
                    what, v);
}

dagger_status_t dg_la_check_distinct(const dagger_array_t *w, const dagger_array_t *r,
                                     const char *fn, const char *wname, const char *rname)
{
    if (w != r)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s must not be %s (give %s its own array)", fn,
                    wname, rname, wname);
}
