/* Distributed arrays, internal: the array object, block geometry, and the
 * helpers every operation shares (regions, codelets, tiles). Prefix dg_arr_. */
#ifndef DG_ARRAY_INTERNAL_H
#define DG_ARRAY_INTERNAL_H

#include <dagger/array.h>
#include <dagger/stencil.h>
#include <stdint.h>

#define DG_ARR_MAGIC 0x41525259u /* "ARRY": tells an array from another live handle */

/* Dimensions past ndims are stored as 1 (one block of one element), so loops
 * can always run over DAGGER_MAX_DIMS dimensions. */
struct dagger_array {
    uint32_t magic;
    dagger_runtime_t *rt;
    dagger_dtype_t dtype;
    dagger_proc_kind_t home;        /* dagger_array_desc_t.home: every block's */
    int ndims;
    size_t elsize;
    size_t dims[DAGGER_MAX_DIMS];
    size_t block[DAGGER_MAX_DIMS];
    size_t nb[DAGGER_MAX_DIMS];     /* blocks along each dimension */
    size_t nblocks, nelems;
    dagger_chunk_t *chunks;         /* one per block, block order */
    int *owners;
    uint64_t binds;                 /* host-buffer bindings made (uniform across ranks) */
    /* Views (view.c): parent is the array whose blocks a view shares (never
     * itself a view), origin the view's offset in it; dims are the view's
     * extents, while block, nb, nblocks, chunks and owners are the
     * parent's. nviews counts a parent's live views. */
    dagger_array_t *parent;
    size_t origin[DAGGER_MAX_DIMS];
    size_t nviews;
    struct dg_arr_bundles *bundles; /* collect's bundle chunks (collect_bundle.h), or NULL */
    /* collect and scatter by pulling and pushing (collect_pull.h), on an
     * array (never a view): the collects and scatters that could have, and
     * the peer table made at the second of them or at a large first one
     * (NULL before). */
    uint32_t pull_collects;
    struct dg_arr_peers *peers;
};

/* The array whose blocks a holds: a itself, or a view's parent. */
static inline const dagger_array_t *dg_arr_root(const dagger_array_t *a)
{
    return a->parent ? a->parent : a;
}

/* DAGGER_ERR_INVALID_ARG naming fn when a is a view (for the operations
 * that work on whole blocks: stencils, scatter). */
dagger_status_t dg_arr_no_view(const dagger_array_t *a, const char *fn);

/* How the boxes of a and b (arrays or views) lie: DG_ARR_APART (other
 * arrays, or views of one array whose boxes do not meet), DG_ARR_SAME_BOX
 * (one array's same elements) or DG_ARR_OVERLAP (boxes that meet and
 * differ). */
typedef enum { DG_ARR_APART, DG_ARR_SAME_BOX, DG_ARR_OVERLAP } dg_arr_boxes_t;
dg_arr_boxes_t dg_arr_boxes(const dagger_array_t *a, const dagger_array_t *b);

/* A live array handle, or NULL with DAGGER_ERR_BAD_HANDLE set naming fn. */
dagger_array_t *dg_arr_get(const dagger_array_t *a, const char *fn);

/* The registry of live arrays and stencils (pointers, never dereferenced
 * while checking): 0 on success, -1 when out of memory. */
int dg_arr_live_add(const void *h);
void dg_arr_live_remove(const void *h);
int dg_arr_live(const void *h);

/* Fills owners[] (a->nblocks entries) from a distribution (NULL = default). */
dagger_status_t dg_arr_owners(const dagger_array_t *a, const dagger_dist_t *dist, int *owners,
                              const char *fn);

/* Creates the array object and its chunks (zeroed), without tasks. */
dagger_status_t dg_arr_create(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                              dagger_array_t **out, const char *fn);

/* Grid position, global offset and extent of block b. */
void dg_arr_block_box(const dagger_array_t *a, size_t b, size_t idx[DAGGER_MAX_DIMS],
                      size_t off[DAGGER_MAX_DIMS], size_t ext[DAGGER_MAX_DIMS]);
/* Block number of a grid position. */
size_t dg_arr_block_at(const dagger_array_t *a, const size_t idx[DAGGER_MAX_DIMS]);
/* The view of [off, off+ext) inside block b (block-local offsets). */
dagger_view_t dg_arr_sub_view(const dagger_array_t *a, size_t b, const size_t off[DAGGER_MAX_DIMS],
                              const size_t ext[DAGGER_MAX_DIMS]);

/* "4x5x3": the dims, for messages. */
void dg_arr_shape_str(const dagger_array_t *a, char *buf, size_t len);

/* Checks an f32/f64/i32/i64 dtype; DAGGER_ERR_DTYPE naming fn otherwise. */
dagger_status_t dg_arr_check_dtype(dagger_dtype_t t, const char *fn);
/* For integer dtypes: v must be an integer in the type's range. */
dagger_status_t dg_arr_check_scalar(dagger_dtype_t t, double v, const char *fn);
const char *dg_arr_dtype_name(dagger_dtype_t t);

/* ---- regions: use the caller's, or open and end one of our own ---- */

typedef struct dg_arr_sub {
    dagger_region_t *r;
    int own;
    int pin;    /* tasks may be given a rank of their own (no region scope limits ranks) */
} dg_arr_sub_t;

/* user may be NULL. Checks that a user region belongs to rt. */
dagger_status_t dg_arr_open(dagger_runtime_t *rt, dagger_region_t *user, dg_arr_sub_t *s,
                            const char *fn);
/* Ends an own region. st is the status of the submissions: on failure the
 * region is still ended (every rank fails alike) and st is returned. */
