/* Device work in flight (dev.h): each piece waits on an event recorded
 * after it; dagger.dev.poll turns of the owning actor query the events and
 * finish what is done. Nothing here waits for the device. */
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/exec/exec.h"
#include "core/base/status_internal.h"
#include "devices/dev.h"

/* The backend's thread: the work queued before it is done, so an event of
 * this side passed; a worker polls it (and may sleep until then). */
static void wake(void *arg)
{
    dg_dev_side_t *sd = arg;
    atomic_store_explicit(&sd->signalled, 1, memory_order_seq_cst);
    dg_act_system_wake_any(sd->dev->ex->actors);
}

/* Runs the entry's done, then gives its buffers back (done may read them). */
static void settle(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    p->done(d, p, ok);
    if (p->staging)
        dg_dev_cache_put(d, &d->pinned, p->staging, p->staging_bytes);
    if (p->scratch)
        dg_dev_cache_put(d, &d->mem, p->scratch, p->scratch_bytes);
    p->staging = p->scratch = NULL;
}

static void fail_op(dg_dev_t *d, const char *what)
{
    char msg[300];
    snprintf(msg, sizeof(msg), "%s %s on rank %d: %s", what, d->label, d->ex->rank,
             dagger_error_detail());
    dg_exec_fail(d->ex, UINT64_MAX - 1, DAGGER_ERR_SYSTEM, msg);
}

void dg_dev_pend(dg_dev_t *d, int side, dg_dev_stream_t *s, const dg_dev_pending_t *what)
{
    dg_dev_side_t *sd = &d->side[side];
    dg_dev_pending_t *p = sd->spare;
    if (p) {
        sd->spare = p->next;
    } else {
        p = dg_calloc(1, sizeof(*p));
        if (p && d->be->event_create(d->index, &p->ev) != DAGGER_OK) {
            free(p);
            p = NULL;
        }
        if (!p) {
            fail_op(d, "no event for work queued on");
            dg_dev_pending_t now = *what;
            settle(d, &now, 0); /* the op ends failed; the region says why */
            return;
        }
    }
    dg_dev_event_t *ev = p->ev;
    *p = *what;
    p->ev = ev;
    if (d->be->event_record(p->ev, s) != DAGGER_OK) {
        fail_op(d, "recording an event failed on");
        settle(d, p, 0);
        p->next = sd->spare;
        sd->spare = p;
        return;
    }
    p->next = sd->pending;
    sd->pending = p;
    atomic_fetch_add_explicit(&sd->npending, 1, memory_order_seq_cst);
    if (d->be->launch_host_fn)
        if (d->be->launch_host_fn(s, wake, sd) != DAGGER_OK)
            atomic_store(&sd->signalled, 1); /* no wake-up will come: poll anyway */
}

dagger_status_t dg_dev_on_poll(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dagger_ctx_state(ctx);
    const dg_dev_poll_msg_t *m = dagger_ctx_payload(ctx);
    dg_dev_side_t *sd = &d->side[m->side & 1];
    atomic_store_explicit(&sd->poll_posted, 0, memory_order_seq_cst);
    d->be->set_current(d->index);
    for (dg_dev_pending_t **pp = &sd->pending; *pp;) {
        dg_dev_pending_t *p = *pp;
        int q = d->be->event_query(p->ev);
        if (q == 0) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        if (q != 1)
            fail_op(d, "device work failed on");
        settle(d, p, q == 1);
        p->next = sd->spare;
        sd->spare = p;
        atomic_fetch_sub_explicit(&sd->npending, 1, memory_order_seq_cst);
        atomic_fetch_add_explicit(&d->completed, 1, memory_order_relaxed);
    }
    return DAGGER_OK;
}

void dg_dev_side_cleanup(dg_dev_t *d, dg_dev_side_t *s)
{
    for (dg_dev_pending_t *p = s->spare, *n; p; p = n) {
        n = p->next;
        d->be->event_destroy(p->ev);
        free(p);
    }
    s->spare = NULL;
}

/* Posts a dagger.dev.poll to one side unless one is on its way. */
static void post_poll(dg_dev_t *d, int side)
{
    dg_dev_side_t *sd = &d->side[side];
    if (atomic_exchange_explicit(&sd->poll_posted, 1, memory_order_seq_cst))
        return;
    dg_dev_poll_msg_t m = {side, 0};
    dg_act_post_t p = {.to = sd->addr, .type = d->ex->msg.dev_poll, .payload = &m,
                       .size = sizeof(m), .what = "device poll"};
    int direct;
    if (dg_act_post_local(d->ex->actors, sd->obj, &p, &direct) != DAGGER_OK)
        atomic_store(&sd->poll_posted, 0);
}

int dg_devs_poll(struct dg_exec *ex)
{
    int did = 0;
    for (int i = 0; i < ex->ndevs; i++) {
        dg_dev_t *d = &ex->devs[i];
        uint64_t before = atomic_load_explicit(&d->completed, memory_order_relaxed);
        int waiting = 0;
        for (int side = 0; side < 2; side++) {
            dg_dev_side_t *sd = &d->side[side];
            if (atomic_load_explicit(&sd->npending, memory_order_seq_cst) <= 0)
                continue;
            waiting = 1;
            /* With host functions, only a side whose event passed is worth a
             * turn; the flag is cleared before the turn looks, so a later
             * pass sets it again. */
            if (!d->be->launch_host_fn ||
                atomic_exchange_explicit(&sd->signalled, 0, memory_order_seq_cst))
                post_poll(d, side);
        }
        did += (int)(atomic_load_explicit(&d->completed, memory_order_relaxed) - before);
        /* Without a host function nothing wakes a sleeping worker: keep one
         * looking (the idle loop yields between looks). */
        if (waiting && !d->be->launch_host_fn)
            did++;
    }
    return did;
}
