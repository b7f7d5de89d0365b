/* Element-wise operations: arithmetic with arrays and scalars, copy, fill,
 * transpose and map with a user codelet. Each checks its operands, then
 * runs one task per tile (core/array/jobs.c). */
#include <string.h>

#include "core/array/params.h"
#include "core/array/tiles.h"
#include "core/base/status_internal.h"

/* Checks the handles and that every input matches out (transposed when
 * dim_of is given). */
static dagger_status_t check_operands(dagger_array_t *out, int nin, dagger_array_t *const in[],
                                      const int *dim_of, const char *fn)
{
    if (!dg_arr_get(out, fn))
        return DAGGER_ERR_BAD_HANDLE;
    for (int i = 0; i < nin; i++) {
        if (!dg_arr_get(in[i], fn))
            return DAGGER_ERR_BAD_HANDLE;
        dagger_status_t st = dg_arr_check_match(out, in[i], dim_of, fn);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

/* Runs an element-wise kernel with inputs in[0..nin): inputs that are the
 * output itself are not passed again (the kernel reads argument 0). */
static dagger_status_t run_ewise(dagger_region_t *r, dg_arr_ew_t p, dagger_array_t *out, int nin,
                                 dagger_array_t *const in[], const char *fn)
{
    dagger_status_t st = check_operands(out, nin, in, NULL, fn);
    if (st != DAGGER_OK)
        return st;
    dagger_array_t *pass[2];
    int npass = 0;
    p.nin = (uint32_t)nin;
    p.stream = out->nelems * out->elsize >= DG_EW_STREAM_BYTES;
    for (int i = 0; i < nin; i++) {
        if (in[i] == out)
            p.alias |= (uint8_t)(1u << i);
        else
            pass[npass++] = in[i];
    }
    dg_arr_job_t job = {
        .codelet = DG_ARR_CL_EWISE, .out = out,
        .out_mode = p.alias ? DAGGER_MODE_INOUT : DAGGER_MODE_OUT,
        .nin = npass, .in = pass, .value = &p, .len = sizeof(p),
    };
    return dg_arr_run_job(r, &job, fn);
}

static dagger_status_t check_op(dagger_op_t op, const char *fn)
{
    DG_CHECK_ARG(op >= DAGGER_OP_ADD && op <= DAGGER_OP_DIV,
                 "%s: unknown operation %d (use DAGGER_OP_ADD, _SUB, _MUL or _DIV)", fn, (int)op);
    return DAGGER_OK;
}

dagger_status_t dagger_array_binop(dagger_region_t *r, dagger_op_t op, dagger_array_t *out,
                                   dagger_array_t *a, dagger_array_t *b)
{
    static const char fn[] = "dagger_array_binop";
    dagger_status_t st = check_op(op, fn);
    if (st != DAGGER_OK)
        return st;
    dg_arr_ew_t p = {.kind = DG_EW_ARITH, .op = (uint8_t)op, .form = DG_EW_AB};
    return run_ewise(r, p, out, 2, (dagger_array_t *const[]){a, b}, fn);
}

static dagger_status_t scalar_op(dagger_region_t *r, dagger_op_t op, int form,
                                 dagger_array_t *out, dagger_array_t *a, double s, const char *fn)
{
    dagger_status_t st = check_op(op, fn);
    if (st == DAGGER_OK && !dg_arr_get(out, fn))
        st = DAGGER_ERR_BAD_HANDLE;
    if (st == DAGGER_OK)
        st = dg_arr_check_scalar(out->dtype, s, fn);
    if (st != DAGGER_OK)
        return st;
    dg_arr_ew_t p = {.kind = DG_EW_ARITH, .op = (uint8_t)op, .form = (uint8_t)form, .s = s};
    return run_ewise(r, p, out, 1, (dagger_array_t *const[]){a}, fn);
}

dagger_status_t dagger_array_scalar(dagger_region_t *r, dagger_op_t op, dagger_array_t *out,
                                    dagger_array_t *a, double s)
{
    return scalar_op(r, op, DG_EW_AS, out, a, s, "dagger_array_scalar");
}

dagger_status_t dagger_array_rscalar(dagger_region_t *r, dagger_op_t op, dagger_array_t *out,
                                     double s, dagger_array_t *a)
{
    return scalar_op(r, op, DG_EW_SA, out, a, s, "dagger_array_rscalar");
}

dagger_status_t dagger_array_copy(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    dg_arr_ew_t p = {.kind = DG_EW_COPY};
    return run_ewise(r, p, out, 1, (dagger_array_t *const[]){in}, "dagger_array_copy");
}

dagger_status_t dagger_array_fill(dagger_region_t *r, dagger_array_t *out, double value)
{
    static const char fn[] = "dagger_array_fill";
    if (!dg_arr_get(out, fn))
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = dg_arr_check_scalar(out->dtype, value, fn);
    if (st != DAGGER_OK)
        return st;
    dg_arr_ew_t p = {.kind = DG_EW_FILL, .s = value};
    return run_ewise(r, p, out, 0, NULL, fn);
}

dagger_status_t dagger_array_transpose(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    static const char fn[] = "dagger_array_transpose";
    static const int swap[DG_ARR_MAX_OPS][DAGGER_MAX_DIMS] = {{0, 1, 2, 3}, {1, 0, 2, 3}};
    dagger_array_t *const ins[] = {in};
    if (!dg_arr_get(out, fn) || !dg_arr_get(in, fn))
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(out->ndims == 2 && in->ndims == 2, "%s: transpose needs 2-D arrays, these have "
                 "%d and %d dimensions", fn, out->ndims, in->ndims);
    dagger_status_t st = check_operands(out, 1, ins, swap[1], fn);
    if (st != DAGGER_OK)
        return st;
    DG_CHECK_ARG(out != in, "%s: the output is the input; transpose into another array (an "
                 "in-place transpose would read elements it already overwrote)", fn);
    dg_arr_ew_t p = {.kind = DG_EW_TRANSPOSE, .nin = 1};
    dg_arr_job_t job = {
        .codelet = DG_ARR_CL_EWISE, .out = out, .out_mode = DAGGER_MODE_OUT, .nin = 1, .in = ins,
        .dim_of = swap, .value = &p, .len = sizeof(p),
    };
    return dg_arr_run_job(r, &job, fn);
}

dagger_status_t dagger_array_map(dagger_region_t *r, dagger_codelet_t cl, dagger_array_t *out,
                                 int nin, dagger_array_t *const in[], const void *args, size_t len)
{
    static const char fn[] = "dagger_array_map";
    DG_CHECK_ARG(nin >= 0 && nin <= DAGGER_MAX_ARGS - 2 && (in || !nin),
                 "%s: %d inputs (0 to %d, with a non-NULL array)", fn, nin, DAGGER_MAX_ARGS - 2);
    DG_CHECK_ARG(args || !len, "%s: %zu argument bytes at NULL", fn, len);
    if (!dg_arr_get(out, fn))
        return DAGGER_ERR_BAD_HANDLE;
    int inout = 0;
    for (int i = 0; i < nin; i++) {
        /* A map may change the element type: only handles and dims must match. */
        if (!dg_arr_get(in[i], fn))
            return DAGGER_ERR_BAD_HANDLE;
        int same = in[i]->rt == out->rt && in[i]->ndims == out->ndims;
        for (int k = 0; k < DAGGER_MAX_DIMS && same; k++)
            same = in[i]->dims[k] == out->dims[k];
        DG_CHECK_ARG(same, "%s: input %d does not have the output's dims", fn, i);
        inout |= in[i] == out;
    }
    dg_arr_job_t job = {
        .out = out, .out_mode = inout ? DAGGER_MODE_INOUT : DAGGER_MODE_OUT, .nin = nin, .in = in,
        .value = args, .len = len, .user_cl = &cl,
    };
    return dg_arr_run_job(r, &job, fn);
}
