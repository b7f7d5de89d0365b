/* Tiled linear algebra, internal: the tile codelets, their parameter
 * blocks, the matrix descriptions the DAG builders share, argument checks
 * and re-blocked work copies. Prefix dg_la_. */
#ifndef DG_LINALG_INTERNAL_H
#define DG_LINALG_INTERNAL_H

#include <dagger/linalg.h>

#include "core/array/array_internal.h"

/* ---- tile codelets (a CPU implementation each, some a CUDA one; f32, f64) ---- */

typedef enum dg_la_cl {
    DG_LA_CL_GEMM = 0,  /* C = alpha op(A) op(B) + beta C */
    DG_LA_CL_GEMV,      /* y = alpha op(A) x + beta y */
    DG_LA_CL_SYRK,      /* C = alpha op(A) op(A)^T + beta C (one triangle) */
    DG_LA_CL_TRSM,      /* B = alpha op(A)^-1 B or alpha B op(A)^-1 */
    DG_LA_CL_POTRF,     /* Cholesky of a diagonal tile */
    DG_LA_CL_GETRF,     /* LU of a block column's panel, pivots out */
    DG_LA_CL_LASWP,     /* a panel's row interchanges on another block column */
    DG_LA_CL_LASWP_V,   /* row interchanges given by value (getrs) */
    DG_LA_CL_LU_UPDATE, /* a step's interchanges, trsm and gemm on one block column */
    DG_LA_CL_GEQRT,     /* QR of a diagonal tile */
    DG_LA_CL_GEMQRT,    /* its reflectors applied to a tile of the same rows */
    DG_LA_CL_TPQRT,     /* QR of a triangle on top of a tile below it */
    DG_LA_CL_TPMQRT,    /* those reflectors applied to a pair of tiles */
    DG_LA_CL_COUNT
} dg_la_cl_t;

/* Registers (idempotently) and returns one of them. */
dagger_status_t dg_la_codelet(dagger_runtime_t *rt, dg_la_cl_t which, dagger_codelet_t *out);

/* The inner blocking of the QR kernels (the rows of each T tile), and its
 * largest value (the kernels' workspace is sized by it). */
#define DG_LA_IB 32
#define DG_LA_IB_MAX 64

/* Parameters, passed by value as the task's last argument. */
/* No padding: the bytes are planning inputs every rank hashes alike under
 * uniformity checking, so every byte is a named, initialised field. */
typedef struct dg_la_par {
    int32_t side, uplo, ta, tb, diag;
    int32_t step;              /* tile step, for error messages */
    int32_t ib;                /* inner blocking of the QR kernels */
    int32_t spare;             /* 0 */
    int64_t row0;              /* global index of the tile's first row/column */
    double alpha, beta;
} dg_la_par_t;
_Static_assert(sizeof(dg_la_par_t) == 8 * 4 + 3 * 8, "dg_la_par_t has padding");

/* The implementations (blas_kernels.c, lapack_kernels.c, qr_kernels.c). */
int dg_la_gemm_impl(dagger_task_t *t);
int dg_la_gemv_impl(dagger_task_t *t);
int dg_la_syrk_impl(dagger_task_t *t);
int dg_la_trsm_impl(dagger_task_t *t);
int dg_la_potrf_impl(dagger_task_t *t);
int dg_la_getrf_impl(dagger_task_t *t);
int dg_la_laswp_impl(dagger_task_t *t);
int dg_la_laswp_v_impl(dagger_task_t *t);
int dg_la_lu_update_impl(dagger_task_t *t);
int dg_la_geqrt_impl(dagger_task_t *t);
int dg_la_gemqrt_impl(dagger_task_t *t);
int dg_la_tpqrt_impl(dagger_task_t *t);
int dg_la_tpmqrt_impl(dagger_task_t *t);
#ifdef DAGGER_HAVE_CUDA_LINALG
/* The CUDA ones (core/linalg/cuda): cuBLAS and cuSOLVER on the task's stream. */
int dg_la_gemm_cuda(dagger_task_t *t);
int dg_la_gemv_cuda(dagger_task_t *t);
int dg_la_syrk_cuda(dagger_task_t *t);
int dg_la_trsm_cuda(dagger_task_t *t);
int dg_la_potrf_cuda(dagger_task_t *t);
int dg_la_getrf_cuda(dagger_task_t *t);
int dg_la_laswp_cuda(dagger_task_t *t);
int dg_la_laswp_v_cuda(dagger_task_t *t);
int dg_la_lu_update_cuda(dagger_task_t *t);
int dg_la_geqrt_cuda(dagger_task_t *t);
int dg_la_gemqrt_cuda(dagger_task_t *t);
int dg_la_tpqrt_cuda(dagger_task_t *t);
int dg_la_tpmqrt_cuda(dagger_task_t *t);
#endif

