/* Chunk layouts and views: validation, the exact element set of a view (its
 * span set), and composition of a sub-view into a view of the chunk. */
#ifndef DG_PLAN_VIEW_H
#define DG_PLAN_VIEW_H

#include <dagger/status.h>
#include <dagger/types.h>
#include <stddef.h>
#include <stdint.h>

#include "core/plan/spans.h"

/* A chunk's storage layout: column-major, strides in elements. */
typedef struct dg_plan_geom {
    dagger_dtype_t dtype;
    uint32_t elsize;   /* filled by dg_plan_geom_check */
    uint32_t ndims;    /* 1..DAGGER_MAX_DIMS */
    uint64_t dims[DAGGER_MAX_DIMS];
    uint64_t strides[DAGGER_MAX_DIMS];  /* all 0: dense column-major */
    uint64_t extent;   /* storage size in elements; filled by dg_plan_geom_check */
} dg_plan_geom_t;

/* A box of a chunk plus a modifier on dimensions 0 and 1 of the box. */
typedef struct dg_plan_view {
    uint64_t chunk;
    uint32_t ndims;            /* must equal the chunk's */
    dagger_modifier_t mod;
    uint64_t off[DAGGER_MAX_DIMS];
    uint64_t ext[DAGGER_MAX_DIMS];
} dg_plan_view_t;

/* Validates a layout and fills elsize, default strides and extent.
 * DAGGER_ERR_DTYPE / DAGGER_ERR_BAD_VIEW with why[] saying what is wrong. */
dagger_status_t dg_plan_geom_check(dg_plan_geom_t *g, char *why, size_t whylen);

/* Validates a view against its chunk's layout: DAGGER_ERR_BAD_VIEW with why[]. */
dagger_status_t dg_plan_view_check(const dg_plan_geom_t *g, const dg_plan_view_t *v, char *why,
                                   size_t whylen);

/* The whole chunk as a view. */
void dg_plan_view_full(const dg_plan_geom_t *g, uint64_t chunk, dg_plan_view_t *out);

/* Composes a sub-view (box relative to the parent's box, with its own
 * modifier) into a view of the chunk. The result must be one box and one
 * modifier; combinations that are not (e.g. a box cutting a parent's
 * triangle off its diagonal) or that select nothing are DAGGER_ERR_BAD_VIEW. */
dagger_status_t dg_plan_view_sub(const dg_plan_view_t *parent, const uint64_t *off,
                                 const uint64_t *ext, dagger_modifier_t mod,
                                 dg_plan_view_t *out);

/* The row range [*lo, *hi) of column j (box-relative) selected by mod, for a
 * box of e0 rows. */
void dg_plan_mod_rows(dagger_modifier_t mod, uint64_t e0, uint64_t j, uint64_t *lo, uint64_t *hi);

/* out = the exact elements of a valid view (cleared first). */
void dg_plan_view_spans(dg_plan_mem_t *m, const dg_plan_geom_t *g, const dg_plan_view_t *v,
                        dg_plan_spans_t *out);

#endif
