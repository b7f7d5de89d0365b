/* Shared helpers of the transport tests: bring a bootstrap and a transport
 * up and down inside one Criterion test, on shared memory (UCX's default
 * transports) or on tcp, and drive progress from the test thread. */
#ifndef DG_TX_TEST_H
#define DG_TX_TEST_H

#include <criterion/criterion.h>
#include <dagger/status.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "transport/bootstrap.h"
#include "transport/coll.h"
#include "transport/tx.h"

typedef struct dgt_env {
    dg_boot_t boot;
    dg_tx_t *tx;
    int rank, size;
} dgt_env_t;

#define DGT_OK(expr)                                                                    \
    do {                                                                                \
        dagger_status_t st_ = (expr);                                                   \
        cr_assert_eq(st_, DAGGER_OK, "%s: %s (%s)", #expr, dagger_strerror(st_),        \
                     dagger_error_detail());                                            \
    } while (0)

/* tls: NULL for UCX's defaults (shared memory here), or e.g. "tcp". */
static inline void dgt_up_with(dgt_env_t *e, const char *tls, const dg_tx_params_t *extra)
{
    memset(e, 0, sizeof(*e));
    DGT_OK(dg_boot_init(&e->boot));
    dg_tx_params_t p = extra ? *extra : (dg_tx_params_t){0};
    p.boot = &e->boot;
    p.tls = tls;
    DGT_OK(dg_tx_create(&p, &e->tx));
    e->rank = dg_tx_rank(e->tx);
    e->size = dg_tx_size(e->tx);
}

static inline void dgt_up(dgt_env_t *e, const char *tls)
{
    dgt_up_with(e, tls, NULL);
}

static inline void dgt_down(dgt_env_t *e)
{
    DGT_OK(dg_tx_destroy(e->tx));
    dg_boot_finalize(&e->boot);
}

/* Waits (progressing) until *counter reaches target. */
typedef struct dgt_count {
    volatile long *counter;
    long target;
} dgt_count_t;

static inline int dgt_reached(void *arg)
{
    dgt_count_t *c = arg;
    return __atomic_load_n(c->counter, __ATOMIC_ACQUIRE) >= c->target;
}

static inline void dgt_wait_count(dg_tx_t *tx, volatile long *counter, long target)
{
    dgt_count_t c = {counter, target};
    DGT_OK(dg_tx_wait(tx, dgt_reached, &c, 60));
}

/* Each test body runs twice: on the default transports and on tcp. */
#define DGT_BOTH_TRANSPORTS(suite, name, body)          \
    Test(suite, name##_shm) { body(NULL); }             \
    Test(suite, name##_tcp) { body("tcp"); }

#endif