/* The message of a factorisation whose info > 0 (routine DG_LA_CL_POTRF or
 * DG_LA_CL_GETRF; lib "LAPACK" or "cuSOLVER"): names the tile step and the
 * global minor or pivot, the same for the CPU and the GPU kernels. For
 * DG_LA_CL_LASWP (info: 1 + the first bad pivot) it is the interchanges'
 * refusal of pivots a failed panel left. */
void dg_la_info_msg(char *buf, size_t cap, int routine, const dg_la_par_t *p, int info,
                    const char *lib);

/* Every CPU tile kernel's first call: loads OpenBLAS and LAPACKE on the
 * process's first tile (la_blas_lib.h), then keeps one BLAS thread inside
 * each task: OpenBLAS's thread count is global, so every kernel checks it (a
 * load) and lowers it if a caller raised it. DAGGER_OK, or the task failed
 * with what could not be loaded. */
int dg_la_blas_ready(dagger_task_t *t);

/* Reads the parameter block (the last argument); 0 on success. */
int dg_la_par_get(dagger_task_t *t, dg_la_par_t *p);

/* Leading dimension of a 2-D slot (its column stride), at least 1. */
int dg_la_ld(const dagger_slot_t *s);

/* The slots of a lu_update task (the column, the pivots, the panel) are
 * consistent: 0, or the task failed saying how (both implementations). */
int dg_la_lu_update_check(dagger_task_t *t, const dagger_slot_t s[3]);

/* ---- matrices as the DAG builders see them ---- */

typedef struct dg_la_mat {
    dagger_array_t *a;
    int vec;                   /* 1-D (a vector: m x 1) */
    size_t m, n;               /* dims */
    size_t mb, nb;             /* block sizes (nb = 1 for a vector) */
    size_t mt, nt;             /* tiles along each dimension */
} dg_la_mat_t;

/* Checks a is a live f32/f64 array (not a view) with ndims dims (1 or 2) and describes it. */
dagger_status_t dg_la_mat(dagger_array_t *a, int ndims, const char *fn, const char *name,
                          dg_la_mat_t *out);
/* Describes an array without checks (for the routines' own arrays). */
void dg_la_describe(dagger_array_t *x, dg_la_mat_t *out);
/* DAGGER_ERR_INVALID_ARG unless r is NULL: for the LU routines that write
 * host pivots; the message names the routine to call `instead`. */
dagger_status_t dg_la_no_region(dagger_region_t *r, const char *fn, const char *instead);
/* LU in the caller's array: a has one block row (column-panel layout). */
dagger_status_t dg_la_check_panels(const dg_la_mat_t *a, const char *fn, const char *name);
/* Checks P is the pivot array of a (1-D i64, min(M, N), blocks a's column
 * block) and describes it. */
dagger_status_t dg_la_check_pivots(dagger_array_t *P, const dg_la_mat_t *a, const char *fn,
                                   dg_la_mat_t *out);
/* Checks b has a's runtime and dtype. */
dagger_status_t dg_la_same_kind(const dg_la_mat_t *a, const dg_la_mat_t *b, const char *fn,
                                const char *an, const char *bn);
/* Checks that the block sizes have_b (of `what`) equal want; the message says
 * which block to give. */
dagger_status_t dg_la_check_block(size_t have, size_t want, const char *fn, const char *what,
                                  const char *against);
/* Checks a dimension against the one it must equal. */
dagger_status_t dg_la_check_dim(size_t have, size_t want, const char *fn, const char *what,
                                const char *against);
/* Checks a DAGGER_LA_* flag is 0 .. max. */
dagger_status_t dg_la_check_flag(int v, int max, const char *fn, const char *what);
/* A square matrix: m == n. */
dagger_status_t dg_la_check_square(const dg_la_mat_t *a, const char *fn, const char *name);
/* The operand w, which the routine writes, is not the operand r (views
 * never get this far: dg_la_mat refuses them). */
dagger_status_t dg_la_check_distinct(const dagger_array_t *w, const dagger_array_t *r,
                                     const char *fn, const char *wname, const char *rname);

/* The view of tile (i, j) (block (i, j) of a matrix, block i of a vector). */
dagger_view_t dg_la_tile(const dg_la_mat_t *a, size_t i, size_t j);
/* The reflectors V of QR's diagonal tile (k, k) as gemqrt reads them: its
 * strictly lower part, so that gemqrt runs beside the tpqrt that rewrites
 * its R; the whole tile when it has one row (no strictly lower part: its
 * reflector's only element is the implicit unit). */
dagger_view_t dg_la_qr_v(const dg_la_mat_t *a, size_t k);
/* Rows [r0, r0 + m) and columns [0, n) of block column j of a matrix in
 * column-panel layout (one block row). */
