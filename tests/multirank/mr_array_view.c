/* Distributed arrays: views (sub-boxes as arrays) in element-wise
 * operations, fill, reductions and collects, against serial references;
 * the proof that only the box's elements move; and the failure paths. */
#include <stdio.h>

#include "array_util.h"

static dagger_array_t *view2(dagger_array_t *a, size_t i0, size_t j0, size_t m, size_t n)
{
    dagger_array_t *v;
    AR_OK(dagger_array_view(a, (size_t[]){i0, j0}, (size_t[]){m, n}, &v));
    return v;
}

/* want[] = x with the box [i0, i0+m) x [j0, j0+n) of an M-row matrix
 * replaced by f(old, box element index). */
typedef double (*upd_fn)(double old, size_t k, const void *ctx);

static void ref_box(double *x, size_t M, size_t i0, size_t j0, size_t m, size_t n, upd_fn f,
                    const void *ctx)
{
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++)
            x[i0 + i + M * (j0 + j)] = f(x[i0 + i + M * (j0 + j)], i + m * j, ctx);
}

static double times2(double old, size_t k, const void *ctx)
{
    (void)k, (void)ctx;
    return 2 * old;
}

static double seven(double old, size_t k, const void *ctx)
{
    (void)old, (void)k, (void)ctx;
    return 7;
}

/* Rows 10..20 of a 30 x 20 matrix in 7 x 6 blocks: out-of-place into an
 * array of the view's shape (other blocks), in place, fill; the rest of the
 * parent is untouched. */
Test(array_view, elementwise_and_fill_on_rows)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 30, 20, 7, 6), cd = AR_D2(DAGGER_F64, 11, 20, 4, 4);
    dagger_array_t *a, *b, *c;
    AR_OK(dagger_array_rand(rt, &d, 1, &a));
    AR_OK(dagger_array_rand(rt, &d, 2, &b));
    AR_OK(dagger_array_zeros(rt, &cd, &c));
    double *xa = ar_collect(a), *xb = ar_collect(b), want[11 * 20];
    dagger_array_t *va = view2(a, 10, 0, 11, 20), *vb = view2(b, 3, 0, 11, 20);
    AR_OK(dagger_array_add(NULL, c, va, vb)); /* c = a[10:21, :] + b[3:14, :] */
    for (size_t j = 0; j < 20; j++)
        for (size_t i = 0; i < 11; i++)
            want[i + 11 * j] = xa[10 + i + 30 * j] + xb[3 + i + 30 * j];
    ar_expect(c, want, 0, "c = view + view");
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_OK(dagger_array_scalar(r, DAGGER_OP_MUL, va, va, 2));    /* in place, rows 10..20 */
    AR_OK(dagger_array_fill(r, vb, 7));
    AR_OK(dagger_region_end(r));
    ref_box(xa, 30, 10, 0, 11, 20, times2, NULL);
    ref_box(xb, 30, 3, 0, 11, 20, seven, NULL);
    ar_expect(a, xa, 0, "a with rows 10..20 doubled");
    ar_expect(b, xb, 0, "b with rows 3..13 set to 7");
    for (size_t j = 0; j < 20; j++)
        for (size_t i = 0; i < 11; i++)
            want[i + 11 * j] = xa[10 + i + 30 * j];
    ar_expect(va, want, 0, "the view collected");
    free(xa);
    free(xb);
    AR_DESTROY(va, vb, a, b, c);
    AR_OK(dagger_finalize(rt));
}

/* The elements of the box, from a collected parent. */
static void box_of(const double *x, size_t M, const size_t off[2], const size_t ext[2], double *out)
{
    for (size_t j = 0; j < ext[1]; j++)
        for (size_t i = 0; i < ext[0]; i++)
            out[i + ext[0] * j] = x[off[0] + i + M * (off[1] + j)];
}

/* Reductions of views (several boxes, block edges inside and outside), a
 * view of a view, and collect_box of a view, against the serial values. */
