/* LAPACK tile codelets of tiled Householder QR: geqrt (a diagonal tile),
 * gemqrt (its reflectors on a tile to the right), tpqrt (the R of a
 * diagonal tile on top of a tile below it), tpmqrt (those reflectors on a
 * pair of tiles). The inner blocking ib is the same for a factorisation
 * and its application: min(par.ib, reflectors), as both sides compute it. */
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/linalg/la_blas_lib.h"
#include "core/linalg/linalg_internal.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

typedef struct qr_task {
    dagger_slot_t s[4];
    dg_la_par_t p;
    void *work;
} qr_task_t;

/* Loads nviews tiles and the parameters, and allocates work (elements). */
static int load(dagger_task_t *t, int nviews, size_t work, qr_task_t *q)
{
    if (dagger_task_nargs(t) != nviews + 1 || dg_la_par_get(t, &q->p))
        return dagger_task_fail(t, "malformed QR tile task");
    for (int i = 0; i < nviews; i++)
        q->s[i] = dagger_task_arg(t, i);
    int rc = dg_la_blas_ready(t);
    if (rc)
        return rc;
    q->work = dg_malloc((work ? work : 1) * dagger_dtype_size(q->s[0].dtype));
    if (!q->work)
        return dagger_task_fail(t, "QR tile task: out of memory for its workspace");
    return DAGGER_OK;
}

static int done(dagger_task_t *t, qr_task_t *q, lapack_int info, const char *what)
{
    free(q->work);
    if (info)
        return dagger_task_fail(t, "%s: LAPACK rejected argument %d", what, (int)-info);
    return DAGGER_OK;
}

/* Tile rows, columns, reflectors and inner blocking of the first tile. */
#define DIMS(q, m, n)                                                  \
    int m = (int)(q).s[0].dims[0], n = (int)(q).s[0].dims[1]

/* args: A_kk (INOUT), T_kk (OUT). */
int dg_la_geqrt_impl(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0);
    qr_task_t q;
    if (load(t, 2, (size_t)a.dims[1] * DG_LA_IB_MAX, &q))
        return DAGGER_ERR_TASK_FAILED;
    DIMS(q, m, n);
    int ib = MIN(q.p.ib, MIN(m, n));
    lapack_int info = a.dtype == DAGGER_F64
        ? LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, m, n, ib, q.s[0].data, dg_la_ld(&q.s[0]),
                              q.s[1].data, dg_la_ld(&q.s[1]), q.work)
        : LAPACKE_sgeqrt_work(LAPACK_COL_MAJOR, m, n, ib, q.s[0].data, dg_la_ld(&q.s[0]),
                              q.s[1].data, dg_la_ld(&q.s[1]), q.work);
    return done(t, &q, info, "geqrt");
}

/* args: V = A_kk (IN, strictly lower), T_kk (IN), C (INOUT). */
int dg_la_gemqrt_impl(dagger_task_t *t)
{
    dagger_slot_t c = dagger_task_arg(t, 2);
    qr_task_t q;
    if (load(t, 3, (size_t)c.dims[1] * DG_LA_IB_MAX, &q))
        return DAGGER_ERR_TASK_FAILED;
    DIMS(q, vm, vn);
    int k = MIN(vm, vn), ib = MIN(q.p.ib, k);
    char tr = q.p.ta ? 'T' : 'N';
    int m = (int)c.dims[0], n = (int)c.dims[1];
    lapack_int info = c.dtype == DAGGER_F64
        ? LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', tr, m, n, k, ib, q.s[0].data,
                               dg_la_ld(&q.s[0]), q.s[1].data, dg_la_ld(&q.s[1]), c.data,
                               dg_la_ld(&c), q.work)
        : LAPACKE_sgemqrt_work(LAPACK_COL_MAJOR, 'L', tr, m, n, k, ib, q.s[0].data,
                               dg_la_ld(&q.s[0]), q.s[1].data, dg_la_ld(&q.s[1]), c.data,
                               dg_la_ld(&c), q.work);
    return done(t, &q, info, "gemqrt");
}

/* args: A_kk (INOUT, upper: R), A_mk (INOUT), T_mk (OUT). */
int dg_la_tpqrt_impl(dagger_task_t *t)
{
    dagger_slot_t b = dagger_task_arg(t, 1);
    qr_task_t q;
    if (load(t, 3, (size_t)b.dims[1] * DG_LA_IB_MAX, &q))
        return DAGGER_ERR_TASK_FAILED;
    int m = (int)b.dims[0], n = (int)b.dims[1], ib = MIN(q.p.ib, n);
    lapack_int info = b.dtype == DAGGER_F64
        ? LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, m, n, 0, ib, q.s[0].data, dg_la_ld(&q.s[0]),
                              b.data, dg_la_ld(&b), q.s[2].data, dg_la_ld(&q.s[2]), q.work)
        : LAPACKE_stpqrt_work(LAPACK_COL_MAJOR, m, n, 0, ib, q.s[0].data, dg_la_ld(&q.s[0]),
                              b.data, dg_la_ld(&b), q.s[2].data, dg_la_ld(&q.s[2]), q.work);
    return done(t, &q, info, "tpqrt");
}

/* args: V = A_mk (IN), T_mk (IN), C_kn (INOUT), C_mn (INOUT). */
int dg_la_tpmqrt_impl(dagger_task_t *t)
{
    dagger_slot_t b = dagger_task_arg(t, 3);
    qr_task_t q;
    if (load(t, 4, (size_t)b.dims[1] * DG_LA_IB_MAX, &q))
        return DAGGER_ERR_TASK_FAILED;
    DIMS(q, vm, vn);
    (void)vm;
    int k = vn, ib = MIN(q.p.ib, k), m = (int)b.dims[0], n = (int)b.dims[1];
    char tr = q.p.ta ? 'T' : 'N';
    lapack_int info = b.dtype == DAGGER_F64
        ? LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, 'L', tr, m, n, k, 0, ib, q.s[0].data,
                               dg_la_ld(&q.s[0]), q.s[1].data, dg_la_ld(&q.s[1]), q.s[2].data,
                               dg_la_ld(&q.s[2]), b.data, dg_la_ld(&b), q.work)
        : LAPACKE_stpmqrt_work(LAPACK_COL_MAJOR, 'L', tr, m, n, k, 0, ib, q.s[0].data,
                               dg_la_ld(&q.s[0]), q.s[1].data, dg_la_ld(&q.s[1]), q.s[2].data,
                               dg_la_ld(&q.s[2]), b.data, dg_la_ld(&b), q.work);
    return done(t, &q, info, "tpmqrt");
}
