/* The put and take codelets: copy a tile between its slot and a box of a
 * host buffer bound on this rank, one line (dimension 0) at a time. */
#include <string.h>

#include "core/array/array_internal.h"
#include "core/array/params.h"

/* to_host: slot -> host, else host -> slot. */
static int move_tile(dagger_task_t *t, int to_host)
{
    dagger_slot_t s = dagger_task_arg(t, 0);
    dg_arr_xfer_t x;
    if (dg_arr_param(t, 1, &x, sizeof(x)))
        return dagger_task_fail(t, "malformed collect parameters");
    char *host = dg_arr_bound(x.key);
    if (!host)
        return dagger_task_fail(t, "rank %d gave a NULL host buffer to %s", dagger_task_rank(t),
                                to_host ? "dagger_array_collect" : "dagger_array_scatter");
    size_t es = dagger_dtype_size(s.dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < s.ndims ? s.dims[k] : 1;
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++) {
                size_t h = x.off[0] + x.box[0] * ((x.off[1] + i1) +
                                                  x.box[1] * ((x.off[2] + i2) + x.box[2] * (x.off[3] + i3)));
                char *p = (char *)s.data + (i1 * s.strides[1] + i2 * s.strides[2] + i3 * s.strides[3]) * es;
                if (to_host)
                    memcpy(host + h * es, p, ext[0] * es);
                else
                    memcpy(p, host + h * es, ext[0] * es);
            }
    return DAGGER_OK;
}

int dg_arr_put_impl(dagger_task_t *t)
{
    return move_tile(t, 1);
}

int dg_arr_take_impl(dagger_task_t *t)
{
    return move_tile(t, 0);
}
