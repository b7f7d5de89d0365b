/* Layout and view validation, span generation and view composition. */
#include "core/plan/view.h"

#include <stdio.h>
#include <string.h>

#include "core/base/common.h"
#include "core/base/status_internal.h"

dagger_status_t dg_plan_geom_check(dg_plan_geom_t *g, char *why, size_t whylen)
{
    g->elsize = (uint32_t)dagger_dtype_size(g->dtype);
    if (!g->elsize) {
        snprintf(why, whylen, "unknown dtype %d (use a dagger_dtype_t value)", (int)g->dtype);
        return DAGGER_ERR_DTYPE;
    }
    if (g->ndims < 1 || g->ndims > DAGGER_MAX_DIMS) {
        snprintf(why, whylen, "%u dimensions (use 1 to %d)", g->ndims, DAGGER_MAX_DIMS);
        return DAGGER_ERR_BAD_VIEW;
    }
    int dense = 1;
    for (uint32_t k = 0; k < g->ndims; k++) {
        if (g->dims[k] == 0 || g->dims[k] > (1ull << 40)) {
            snprintf(why, whylen, "dimension %u has size %llu (use 1 to 2^40)", k,
                     (unsigned long long)g->dims[k]);
            return DAGGER_ERR_BAD_VIEW;
        }
        dense &= g->strides[k] == 0;
    }
    uint64_t need = 1; /* the smallest legal stride of the next dimension */
    for (uint32_t k = 0; k < g->ndims; k++) {
        if (dense)
            g->strides[k] = need;
        if (g->strides[k] < need) {
            snprintf(why, whylen,
                     "stride %llu of dimension %u makes elements overlap (it must be at least "
                     "%llu: 1 for dimension 0, stride*size of the previous dimension after)",
                     (unsigned long long)g->strides[k], k, (unsigned long long)need);
            return DAGGER_ERR_BAD_VIEW;
        }
        if (g->strides[k] > (1ull << 50) / g->dims[k]) {
            snprintf(why, whylen, "dimension %u spans more than 2^50 elements", k);
            return DAGGER_ERR_BAD_VIEW;
        }
        need = g->strides[k] * g->dims[k];
    }
    for (uint32_t k = g->ndims; k < DAGGER_MAX_DIMS; k++) {
        g->dims[k] = 1;
        g->strides[k] = need;
    }
    /* extent = the last element's offset + 1 */
    uint64_t last = 0;
    for (uint32_t k = 0; k < g->ndims; k++)
        last += (g->dims[k] - 1) * g->strides[k];
    g->extent = last + 1;
    return DAGGER_OK;
}

dagger_status_t dg_plan_view_check(const dg_plan_geom_t *g, const dg_plan_view_t *v, char *why,
                                   size_t whylen)
{
    if (v->ndims != g->ndims) {
        snprintf(why, whylen, "the view has %u dimensions but chunk %llu has %u", v->ndims,
                 (unsigned long long)v->chunk, g->ndims);
        return DAGGER_ERR_BAD_VIEW;
    }
    if ((unsigned)v->mod > DAGGER_DIAGONAL) {
        snprintf(why, whylen, "unknown modifier %d", (int)v->mod);
        return DAGGER_ERR_BAD_VIEW;
    }
    if (v->mod != DAGGER_FULL && g->ndims < 2) {
        snprintf(why, whylen, "a triangle or diagonal modifier needs at least 2 dimensions; "
                              "use DAGGER_FULL on a 1-D view");
        return DAGGER_ERR_BAD_VIEW;
    }
    for (uint32_t k = 0; k < g->ndims; k++) {
        if (v->ext[k] == 0) {
            snprintf(why, whylen, "extent 0 in dimension %u (a view must select elements)", k);
            return DAGGER_ERR_BAD_VIEW;
        }
        if (v->off[k] >= g->dims[k] || v->ext[k] > g->dims[k] - v->off[k]) {
            snprintf(why, whylen,
                     "offset %llu + extent %llu exceeds dimension %u of chunk %llu (size %llu)",
                     (unsigned long long)v->off[k], (unsigned long long)v->ext[k], k,
                     (unsigned long long)v->chunk, (unsigned long long)g->dims[k]);
            return DAGGER_ERR_BAD_VIEW;
        }
    }
    if (v->mod == DAGGER_UNIT_UPPER && v->ext[1] < 2) {
        snprintf(why, whylen, "a strict upper triangle of a box with 1 column is empty");
        return DAGGER_ERR_BAD_VIEW;
    }
    if (v->mod == DAGGER_UNIT_LOWER && v->ext[0] < 2) {
        snprintf(why, whylen, "a strict lower triangle of a box with 1 row is empty");
        return DAGGER_ERR_BAD_VIEW;
    }
    return DAGGER_OK;
}

