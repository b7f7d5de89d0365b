/* trsm: op(A) X = alpha B or X op(A) = alpha B, tile by tile. B is cut into
 * lines (row tiles for LEFT, column tiles for RIGHT); the sweep solves one
 * line with A's diagonal tile, then removes it from the lines still to
 * solve, forward or backward by which triangle op(A) is. Alpha scales each
 * line once: by the first step's update (or solve, for the first line).
 * When a whole line of B is narrower than a tile of A (a solve with a few
 * right-hand sides), each task runs on its tile of A's rank, so that B's
 * tiles travel instead of A's. */
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

/* 1 when the sweep runs from the first line to the last. */
static int forward(const dg_la_par_t *p)
{
    int lower_op = (p->uplo == DAGGER_LA_LOWER) != (p->ta == DAGGER_LA_TRANS);
    return p->side == DAGGER_LA_LEFT ? lower_op : !lower_op;
}

/* Removes solved line k from line m. */
/* The rank to run a task on A's tile (i, j): its owner when B is thin (the
 * file's comment), else -1 (owner-computes: with the tile of B written). */
static int at_a(int thin, const dg_la_mat_t *A, size_t i, size_t j)
{
    return thin ? dg_la_tile_owner(A, i, j) : -1;
}

/* Removes solved line k from line m. */
static dagger_status_t update(dg_la_ctx_t *x, const dg_la_par_t *p, const dg_la_mat_t *A,
                              const dg_la_mat_t *B, size_t k, size_t m, double la, int prio,
                              int thin)
{
    dagger_status_t st = DAGGER_OK;
    int ta = p->ta;
    if (p->side == DAGGER_LA_LEFT) {
        /* B(m, j) = la B(m, j) - op(A)(m, k) X(k, j) */
        size_t ai = ta ? k : m, aj = ta ? m : k;
        for (size_t j = 0; j < B->nt && !st; j++)
            st = dg_la_gemm_tile_on(x, ta, 0, -1.0, dg_la_tile(A, ai, aj), dg_la_tile(B, k, j), la,
                                    dg_la_tile(B, m, j), prio, at_a(thin, A, ai, aj));
    } else {
        /* B(i, m) = la B(i, m) - X(i, k) op(A)(k, m) */
        size_t ai = ta ? m : k, aj = ta ? k : m;
        for (size_t i = 0; i < B->mt && !st; i++)
            st = dg_la_gemm_tile_on(x, 0, ta, -1.0, dg_la_tile(B, i, k), dg_la_tile(A, ai, aj), la,
                                    dg_la_tile(B, i, m), prio, at_a(thin, A, ai, aj));
    }
    return st;
}

dagger_status_t dg_la_trsm_dag(dg_la_ctx_t *x, const dg_la_par_t *par, const dg_la_mat_t *A,
                               const dg_la_mat_t *B)
{
    int left = par->side == DAGGER_LA_LEFT, fwd = forward(par);
    int thin = left ? B->n < A->nb : B->m < A->mb;
    size_t n = left ? B->mt : B->nt, other = left ? B->nt : B->mt;
    dagger_status_t st = DAGGER_OK;
    for (size_t s = 0; s < n && !st; s++) {
        size_t k = fwd ? s : n - 1 - s;
        double la = s ? 1.0 : par->alpha;
        dg_la_par_t p = *par;
        p.alpha = la;
        for (size_t o = 0; o < other && !st; o++)
            st = dg_la_trsm_tile_on(x, &p, dg_la_tile(A, k, k),
                                    left ? dg_la_tile(B, k, o) : dg_la_tile(B, o, k), 2,
                                    at_a(thin, A, k, k));
        for (size_t t = s + 1; t < n && !st; t++) {
            size_t m = fwd ? t : n - 1 - t;
            st = update(x, par, A, B, k, m, la, t == s + 1, thin);
        }
    }
    return st;
}

dagger_status_t dagger_linalg_trsm(dagger_region_t *r, dagger_la_side_t side, dagger_la_uplo_t uplo,
                                   dagger_la_trans_t ta, dagger_la_diag_t diag, double alpha,
                                   dagger_array_t *A, dagger_array_t *B)
{
    const char *fn = "dagger_linalg_trsm";
    dg_la_mat_t a, b;
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", &a)) || (st = dg_la_mat(B, 2, fn, "B", &b)) ||
        (st = dg_la_check_flag(side, 1, fn, "side")) || (st = dg_la_check_flag(uplo, 1, fn, "uplo")) ||
        (st = dg_la_check_flag(ta, 1, fn, "ta")) || (st = dg_la_check_flag(diag, 1, fn, "diag")) ||
        (st = dg_la_same_kind(&a, &b, fn, "A", "B")) || (st = dg_la_check_square(&a, fn, "A")))
        return st;
    if ((st = dg_la_check_distinct(b.a, a.a, fn, "B", "A")))
        return st;
    int left = side == DAGGER_LA_LEFT;
    if ((st = dg_la_check_dim(left ? b.m : b.n, a.m, fn, left ? "the rows of B" : "the columns of B",
                              "the order of A")))
        return st;
    /* A's tiles must be square and meet B's blocks: a copy otherwise. */
    size_t s = left ? b.mb : b.nb;
    dg_la_work_t w;
    if ((st = dg_la_work_init(&w, a.a, s, s, 1, 0, r, fn,
                              "A needs square tiles matching B's blocks where they meet")))
        return st;
    dg_la_mat_t aw;
    dg_la_mat(w.work, 2, fn, "A", &aw);
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, r, fn))) {
        dg_la_par_t p = {.side = side, .uplo = uplo, .ta = ta, .diag = diag, .alpha = alpha};
        if (!(st = dg_la_work_in(&w, x.sub.r)))
            st = dg_la_trsm_dag(&x, &p, &aw, &b);
        st = dg_la_end(&x, st);
    }
    dg_la_work_cleanup(&w);
    return st;
}
