/* Creation and destruction of the transport: UCX context and worker, the
 * start-up exchange (addresses, inventories, build ids), endpoints. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/hash.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/bootstrap_guard.h"
#include "transport/coll.h"
#include "transport/tx_internal.h"
#include "transport/tx_startup.h"
#include "transport/tx_ucx_defaults.h"
#include "transport/wire.h"

uint64_t dg_tx_build_id(void)
{
    /* Two builds differ in at least one of these; equal builds never do. */
    static const char id[] = "dagger-c 0.1 " __DATE__ " " __TIME__ " " __VERSION__;
    uint64_t h = dg_hash_bytes(DG_HASH_SEED, id, sizeof(id) - 1);
    h = dg_hash_u64(h, DG_WIRE_VERSION);
    h = dg_hash_u64(h, sizeof(void *));
    return h ? h : 1;
}

static dagger_status_t open_ucx(dg_tx_t *tx, const char *tls)
{
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK)
        return dg_error(DAGGER_ERR_TRANSPORT, "reading the UCX configuration: %s (check UCX_* "
                        "variables)", ucs_status_string(st));
    (void)dg_tx_ucx_defaults(config, tls);
    if (tls && (st = ucp_config_modify(config, "TLS", tls)) != UCS_OK) {
        ucp_config_release(config);
        return dg_error(DAGGER_ERR_TRANSPORT, "UCX transports '%s': %s", tls, ucs_status_string(st));
    }
    /* RMA stays requested although nothing puts or gets any more (issue 16):
     * without it, runtime_test_bad_input crashed in a UCX-caught SIGSEGV
     * during a runtime's init or finalize in 2 of 2 loaded unit runs, with it
     * in 0 of 2 (docs/transport.md). */
    ucp_params_t p = {
        .field_mask = UCP_PARAM_FIELD_FEATURES,
        .features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP,
    };
    st = ucp_init(&p, config, &tx->ucp);
    ucp_config_release(config);
    if (st != UCS_OK)
        return dg_error(DAGGER_ERR_TRANSPORT, "ucp_init: %s (check UCX_TLS and the UCX install)",
                        ucs_status_string(st));
    /* One thread at a time, possibly a different one over time (the owner
     * hand-over): SERIALIZED, not SINGLE. */
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    st = ucp_worker_create(tx->ucp, &wp, &tx->worker);
    if (st == UCS_OK)
        st = ucp_worker_get_efd(tx->worker, &tx->efd);
    if (st != UCS_OK)
        return dg_error(DAGGER_ERR_TRANSPORT, "creating the UCX worker: %s", ucs_status_string(st));
    return DAGGER_OK;
}

static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    dg_tx_peer_t *p = arg;
    (void)ep;
    dg_tx_mark_lost(p->tx, p->rank, ucs_status_string(status));
}

static double now_s(void);

/* Ends an endpoint whose peer process is gone: force-closed (its requests
 * complete as cancelled), waiting at most a second. */
static void drop_endpoint(dg_tx_t *tx, ucp_ep_h ep)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *req = ucp_ep_close_nbx(ep, &p);
    double deadline = now_s() + 1.0;
    while (UCS_PTR_IS_PTR(req) && ucp_request_check_status(req) == UCS_INPROGRESS &&
           now_s() < deadline)
        ucp_worker_progress(tx->worker);
    if (UCS_PTR_IS_PTR(req))
        ucp_request_free(req);
}

dagger_status_t dg_tx_connect_peer(dg_tx_t *tx, int r, const void *address)
{
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
        .address = address,
        .err_mode = tx->peer_errors ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE,
    };
    if (tx->peer_errors) {
        ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.err_handler.cb = on_ep_error;
        ep.err_handler.arg = &tx->peers[r];
    }
    if (tx->peers[r].ep) {
        drop_endpoint(tx, tx->peers[r].ep);
        tx->peers[r].ep = NULL;
    }
    ucs_status_t st = ucp_ep_create(tx->worker, &ep, &tx->peers[r].ep);
    return st == UCS_OK ? DAGGER_OK : dg_tx_ucs_error(st, "connecting", r);
}