void dg_plan_view_full(const dg_plan_geom_t *g, uint64_t chunk, dg_plan_view_t *out)
{
    memset(out, 0, sizeof(*out));
    out->chunk = chunk;
    out->ndims = g->ndims;
    out->mod = DAGGER_FULL;
    for (uint32_t k = 0; k < g->ndims; k++)
        out->ext[k] = g->dims[k];
}

void dg_plan_mod_rows(dagger_modifier_t mod, uint64_t e0, uint64_t j, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = 0, h = e0;
    switch (mod) {
    case DAGGER_FULL: break;
    case DAGGER_UPPER: h = DG_MIN(j + 1, e0); break;       /* i <= j */
    case DAGGER_UNIT_UPPER: h = DG_MIN(j, e0); break;      /* i < j */
    case DAGGER_LOWER: l = j; break;                       /* i >= j */
    case DAGGER_UNIT_LOWER: l = j + 1; break;              /* i > j */
    case DAGGER_DIAGONAL: l = j; h = DG_MIN(j + 1, e0); break;
    }
    *lo = DG_MIN(l, e0);
    *hi = DG_MAX(h, *lo);
}

void dg_plan_view_spans(dg_plan_mem_t *m, const dg_plan_geom_t *g, const dg_plan_view_t *v,
                        dg_plan_spans_t *out)
{
    out->n = 0;
    if (g->ndims == 1 && v->mod == DAGGER_FULL && g->strides[0] == 1) {
        /* A contiguous 1-D range (most small tasks): one span, no loops. */
        dg_plan_spans_append(m, out, v->off[0], v->off[0] + v->ext[0]);
        return;
    }
    uint64_t ext[DAGGER_MAX_DIMS], base = 0;
    for (uint32_t k = 0; k < DAGGER_MAX_DIMS; k++) {
        ext[k] = k < g->ndims ? v->ext[k] : 1;
        base += (k < g->ndims ? v->off[k] : 0) * g->strides[k];
    }
    const uint64_t s0 = g->strides[0], s1 = g->strides[1], s2 = g->strides[2], s3 = g->strides[3];
    if (v->mod == DAGGER_FULL && s0 == 1) {
        /* Leading dimensions that are whole and contiguous fold into one run
         * (a full view of a dense chunk is one span, built in O(1)). */
        uint64_t run = ext[0];
        uint32_t k = 1;
        while (k < DAGGER_MAX_DIMS && ext[k - 1] == g->dims[k - 1] &&
               g->strides[k] == g->strides[k - 1] * g->dims[k - 1]) {
            run *= ext[k];
            k++;
        }
        uint64_t n[DAGGER_MAX_DIMS] = {1, 1, 1, 1};
        for (uint32_t d = k; d < DAGGER_MAX_DIMS; d++)
            n[d] = ext[d];
        for (uint64_t k3 = 0; k3 < n[3]; k3++)
            for (uint64_t k2 = 0; k2 < n[2]; k2++)
                for (uint64_t j = 0; j < n[1]; j++) {
                    uint64_t at = base + k3 * s3 + k2 * s2 + j * s1;
                    dg_plan_spans_append(m, out, at, at + run);
                }
        return;
    }
    /* Offsets grow strictly in (k3, k2, j, i) order because strides never
     * overlap, so appending keeps the set sorted and merges neighbours. */
    for (uint64_t k3 = 0; k3 < ext[3]; k3++)
        for (uint64_t k2 = 0; k2 < ext[2]; k2++)
            for (uint64_t j = 0; j < ext[1]; j++) {
                uint64_t lo, hi, col = base + k3 * s3 + k2 * s2 + j * s1;
                dg_plan_mod_rows(v->mod, ext[0], j, &lo, &hi);
                if (lo == hi)
                    continue;
                if (s0 == 1) {
                    dg_plan_spans_append(m, out, col + lo, col + hi);
                    continue;
                }
                for (uint64_t i = lo; i < hi; i++)
                    dg_plan_spans_append(m, out, col + i * s0, col + i * s0 + 1);
            }
}