Test(array_view, reductions_views_of_views_and_collect_box)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 25, 18, 6, 5);
    dagger_array_t *a, *b;
    AR_OK(dagger_array_randn(rt, &d, 3, &a));
    AR_OK(dagger_array_rand(rt, &d, 4, &b));
    double *xa = ar_collect(a), *xb = ar_collect(b), box[25 * 18], boxb[25 * 18];
    const size_t boxes[4][4] = {{10, 0, 11, 18}, {0, 5, 25, 1}, {7, 3, 5, 9}, {24, 17, 1, 1}};
    for (int q = 0; q < 4; q++) {
        const size_t off[2] = {boxes[q][0], boxes[q][1]}, ext[2] = {boxes[q][2], boxes[q][3]};
        dagger_array_t *va = view2(a, off[0], off[1], ext[0], ext[1]);
        dagger_array_t *vb = view2(b, off[0], off[1], ext[0], ext[1]);
        box_of(xa, 25, off, ext, box);
        box_of(xb, 25, off, ext, boxb);
        double v[5], ref[5];
        ar_reduce5(rt, va, vb, box, boxb, ext[0] * ext[1], v, ref);
        cr_assert(fabs(v[0] - ref[0]) < 1e-12 * 500, "box %d: sum %g, serial %g", q, v[0], ref[0]);
        cr_assert(v[1] == ref[1] && v[2] == ref[2], "box %d: min/max", q);
        cr_assert(fabs(v[3] - ref[3]) < 1e-13 * ref[3], "box %d: norm", q);
        cr_assert(fabs(v[4] - ref[4]) < 1e-12 * 500, "box %d: dot", q);
        ar_expect(va, box, 0, "collect of a view");
        AR_DESTROY(vb, va);
    }
    /* rows 10..20, then its columns 4..9 and rows 2..5: a[12:16, 4:10] */
    dagger_array_t *v1 = view2(a, 10, 0, 11, 18), *v2 = view2(v1, 2, 4, 4, 6);
    box_of(xa, 25, (size_t[]){12, 4}, (size_t[]){4, 6}, box);
    ar_expect(v2, box, 0, "a view of a view");
    double part[6];
    AR_OK(dagger_array_collect_box(v2, (size_t[]){1, 3}, (size_t[]){2, 3}, DAGGER_ALL_RANKS, part));
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 2; i++)
            cr_assert_eq(part[i + 2 * j], xa[13 + i + 25 * (7 + j)], "collect_box of a view");
    AR_DESTROY(v2, v1, a, b);
    free(xa);
    free(xb);
    AR_OK(dagger_finalize(rt));
}

/* The owner of element (i, j) of a 2-D array. */
static int owner_at(dagger_array_t *a, size_t i, size_t j)
{
    dagger_array_desc_t d;
    AR_OK(dagger_array_info(a, &d));
    size_t nb0 = (d.dims[0] + d.block[0] - 1) / d.block[0];
    dagger_array_block_t info;
    AR_OK(dagger_array_block_info(a, i / d.block[0] + nb0 * (j / d.block[1]), &info));
    return info.owner;
}

static int last_rank(const size_t block[], int nd, int nranks, void *ctx)
{
    (void)nd, (void)ctx;
    return (int)(block[0] + 1) % nranks;
}

/* Only the box moves: a[rows 10..20] += b[rows 10..20] with a and b
 * distributed differently. Each tile runs where its part of a lives, so a
 * rank receives exactly the box elements of b that it writes in a and does
 * not own in b: not the rest of those blocks of b. */
Test(array_view, moves_only_the_box)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt);
    dagger_dist_t shifted = {.kind = DAGGER_DIST_MAP, .map = last_rank};
    dagger_array_desc_t da = AR_D2(DAGGER_F64, 40, 24, 8, 8), db = da;
    db.dist = &shifted;
    dagger_array_t *a, *b;
    AR_OK(dagger_array_rand(rt, &da, 1, &a));
    AR_OK(dagger_array_rand(rt, &db, 2, &b));
    double *xa = ar_collect(a), *xb = ar_collect(b);
    dagger_array_t *va = view2(a, 10, 0, 11, 24), *vb = view2(b, 10, 0, 11, 24);
    AR_OK(dagger_array_add(NULL, va, va, vb));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t expect = 0;
    for (size_t j = 0; j < 24; j++)
        for (size_t i = 10; i < 21; i++) {
            expect += owner_at(a, i, j) == me && owner_at(b, i, j) != me;
            xa[i + 40 * j] += xb[i + 40 * j];
        }
    cr_assert_eq(s.bytes_received, expect * sizeof(double), "rank %d received %llu bytes, the box "
                 "elements it needs are %llu", me, (unsigned long long)s.bytes_received,
                 (unsigned long long)(expect * sizeof(double)));
    cr_assert(dagger_nranks(rt) == 1 || s.transfers > 0, "nothing moved: the test proves nothing");
    ar_expect(a, xa, 0, "a after the update of rows 10..20");
    AR_DESTROY(va, vb, a, b);
    free(xa);
    free(xb);
    AR_OK(dagger_finalize(rt));
}