dagger_status_t dg_tx_connect_self(dg_tx_t *tx)
{
    ucp_address_t *address = NULL;
    size_t len = 0;
    ucs_status_t us = ucp_worker_get_address(tx->worker, &address, &len);
    if (us != UCS_OK)
        return dg_tx_ucs_error(us, "connecting", tx->rank);
    dagger_status_t st = dg_tx_connect_peer(tx, tx->rank, address);
    ucp_worker_release_address(tx->worker, address);
    return st;
}

/* A failed connection to a rank on this host whose process is gone: UCX
 * could not open its shared memory because the rank died during the
 * wire-up, and that loss is what to say (in the words of dg_tx_mark_lost),
 * not UCX's "Shared memory error". Otherwise st as it is. */
static dagger_status_t lost_or(dg_tx_t *tx, int r, dagger_status_t st)
{
    const dg_tx_peer_t *p = &tx->peers[r];
    int ws = 0;
    dg_proc_state_t state = p->local ? dg_proc_probe(&p->proc, &ws) : DG_PROC_ALIVE;
    if (state == DG_PROC_ALIVE)
        return st;
    char how[64] = "", why[512];
    dg_proc_describe(how, sizeof(how), state, ws);
    snprintf(why, sizeof(why), "%s", dagger_error_detail());
    return dg_error(DAGGER_ERR_PEER_LOST, "rank %d (pid %d on %s) was lost: its process %s "
                    "(connecting to it failed: %s); the job cannot continue", r,
                    (int)p->proc.pid, p->hostname ? p->hostname : "?", how, why);
}

/* Every rank, but a singleton's endpoint to itself waits for its first
 * message to itself (dg_tx_connect_self). */
static dagger_status_t connect_all(dg_tx_t *tx, const dg_tx_record_t *recs)
{
    dagger_status_t st = DAGGER_OK;
    for (int r = 0; r < tx->size && st == DAGGER_OK; r++)
        if (tx->size > 1 && (st = dg_tx_connect_peer(tx, r, recs[r].address)) != DAGGER_OK)
            st = lost_or(tx, r, st);
    return st;
}

/* Fails what never started (after a loss, or operations left at destroy). */
static void fail_unstarted(dg_tx_t *tx, dagger_status_t why)
{
    dg_tx_drain_outbox(tx);
    for (int r = 0; r < tx->size; r++) {
        dg_tx_op_t *op;
        while ((op = dg_tx_queue_pop(&tx->peers[r].pending))) {
            tx->queued_ops--;
            dg_tx_op_finished(op, why);
        }
    }
}

/* See dg_tx_create: how long a rank that failed after the start-up
 * exchange stays, so that the others can still read its record. */
#define DG_TX_FAIL_LINGER_S 1

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Closes every endpoint. Force-closing needs peer error handling on both
 * sides (UCX would report errors at the peer otherwise), so without it the
 * endpoints are flushed, which needs no peer once they are wired up (the
 * start-up handshake did that). Requests still open at the deadline (a
 * dead peer) are released so the worker can be destroyed. */
static void close_endpoints(dg_tx_t *tx)
{
    void **reqs = dg_calloc((size_t)tx->size, sizeof(*reqs));
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = tx->peer_errors ? UCP_EP_CLOSE_FLAG_FORCE : 0};
    for (int r = 0; r < tx->size; r++) {
        void *req = tx->peers[r].ep ? ucp_ep_close_nbx(tx->peers[r].ep, &p) : NULL;
        tx->peers[r].ep = NULL;
        if (UCS_PTR_IS_PTR(req) && reqs)
            reqs[r] = req;
    }
    double deadline = now_s() + (atomic_load(&tx->lost_rank) >= 0 ? 1.0 : 5.0);
    for (int open = 1; open && reqs;) {
        open = 0;
        ucp_worker_progress(tx->worker);
        int late = now_s() > deadline;
        for (int r = 0; r < tx->size; r++) {
            if (reqs[r] && (late || ucp_request_check_status(reqs[r]) != UCS_INPROGRESS)) {
                ucp_request_free(reqs[r]);
                reqs[r] = NULL;
            }
            open |= reqs[r] != NULL;
        }
        if (open)
            sched_yield();
    }
    free(reqs);
}

