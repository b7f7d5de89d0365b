/* syrk: C = alpha op(A) op(A)^T + beta C on one triangle of C. Diagonal
 * tiles are syrk tasks, the others gemm tasks; beta rides on the first
 * product of each tile. */
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

static dagger_status_t syrk_check(int uplo, int ta, const dg_la_mat_t *a, const dg_la_mat_t *c,
                                  const char *fn)
{
    dagger_status_t st;
    if ((st = dg_la_check_flag(uplo, 1, fn, "uplo")) || (st = dg_la_check_flag(ta, 1, fn, "ta")) ||
        (st = dg_la_same_kind(a, c, fn, "A", "C")) || (st = dg_la_check_square(c, fn, "C")) ||
        (st = dg_la_check_block(c->nb, c->mb, fn, "C's column block", "C's row block")))
        return st;
    if ((st = dg_la_check_distinct(c->a, a->a, fn, "C", "A")))
        return st;
    size_t rows = ta ? a->n : a->m, rb = ta ? a->nb : a->mb;
    if ((st = dg_la_check_dim(rows, c->m, fn, "the rows of op(A)", "the order of C")) ||
        (st = dg_la_check_block(rb, c->mb, fn, "the row block of op(A)", "C's block")))
        return st;
    return DAGGER_OK;
}

dagger_status_t dagger_linalg_syrk(dagger_region_t *r, dagger_la_uplo_t uplo, dagger_la_trans_t ta,
                                   double alpha, dagger_array_t *A, double beta,
                                   dagger_array_t *C)
{
    const char *fn = "dagger_linalg_syrk";
    dg_la_mat_t a, c;
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", &a)) || (st = dg_la_mat(C, 2, fn, "C", &c)) ||
        (st = syrk_check(uplo, ta, &a, &c, fn)))
        return st;
    dg_la_ctx_t x;
    if ((st = dg_la_begin(&x, c.a->rt, r, fn)))
        return st;
    size_t kt = ta ? a.mt : a.nt;
#define OPA(i, l) (ta ? dg_la_tile(&a, l, i) : dg_la_tile(&a, i, l))
    for (size_t l = 0; l < kt && !st; l++)
        for (size_t j = 0; j < c.nt && !st; j++)
            for (size_t i = uplo ? 0 : j; i < (uplo ? j + 1 : c.mt) && !st; i++) {
                double b = l ? 1.0 : beta;
                if (i == j)
                    st = dg_la_syrk_tile(&x, uplo, ta, alpha, OPA(i, l), b, dg_la_tile(&c, i, i), 0);
                else
                    st = dg_la_gemm_tile(&x, ta, !ta, alpha, OPA(i, l), OPA(j, l), b,
                                         dg_la_tile(&c, i, j), 0);
            }
#undef OPA
    return dg_la_end(&x, st);
}