/* Every rank fails alike, with a message saying what to change. */
Test(array_view, bad_input)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 30, 20, 7, 6), e = AR_D2(DAGGER_F64, 10, 20, 7, 6);
    dagger_array_t *a, *c, *v;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_zeros(rt, &e, &c));
    AR_FAILS(dagger_array_view(a, (size_t[]){25, 0}, (size_t[]){6, 20}, &v), DAGGER_ERR_INVALID_ARG,
             "the box [25, 31) along dimension 0 is outside the array, which has 30 elements "
             "there; use an offset + extent of at most 30");
    AR_FAILS(dagger_array_view(a, (size_t[]){0, 20}, (size_t[]){1, 1}, &v), DAGGER_ERR_INVALID_ARG,
             "along dimension 1 is outside");
    AR_FAILS(dagger_array_view(a, (size_t[]){0, 0}, (size_t[]){0, 1}, &v), DAGGER_ERR_INVALID_ARG,
             "extent 0");
    v = view2(a, 10, 0, 11, 20);
    AR_FAILS(dagger_array_add(NULL, c, v, v), DAGGER_ERR_INVALID_ARG,
             "shapes do not match: 10x20 and 11x20");
    dagger_stencil_expr_t x = {.out = v, .kernel = DAGGER_STENCIL_CONST, .value = 1};
    AR_FAILS(dagger_stencil_apply(rt, 1, &x), DAGGER_ERR_INVALID_ARG, "copy the view into");
    AR_FAILS(dagger_array_scatter(v, NULL), DAGGER_ERR_INVALID_ARG, "a view of an array");
    AR_FAILS(dagger_array_destroy(a), DAGGER_ERR_STATE, "1 live views; destroy them first");
    AR_DESTROY(v, a, c);
    AR_FAILS(dagger_array_view(a, (size_t[]){0, 0}, (size_t[]){1, 1}, &v), DAGGER_ERR_BAD_HANDLE,
             "not a live array");
    AR_OK(dagger_finalize(rt));
}

/* A refill treats a view as an array of its own dims. */
Test(array_view, refill_of_a_view)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 12, 9, 5, 4);
    dagger_array_t *a, *v;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_view(a, (size_t[]){3, 2}, (size_t[]){6, 5}, &v));
    AR_OK(dagger_array_fill_rand(NULL, v, 77));
    double want[12 * 9] = {0};
    for (size_t j = 0; j < 5; j++)
        for (size_t i = 0; i < 6; i++)
            want[3 + i + 12 * (2 + j)] = dagger_rand_uniform(77, i + 6 * j);
    ar_expect(a, want, 0, "rand in the box, zeros around");
    AR_DESTROY(v, a);
    AR_OK(dagger_finalize(rt));
}

/* Reductions along a dimension of a view (rows 10..20, columns 3..16 of
 * 30 x 20 in 7 x 6 blocks), into an array and into a view. */
Test(array_view, reduce_dim_of_a_view)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 30, 20, 7, 6);
    dagger_array_desc_t rd = AR_D2(DAGGER_F64, 11, 1, 4, 1), big = AR_D2(DAGGER_F64, 5, 14, 2, 5);
    dagger_array_t *a, *rows, *cols, *v, *cv;
    AR_OK(dagger_array_randn(rt, &d, 9, &a));
    AR_OK(dagger_array_zeros(rt, &rd, &rows));
    AR_OK(dagger_array_zeros(rt, &big, &cols));
    v = view2(a, 10, 3, 11, 14);
    cv = view2(cols, 3, 0, 1, 14); /* row 3 of cols */
    double *x = ar_collect(a), want[14], all[5 * 14];
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, v, 1, rows));
    for (int i = 0; i < 11; i++) {
        want[i] = 0;
        for (int j = 0; j < 14; j++)
            want[i] += x[10 + i + 30 * (3 + j)];
    }
    ar_expect(rows, want, 1e-13, "row sums of a view");
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_MAX, v, 0, cv));
    memset(all, 0, sizeof(all));
    for (int j = 0; j < 14; j++) {
        all[3 + 5 * j] = -INFINITY;
        for (int i = 0; i < 11; i++)
            all[3 + 5 * j] = fmax(all[3 + 5 * j], x[10 + i + 30 * (3 + j)]);
    }
    ar_expect(cols, all, 0, "column maxima of a view into a view");
    free(x);
    AR_DESTROY(cv, v, a, rows, cols);
    AR_OK(dagger_finalize(rt));
}

