/* Device work in flight (dev.h): each piece waits on an event recorded
 * after it; dagger.dev.poll turns of the owning actor query the events and
 * finish what is done. Nothing here waits for the device. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/exec/exec.h"
#include "core/base/status_internal.h"
#include "devices/dev.h"

/* dagger.dev.poll (dg_dev_on_poll): side says whose pending work to look at. */
typedef struct dg_dev_poll_msg {
    int32_t side;
    int32_t pad;
} dg_dev_poll_msg_t;

dagger_status_t dg_dev_poll_type(dg_devs_t *ds)
{
    return dg_devs_type(ds, "dagger.dev.poll", sizeof(dg_dev_poll_msg_t), &ds->msg.poll);
}

/* The backend's thread: the work queued on the stream before it is done,
 * so an event of this side passed; a worker polls it (and may sleep until
 * then). armed is cleared first: the poll that follows sees it clear. */
static void wake(void *arg)
{
    dg_dev_wake_t *w = arg;
    dg_devs_t *ds = w->side->dev->all;
    atomic_store_explicit(&w->armed, 0, memory_order_seq_cst);
    atomic_store_explicit(&w->side->signalled, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&ds->waking, 1, memory_order_seq_cst);
    if (!atomic_load_explicit(&ds->quiet, memory_order_seq_cst))
        dg_act_system_wake_any(w->side->dev->ex->actors);
    atomic_fetch_sub_explicit(&ds->waking, 1, memory_order_seq_cst);
}

void dg_devs_quiet(void *ctx)
{
    dg_devs_t *ds = ctx;
    atomic_store_explicit(&ds->quiet, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&ds->waking, memory_order_seq_cst))
        sched_yield();
}

/* The wake-up of stream s of d. */
static dg_dev_wake_t *wake_of(dg_dev_t *d, const dg_dev_stream_t *s)
{
    for (uint32_t k = 0; k < d->nstreams; k++)
        if (d->wakes[k].stream == s)
            return &d->wakes[k];
    for (uint32_t k = 0; k < d->nurgent; k++)
        if (d->wakes[DG_DEV_STREAMS_MAX + k].stream == s)
            return &d->wakes[DG_DEV_STREAMS_MAX + k];
    return &d->wakes[DG_DEV_WAKE_COPY];
}

/* Queues a wake-up after the work queued on s so far: always
 * (DAGGER_GPU_WAKE=each), or only when none is queued on s yet (armed: the
 * one queued wakes a poll, which asks again for what is still pending). */
static void ask_wake(dg_dev_t *d, dg_dev_stream_t *s)
{
    if (!d->be->launch_host_fn)
        return;
    dg_dev_wake_t *w = wake_of(d, s);
    if (d->all->wake_armed && atomic_exchange_explicit(&w->armed, 1, memory_order_seq_cst))
        return;
    atomic_fetch_add_explicit(&d->hostfns, 1, memory_order_relaxed);
    if (d->be->launch_host_fn(s, wake, w) != DAGGER_OK) {
        atomic_store(&w->armed, 0);
        atomic_store(&w->side->signalled, 1); /* no wake-up will come: poll anyway */
    }
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

/* A finished entry goes back to the side's spares; its generation moves on,
 * so a record of it (a chained task's wait, dev_proc.c) sees it finished. */
static void put_spare(dg_dev_side_t *sd, dg_dev_pending_t *p)
{
    p->gen++;
    p->next = sd->spare;
    sd->spare = p;
}

dg_dev_pending_t *dg_dev_pend(dg_dev_t *d, int side, dg_dev_stream_t *s,
                              const dg_dev_pending_t *what)
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
            return NULL;
        }
    }
    dg_dev_event_t *ev = p->ev;
    uint64_t gen = p->gen;
    *p = *what;
    p->ev = ev;
    p->gen = gen;
    p->stream = s;
    if (d->be->event_record(p->ev, s) != DAGGER_OK) {
        fail_op(d, "recording an event failed on");
        settle(d, p, 0);
        put_spare(sd, p);
        return NULL;
    }
    p->next = sd->pending;
    sd->pending = p;
    atomic_fetch_add_explicit(&sd->npending, 1, memory_order_seq_cst);
    ask_wake(d, s);
    return p;
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
        put_spare(sd, p);
        atomic_fetch_sub_explicit(&sd->npending, 1, memory_order_seq_cst);
        atomic_fetch_add_explicit(&d->completed, 1, memory_order_relaxed);
    }
    /* armed: what is still pending needs a wake-up queued after it (a no-op
     * where one is queued; it then comes back here when it runs). */
    if (d->all->wake_armed)
        for (dg_dev_pending_t *p = sd->pending; p; p = p->next)
            ask_wake(d, p->stream);
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
    dg_act_post_t p = {.to = sd->addr, .type = d->all->msg.poll, .payload = &m,
                       .size = sizeof(m), .what = "device poll"};
    int direct;
    if (dg_act_post_local(d->ex->actors, sd->obj, &p, &direct) != DAGGER_OK)
        atomic_store(&sd->poll_posted, 0);
}

int dg_devs_poll(void *ctx)
{
    dg_devs_t *ds = ctx;
    int did = 0;
    for (int i = 0; i < ds->n; i++) {
        dg_dev_t *d = &ds->dev[i];
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