static void teardown(dg_tx_t *tx)
{
    dg_tx_liveness_stop(tx);
    if (tx->worker) {
        fail_unstarted(tx, atomic_load(&tx->lost_rank) >= 0 ? DAGGER_ERR_PEER_LOST
                                                            : DAGGER_ERR_STATE);
        if (tx->peers)
            close_endpoints(tx);
        dg_tx_run_completions(tx);
    }
    dg_coll_destroy(tx);
    if (tx->worker)
        ucp_worker_destroy(tx->worker);
    if (tx->ucp)
        ucp_cleanup(tx->ucp);
    for (int r = 0; tx->peers && r < tx->size; r++)
        free(tx->peers[r].record);
    for (int r = 0; tx->early && r < tx->size; r++)
        free(tx->early[r].record);
    free(tx->early);
    free(tx->my_record);
    free(tx->peers);
    free(tx->exchange);
    dg_spares_destroy(&tx->spare_ops);
    pthread_cond_destroy(&tx->cond);
    pthread_mutex_destroy(&tx->lock);
    free(tx);
}

static dagger_status_t apply_config(dg_tx_t *tx, const dg_tx_params_t *prm)
{
    dg_config_t env;
    const dg_config_t *cfg = prm->cfg;
    if (!cfg) {
        dagger_status_t st = dg_config_load(&env, NULL);
        if (st != DAGGER_OK)
            return st;
        cfg = &env;
    }
    if (cfg->peer_inflight < 1 || cfg->peer_inflight > 1 << 20)
        return dg_error(DAGGER_ERR_CONFIG, "DAGGER_PEER_INFLIGHT=%lld: use 1 .. 1048576",
                        cfg->peer_inflight);
    tx->eager_limit = cfg->eager_limit;
    tx->peer_inflight = (int)cfg->peer_inflight;
    tx->peer_errors = cfg->peer_errors;
    return DAGGER_OK;
}

static dg_tx_t *alloc_tx(const dg_tx_params_t *prm)
{
    dg_tx_t *tx = dg_calloc(1, sizeof(*tx));
    if (!tx)
        return NULL;
    tx->peers = dg_calloc((size_t)prm->boot->size, sizeof(*tx->peers));
    if (!tx->peers) {
        free(tx);
        return NULL;
    }
    tx->boot = prm->boot;
    tx->rank = prm->boot->rank;
    tx->size = prm->boot->size;
    tx->wake = prm->wake;
    tx->wake_ctx = prm->wake_ctx;
    tx->lost_grace_s = prm->lost_grace_s;
    tx->efd = -1;
    atomic_init(&tx->lost_rank, -1);
    pthread_mutex_init(&tx->lock, NULL);
    dg_spares_init(&tx->spare_ops, DG_TX_OP_SPARE_KEEP);
    pthread_cond_init(&tx->cond, NULL);
    dg_tx_adopt(tx);
    return tx;
}