/* Transpose through views: out = (rows 2..8, columns 1..4 of a)^T, written
 * into a view of a larger array (the tiles of both shift by their origins
 * along their own, permuted, dimensions). */
Test(array_view, transpose_of_a_view_into_a_view)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 10, 6, 3, 4), od = AR_D2(DAGGER_F64, 6, 9, 5, 2);
    dagger_array_t *a, *o, *va, *vo;
    AR_OK(dagger_array_rand(rt, &d, 4, &a));
    AR_OK(dagger_array_zeros(rt, &od, &o));
    va = view2(a, 2, 1, 7, 4);
    vo = view2(o, 1, 2, 4, 7);
    AR_OK(dagger_array_transpose(NULL, vo, va));
    double *x = ar_collect(a), want[6 * 9] = {0};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 4; j++)
            want[(1 + j) + 6 * (2 + i)] = x[(2 + i) + 10 * (1 + j)];
    ar_expect(o, want, 0, "transpose of a view into a view");
    free(x);
    AR_DESTROY(va, vo, a, o);
    AR_OK(dagger_finalize(rt));
}

/* An output that shares elements with an input without being the same box
 * (views of one array, shifted) would have tasks read what other tasks of
 * the call already wrote: refused. The same box (in place) and boxes that
 * do not meet work. */
Test(array_view, overlapping_output_and_input)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 30, 20, 7, 6);
    dagger_array_t *a;
    AR_OK(dagger_array_rand(rt, &d, 5, &a));
    double *x = ar_collect(a);
    dagger_array_t *lo = view2(a, 0, 0, 15, 20), *hi = view2(a, 15, 0, 15, 20),
                   *shift = view2(a, 1, 0, 15, 20), *lo2 = view2(a, 0, 0, 15, 20),
                   *all = view2(a, 0, 0, 30, 20), *sq = view2(a, 0, 0, 20, 20),
                   *sq2 = view2(a, 0, 0, 20, 20);
    AR_FAILS(dagger_array_copy(NULL, shift, lo), DAGGER_ERR_INVALID_ARG,
             "dagger_array_copy: the output and input 1 are views of one array whose boxes "
             "overlap without being the same");
    AR_FAILS(dagger_array_add(NULL, lo, shift, hi), DAGGER_ERR_INVALID_ARG,
             "the output and input 1 are views of one array");
    AR_FAILS(dagger_array_add(NULL, lo, hi, shift), DAGGER_ERR_INVALID_ARG,
             "the output and input 2 are views of one array");
    AR_FAILS(dagger_array_scalar(NULL, DAGGER_OP_MUL, lo, shift, 2), DAGGER_ERR_INVALID_ARG,
             "whose boxes overlap");
    AR_FAILS(dagger_array_scalar(NULL, DAGGER_OP_MUL, lo, all, 2), DAGGER_ERR_INVALID_ARG,
             "shapes do not match");
    /* Transposed, even the same box overlaps itself element by element. */
    AR_FAILS(dagger_array_transpose(NULL, sq, sq2), DAGGER_ERR_INVALID_ARG,
             "the output and input 1 are views of one array");
    /* The same box: in place. Boxes that do not meet: as two arrays. */
    AR_OK(dagger_array_scalar(NULL, DAGGER_OP_MUL, lo, lo2, 2));
    AR_OK(dagger_array_add(NULL, hi, lo, lo2));
    double want[30 * 20];
    for (int j = 0; j < 20; j++)
        for (int i = 0; i < 15; i++) {
            want[i + 30 * j] = 2 * x[i + 30 * j];
            want[15 + i + 30 * j] = 4 * x[i + 30 * j];
        }
    ar_expect(a, want, 0, "in place, then into the other half");
    free(x);
    AR_DESTROY(lo, hi, shift, lo2, all, sq, sq2, a);
    AR_OK(dagger_finalize(rt));
}