/* A modifier as the closed range of d = i - j it admits (INT64 bounds = open). */
static void mod_range(dagger_modifier_t mod, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MIN / 4;
    *hi = INT64_MAX / 4;
    switch (mod) {
    case DAGGER_FULL: break;
    case DAGGER_UPPER: *hi = 0; break;
    case DAGGER_UNIT_UPPER: *hi = -1; break;
    case DAGGER_LOWER: *lo = 0; break;
    case DAGGER_UNIT_LOWER: *lo = 1; break;
    case DAGGER_DIAGONAL: *lo = *hi = 0; break;
    }
}

/* The modifier selecting exactly d in [lo, hi] of a box with d in [dmin, dmax],
 * or -1 when no single modifier does. */
static int mod_from_range(int64_t lo, int64_t hi, int64_t dmin, int64_t dmax)
{
    if (lo == dmin && hi == dmax)
        return DAGGER_FULL;
    if (lo == dmin && hi == 0)
        return DAGGER_UPPER;
    if (lo == dmin && hi == -1)
        return DAGGER_UNIT_UPPER;
    if (lo == 0 && hi == dmax)
        return DAGGER_LOWER;
    if (lo == 1 && hi == dmax)
        return DAGGER_UNIT_LOWER;
    if (lo == 0 && hi == 0)
        return DAGGER_DIAGONAL;
    return -1;
}

dagger_status_t dg_plan_view_sub(const dg_plan_view_t *parent, const uint64_t *off,
                                 const uint64_t *ext, dagger_modifier_t mod, dg_plan_view_t *out)
{
    dg_plan_view_t r = *parent;
    for (uint32_t k = 0; k < parent->ndims; k++) {
        if (ext[k] == 0 || off[k] >= parent->ext[k] || ext[k] > parent->ext[k] - off[k])
            return dg_error(DAGGER_ERR_BAD_VIEW,
                            "dg_plan_view_sub: offset %llu + extent %llu exceeds dimension %u of "
                            "the parent view (extent %llu)",
                            (unsigned long long)off[k], (unsigned long long)ext[k], k,
                            (unsigned long long)parent->ext[k]);
        r.off[k] = parent->off[k] + off[k];
        r.ext[k] = ext[k];
    }
    if ((unsigned)mod > DAGGER_DIAGONAL || (parent->ndims < 2 && mod != DAGGER_FULL))
        return dg_error(DAGGER_ERR_BAD_VIEW,
                        "dg_plan_view_sub: modifier %d is not allowed on a %u-D view", (int)mod,
                        parent->ndims);
    if (parent->ndims < 2) {
        r.mod = DAGGER_FULL;
        *out = r;
        return DAGGER_OK;
    }
    /* In sub-box coordinates d' = i' - j', the parent admits
     * d' + (off0 - off1) in its range; intersect with the sub's own range and
     * with what the box can hold, then name the result. */
    int64_t plo, phi, slo, shi, shift = (int64_t)off[0] - (int64_t)off[1];
    mod_range(parent->mod, &plo, &phi);
    mod_range(mod, &slo, &shi);
    int64_t dmin = -((int64_t)ext[1] - 1), dmax = (int64_t)ext[0] - 1;
    int64_t lo = DG_MAX(DG_MAX(plo - shift, slo), dmin);
    int64_t hi = DG_MIN(DG_MIN(phi - shift, shi), dmax);
    if (lo > hi)
        return dg_error(DAGGER_ERR_BAD_VIEW,
                        "dg_plan_view_sub: the sub-view selects no element of its parent's "
                        "modifier; choose a box that meets the parent's triangle");
    int m = mod_from_range(lo, hi, dmin, dmax);
    if (m < 0)
        return dg_error(DAGGER_ERR_BAD_VIEW,
                        "dg_plan_view_sub: the sub-box cuts the parent's triangle off the box "
                        "diagonal, which no single modifier describes; align the sub-box with "
                        "the parent's diagonal (equal row and column offsets) or keep it "
                        "entirely on one side");
    r.mod = (dagger_modifier_t)m;
    *out = r;
    return DAGGER_OK;
}