dagger_view_t dg_la_panel_rows(const dg_la_mat_t *w, size_t j, size_t r0, size_t m, size_t n);
/* The extents of tile (i, j). */
size_t dg_la_tile_m(const dg_la_mat_t *a, size_t i);
size_t dg_la_tile_n(const dg_la_mat_t *a, size_t j);

/* One routine's submissions: its region (the caller's or its own) and the
 * tile codelets, registered once per call rather than once per task. */
typedef struct dg_la_ctx {
    dg_arr_sub_t sub;
    dagger_codelet_t cl[DG_LA_CL_COUNT];
    const char *fn;
} dg_la_ctx_t;

/* Registers the codelets and opens the region (user = NULL: our own). */
dagger_status_t dg_la_begin(dg_la_ctx_t *c, dagger_runtime_t *rt, dagger_region_t *user,
                            const char *fn);
/* Ends our own region; st is the submissions' status (as dg_arr_close). */
dagger_status_t dg_la_end(dg_la_ctx_t *c, dagger_status_t st);

/* Submits codelet cl on args[0..nargs) plus the parameter block, with a
 * priority (higher first among ready tasks). */
dagger_status_t dg_la_submit(dg_la_ctx_t *r, dg_la_cl_t cl, int nargs, const dagger_arg_t *args,
                             const dg_la_par_t *par, int priority);
/* The same on rank `rank` (a task scope; -1: where placement puts it). */
dagger_status_t dg_la_submit_on(dg_la_ctx_t *r, dg_la_cl_t cl, int nargs,
                                const dagger_arg_t *args, const dg_la_par_t *par, int priority,
                                int rank);
/* The rank that owns tile (i, j) (-1 if a has no such tile). */
int dg_la_tile_owner(const dg_la_mat_t *a, size_t i, size_t j);

/* One gemm / syrk / trsm tile task (the building blocks every DAG uses). */
dagger_status_t dg_la_gemm_tile(dg_la_ctx_t *r, int ta, int tb, double alpha, dagger_view_t a,
                                dagger_view_t b, double beta, dagger_view_t c, int prio);
dagger_status_t dg_la_syrk_tile(dg_la_ctx_t *r, int uplo, int ta, double alpha,
                                dagger_view_t a, double beta, dagger_view_t c, int prio);
dagger_status_t dg_la_trsm_tile(dg_la_ctx_t *r, const dg_la_par_t *par, dagger_view_t a,
                                dagger_view_t b, int prio);
/* gemm and trsm tiles on rank `rank` (-1: where placement puts them). */
dagger_status_t dg_la_gemm_tile_on(dg_la_ctx_t *r, int ta, int tb, double alpha, dagger_view_t a,
                                   dagger_view_t b, double beta, dagger_view_t c, int prio,
                                   int rank);
dagger_status_t dg_la_trsm_tile_on(dg_la_ctx_t *r, const dg_la_par_t *par, dagger_view_t a,
                                   dagger_view_t b, int prio, int rank);

/* The trsm DAG on described matrices (trsm, potrs, getrs share it). */
dagger_status_t dg_la_trsm_dag(dg_la_ctx_t *r, const dg_la_par_t *par, const dg_la_mat_t *A,
                               const dg_la_mat_t *B);

/* Checks that T was made by dagger_linalg_qr_t_create for A (geqrf.c). */
dagger_status_t dg_la_check_t(const dg_la_mat_t *a, const dg_la_mat_t *t, const char *fn);

/* ---- work copies with other blocks ---- */

/* A matrix with the blocks a routine needs: the user's array itself when it
 * has them, otherwise a re-blocked copy (allowed only without a user region:
 * arrays cannot be created inside one). */
typedef struct dg_la_work {
    dagger_array_t *user, *work;
    int copy_in, copy_out;
} dg_la_work_t;

/* Prepares w for array a with blocks (b0, b1) (b1 ignored for vectors);
 * creates the copy when needed. copy_in/copy_out say whether the routine
 * reads / writes it. user_r is the caller's region (NULL = none). */
dagger_status_t dg_la_work_init(dg_la_work_t *w, dagger_array_t *a, size_t b0, size_t b1,
                                int copy_in, int copy_out, dagger_region_t *user_r,
                                const char *fn, const char *why);
/* Submits the copy into the work array (when it is a copy). */
dagger_status_t dg_la_work_in(dg_la_work_t *w, dagger_region_t *r);
/* Submits the copy back into the user's array. */
dagger_status_t dg_la_work_out(dg_la_work_t *w, dagger_region_t *r);
/* Destroys the copy (outside a region). */
void dg_la_work_cleanup(dg_la_work_t *w);

#endif