dagger_status_t dg_arr_close(dg_arr_sub_t *s, dagger_status_t st);

/* ---- the library's own codelets ---- */

typedef enum dg_arr_cl {
    DG_ARR_CL_EWISE = 0,   /* element-wise arithmetic, copy, fill, transpose */
    DG_ARR_CL_GEN,         /* rand, randn, index functions */
    DG_ARR_CL_PUT,         /* tiles into a bound host buffer (collect) */
    DG_ARR_CL_TAKE,        /* a tile from a bound host buffer (scatter) */
    DG_ARR_CL_PARTIAL,     /* a reduction's partial result of one tile */
    DG_ARR_CL_COMBINE,     /* two partial results into one */
    DG_ARR_CL_PACK,        /* a halo piece into a padded buffer */
    DG_ARR_CL_SWEEP,       /* stencil expressions over one block */
    DG_ARR_CL_EXTEND,      /* affine boundary ghosts inside a padded buffer */
    DG_ARR_CL_NRM2_PARTIAL, /* a tile's scaled sums of squares (24 bytes) */
    DG_ARR_CL_NRM2_COMBINE, /* two of them into one */
    DG_ARR_CL_NRM2_FINISH,  /* the norm from the last one (8 bytes) */
    DG_ARR_CL_REDDIM,      /* a block's reduction along one dimension into the output */
    DG_ARR_CL_REDDIM_PART, /* the same, returned (a future) */
    DG_ARR_CL_REDDIM_COMB, /* such futures into the output, in order */
    DG_ARR_CL_BUNDLE,      /* a rank's tiles packed into one chunk (collect) */
    DG_ARR_CL_UNBUNDLE,    /* a bundle's tiles into a bound host buffer (collect) */
    DG_ARR_CL_PULL,        /* another rank's tiles read into a bound host buffer (collect) */
    DG_ARR_CL_PUSH,        /* another rank's blocks written from a bound host buffer (scatter) */
    DG_ARR_CL_COUNT
} dg_arr_cl_t;

/* Registers (idempotently) and returns one of them. */
dagger_status_t dg_arr_codelet(dagger_runtime_t *rt, dg_arr_cl_t which, dagger_codelet_t *out);

/* The implementations (one file each). */
int dg_arr_ewise_impl(dagger_task_t *t);
int dg_arr_gen_impl(dagger_task_t *t);
int dg_arr_put_impl(dagger_task_t *t);
int dg_arr_take_impl(dagger_task_t *t);
int dg_arr_partial_impl(dagger_task_t *t);
int dg_arr_combine_impl(dagger_task_t *t);
int dg_arr_pack_impl(dagger_task_t *t);
int dg_arr_sweep_impl(dagger_task_t *t);
int dg_arr_extend_impl(dagger_task_t *t);
int dg_arr_nrm2_partial_impl(dagger_task_t *t);
int dg_arr_nrm2_combine_impl(dagger_task_t *t);
int dg_arr_nrm2_finish_impl(dagger_task_t *t);
int dg_arr_reddim_impl(dagger_task_t *t); /* the three in reduce_dim_kernel.c */
int dg_arr_reddim_part_impl(dagger_task_t *t);
int dg_arr_reddim_comb_impl(dagger_task_t *t);
int dg_arr_bundle_impl(dagger_task_t *t);
int dg_arr_unbundle_impl(dagger_task_t *t);
int dg_arr_pull_impl(dagger_task_t *t);
int dg_arr_push_impl(dagger_task_t *t);

/* 1 when a slot's elements are one contiguous run in column-major order
 * (a whole chunk, or full leading dimensions), so it can be walked as one line. */
int dg_arr_slot_dense(const dagger_slot_t *s);

/* Walks the lines (dimension 0; a dense slot is one line) of x and,
 * alongside, of y (the same dims; x itself when there is no second). */
typedef void (*dg_arr_line_fn)(size_t n, const char *px, const char *py, void *ctx);
void dg_arr_for_lines(const dagger_slot_t *x, const dagger_slot_t *y, dg_arr_line_fn fn, void *ctx);

/* Reads a by-value parameter block into p (value bytes need not be aligned).
 * Returns 0 when argument i is a value of exactly len bytes. */
int dg_arr_param(dagger_task_t *t, int i, void *p, size_t len);

/* ---- named functions (index functions, stencil kernels) ---- */

typedef void (*dg_arr_anyfn)(void);
enum { DG_ARR_FN_INDEX = 1, DG_ARR_FN_STENCIL = 2 };
dagger_status_t dg_arr_fn_register(int kind, const char *name, dg_arr_anyfn fn, uint32_t *id,
                                   const char *api);
/* The function registered under id with that kind in this process, or NULL. */
dg_arr_anyfn dg_arr_fn_find(int kind, uint32_t id);

/* ---- host buffers bound for the length of one collect/scatter region ---- */

/* Returns the key tasks use to find ptr on this rank (the same key on every
 * rank, since a->binds advances alike everywhere). */
dagger_status_t dg_arr_bind(dagger_array_t *a, void *ptr, uint64_t *key);
void dg_arr_unbind(uint64_t key);
void *dg_arr_bound(uint64_t key);

/* ---- scalar conversions shared by the kernels ---- */

double dg_arr_load(dagger_dtype_t t, const void *p);
void dg_arr_store(dagger_dtype_t t, void *p, double v);
/* Integer elements (i32/i64) as 64 bits, for arithmetic that wraps around:
 * computed unsigned, stored as the low bits (two's complement). */
uint64_t dg_arr_load_u(dagger_dtype_t t, const void *p);
void dg_arr_store_u(dagger_dtype_t t, void *p, uint64_t v);

#endif
