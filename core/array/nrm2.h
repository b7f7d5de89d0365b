/* An overflow- and underflow-safe sum of squares (Blue's algorithm, as in
 * LAPACK 3.10's dnrm2): squares of ordinary values are summed as they are;
 * those of huge values (> 2^486) are summed scaled down by 2^-538 and those
 * of tiny values (< 2^-511) scaled up by 2^537 (powers of two: exact), and
 * the three sums are combined at the end. For arrays with no huge or tiny
 * element the result is the plain sqrt of the plain sum, bit for bit. */
#ifndef DG_ARRAY_NRM2_H
#define DG_ARRAY_NRM2_H

#include <math.h>

#define DG_NRM2_TSML 0x1p-511 /* below: tiny */
#define DG_NRM2_TBIG 0x1p+486 /* above: huge */
#define DG_NRM2_SSML 0x1p+537 /* scale of the tiny ones */
#define DG_NRM2_SBIG 0x1p-538 /* scale of the huge ones */

typedef struct dg_nrm2 {
    double sml, med, big;
} dg_nrm2_t;

/* Adds x^2 for an x that is not ordinary (ax = |x| outside [TSML, TBIG]);
 * returns 0 when x is ordinary (or NaN), so the caller sums its square. */
static inline int dg_nrm2_rare(dg_nrm2_t *a, double ax)
{
    if (ax > DG_NRM2_TBIG) {
        a->big += (ax * DG_NRM2_SBIG) * (ax * DG_NRM2_SBIG);
        return 1;
    }
    if (ax < DG_NRM2_TSML) {
        a->sml += (ax * DG_NRM2_SSML) * (ax * DG_NRM2_SSML);
        return 1;
    }
    return 0;
}

static inline void dg_nrm2_add(dg_nrm2_t *a, double x)
{
    if (!dg_nrm2_rare(a, fabs(x)))
        a->med += x * x;
}

static inline void dg_nrm2_merge(dg_nrm2_t *a, const dg_nrm2_t *b)
{
    a->sml += b->sml;
    a->med += b->med;
    a->big += b->big;
}

/* sqrt of the whole sum, scaled back. */
static inline double dg_nrm2_finish(const dg_nrm2_t *a)
{
    if (a->big > 0) {
        double big = a->big;
        if (a->med > 0 || a->med != a->med)
            big += (a->med * DG_NRM2_SBIG) * DG_NRM2_SBIG;
        return sqrt(big) / DG_NRM2_SBIG;
    }
    if (a->sml > 0) {
        if (!(a->med > 0 || a->med != a->med))
            return sqrt(a->sml) / DG_NRM2_SSML;
        double med = sqrt(a->med), sml = sqrt(a->sml) / DG_NRM2_SSML;
        double hi = sml > med ? sml : med, lo = sml > med ? med : sml;
        return sqrt(hi * hi * (1 + (lo / hi) * (lo / hi)));
    }
    return sqrt(a->med);
}

#endif