dagger_status_t dg_tx_create(const dg_tx_params_t *prm, dg_tx_t **out)
{
    DG_CHECK_ARG(prm && prm->boot && prm->boot->size > 0 && out,
                 "dg_tx_create: NULL parameters, bootstrap or output");
    DG_CHECK_ARG(prm->inventory || !prm->inventory_len,
                 "dg_tx_create: NULL inventory of %zu bytes", prm->inventory_len);
    *out = NULL;
    dg_tx_t *tx = alloc_tx(prm);
    if (!tx)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_create: out of memory");
    dg_tx_record_t *recs = dg_calloc((size_t)tx->size, sizeof(*recs));
    dagger_status_t opened = apply_config(tx, prm);
    if (opened == DAGGER_OK)
        opened = recs ? open_ucx(tx, prm->tls) : dg_error(DAGGER_ERR_NO_MEMORY, "out of memory");
    /* Listen before anyone knows our address: peers may send at once. */
    if (opened == DAGGER_OK)
        opened = dg_tx_register_channels(tx);
    if (opened == DAGGER_OK)
        opened = dg_coll_create(tx);
    if (opened == DAGGER_OK)
        opened = dg_tx_listen_hello(tx);
    /* Everyone exchanges, even a rank that failed above, so that all ranks
     * fail together instead of waiting for it. */
    dagger_status_t st = recs ? dg_tx_exchange(tx, prm, opened, recs) : opened;
    int exchanged = tx->exchange != NULL;
    dg_boot_guard_step(prm->boot, DG_BOOT_STEP_WIREUP);
    if (st == DAGGER_OK)
        st = connect_all(tx, recs);
    free(recs);
    /* Failing after the exchange, before the handshake that tells us
     * everyone has read our record: slower ranks may still be reading it
     * (and would wait for it until their timeout once we left). No PMIx
     * fence here: fences are unreliable with Open MPI 4.1's server when
     * processes come and go (bootstrap_exchange.c). They read within
     * milliseconds; a second is ample. */
    int said = 0;
    if (st != DAGGER_OK && exchanged) {
        /* A lost peer is said now, as the liveness thread says one: the
         * launcher may end this rank during the linger (Slurm's PMIx
         * plugin kills the step about 1 s after a rank's connection drops),
         * before the error could be returned and printed (seen in CI's
         * kill_rank_srun: the ranks whose connection to the dead rank
         * failed were killed silent). The caller prints it again. */
        if (st == DAGGER_ERR_PEER_LOST) {
            dg_log(DG_LOG_ERROR, "%s", dagger_error_detail());
            said = 1;
        }
        nanosleep(&(struct timespec){.tv_sec = DG_TX_FAIL_LINGER_S, .tv_nsec = 0}, NULL);
    }
    if (st == DAGGER_OK)
        st = dg_tx_liveness_start(tx);
    if (st == DAGGER_OK)
        st = dg_tx_handshake(tx);
    if (st == DAGGER_OK)
        dg_boot_retract(prm->boot); /* everyone has read our record */
    if (st != DAGGER_OK) {
        /* A failure here is said before the teardown, and the start-up
         * guard stays until after it: closing the endpoints flushes them
         * for up to a second, and under mpirun the launcher's SIGTERM
         * (another rank has already exited) came in that second, after
         * the guard had stopped, and ended this rank silent (CI's
         * kill_rank_mpirun, about one run in twelve: the rank whose
         * handshake with the dead rank failed said nothing). */
        char why[1024];
        snprintf(why, sizeof(why), "%s", dagger_error_detail());
        if (st == DAGGER_ERR_PEER_LOST && !said)
            dg_log(DG_LOG_ERROR, "%s", why);
        teardown(tx);
        dg_boot_end_start_up(prm->boot);
        return dg_error(st, "%s", why);
    }
    /* The start-up guard hands over to the liveness thread (whose records
     * are now checked by the handshake), SIGTERM included. */
    dg_boot_end_start_up(prm->boot);
    dg_tx_liveness_arm_sigterm(tx);
    *out = tx;
    return DAGGER_OK;
}

dagger_status_t dg_tx_destroy(dg_tx_t *tx)
{
    DG_CHECK_ARG(tx, "dg_tx_destroy: NULL transport");
    DG_CHECK_ARG(dg_tx_is_owner(tx), "dg_tx_destroy: call it on the owner thread");
    /* The failing step is named in the detail. */
    const char *step = "before the closing barrier";
    dagger_status_t st = dg_tx_health(tx);
    if (st == DAGGER_OK) {
        step = "flushing";
        st = dg_tx_flush(tx);
    }
    if (st == DAGGER_OK) {
        step = "in the closing barrier";
        /* Ranks that have every part leave at once: their exit is no loss
         * to a rank still waiting for a live rank's part (dg_tx_wait_from). */
        atomic_store(&tx->closing, 1);
        st = dg_coll_barrier(tx);
    }
    char why[1024];
    snprintf(why, sizeof(why), "%s", st == DAGGER_OK ? "" : dagger_error_detail());
    atomic_store(&tx->leaving, 1); /* peers may leave from here on */
    teardown(tx);
    return st == DAGGER_OK ? DAGGER_OK : dg_error(st, "transport teardown, %s: %s", step, why);
}

int dg_tx_rank(const dg_tx_t *tx)
{
    return tx ? tx->rank : -1;
}

int dg_tx_size(const dg_tx_t *tx)
{
    return tx ? tx->size : -1;
}

const void *dg_tx_inventory(const dg_tx_t *tx, int r, size_t *len)
{
    if (!tx || r < 0 || r >= tx->size) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = tx->peers[r].inventory_len;
    return tx->peers[r].inventory;
}

const char *dg_tx_hostname(const dg_tx_t *tx, int r)
{
    return tx && r >= 0 && r < tx->size ? tx->peers[r].hostname : NULL;
}

void dg_tx_get_stats(const dg_tx_t *tx, dg_tx_stats_t *out)
{
    *out = tx->stats;
}
