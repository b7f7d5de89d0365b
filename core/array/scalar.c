/* Element types the arrays support, scalar checks and conversions, and the
 * reading of by-value task parameters. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/array/array_internal.h"
#include "core/base/status_internal.h"

const char *dg_arr_dtype_name(dagger_dtype_t t)
{
    switch (t) {
    case DAGGER_F32: return "f32";
    case DAGGER_F64: return "f64";
    case DAGGER_I32: return "i32";
    case DAGGER_I64: return "i64";
    case DAGGER_U8: return "u8";
    case DAGGER_U64: return "u64";
    }
    return "unknown";
}

dagger_status_t dg_arr_check_dtype(dagger_dtype_t t, const char *fn)
{
    if (t == DAGGER_F32 || t == DAGGER_F64 || t == DAGGER_I32 || t == DAGGER_I64)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_DTYPE, "%s: element type %s (%d); arrays hold f32, f64, i32 or i64",
                    fn, dg_arr_dtype_name(t), (int)t);
}

dagger_status_t dg_arr_check_scalar(dagger_dtype_t t, double v, const char *fn)
{
    if (t == DAGGER_F32 || t == DAGGER_F64)
        return DAGGER_OK;
    /* 2^63 is the first double past INT64_MAX. */
    double lo = t == DAGGER_I32 ? (double)INT32_MIN : -9223372036854775808.0;
    double hi = t == DAGGER_I32 ? (double)INT32_MAX : 9223372036854775807.0;
    if (v != floor(v) || !(v >= lo) || !(t == DAGGER_I32 ? v <= hi : v < -lo))
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: the scalar %g is not an integer an %s array "
                        "can hold", fn, v, dg_arr_dtype_name(t));
    return DAGGER_OK;
}

double dg_arr_load(dagger_dtype_t t, const void *p)
{
    switch (t) {
    case DAGGER_F32: return *(const float *)p;
    case DAGGER_F64: return *(const double *)p;
    case DAGGER_I32: return *(const int32_t *)p;
    case DAGGER_I64: return (double)*(const int64_t *)p;
    default: return 0;
    }
}

/* Integers saturate (and NaN becomes 0): an out-of-range conversion would be
 * undefined behaviour in C. (double)INT64_MAX rounds up to 2^63, the first
 * value that does not fit. */
static int64_t to_int(double v, int64_t imin, int64_t imax)
{
    if (v != v)
        return 0;
    if (v <= (double)imin)
        return imin;
    if (v >= (double)imax)
        return imax;
    return (int64_t)v;
}

void dg_arr_store(dagger_dtype_t t, void *p, double v)
{
    switch (t) {
    case DAGGER_F32: *(float *)p = (float)v; break;
    case DAGGER_F64: *(double *)p = v; break;
    case DAGGER_I32: *(int32_t *)p = (int32_t)to_int(v, INT32_MIN, INT32_MAX); break;
    case DAGGER_I64: *(int64_t *)p = to_int(v, INT64_MIN, INT64_MAX); break;
    default: break;
    }
}

int dg_arr_slot_dense(const dagger_slot_t *s)
{
    size_t want = 1;
    for (int k = 0; k < s->ndims; k++) {
        if (s->dims[k] > 1 && s->strides[k] != want)
            return 0;
        want *= s->dims[k];
    }
    return 1;
}

int dg_arr_param(dagger_task_t *t, int i, void *p, size_t len)
{
    dagger_slot_t s = dagger_task_arg(t, i);
    if (!s.data || s.bytes != len || s.ndims)
        return -1;
    memcpy(p, s.data, len);
    return 0;
}

uint64_t dg_arr_load_u(dagger_dtype_t t, const void *p)
{
    if (t == DAGGER_I32) {
        int32_t v;
        memcpy(&v, p, sizeof(v));
        return (uint64_t)(int64_t)v;
    }
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

void dg_arr_store_u(dagger_dtype_t t, void *p, uint64_t v)
{
    if (t == DAGGER_I32) {
        uint32_t w = (uint32_t)v; /* two's complement: the low 32 bits */
        memcpy(p, &w, sizeof(w));
    } else
        memcpy(p, &v, sizeof(v));
}
