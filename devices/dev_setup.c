/* The actors of a rank's executor (devices.h): the host ones, and the
 * devices' state, streams and actors (dev.h), with whether transfers of
 * their memory to other ranks go direct. */
#include "devices/devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/msgtype.h"
#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "devices/dev.h"
#include "devices/host/host.h"
#include "transport/tx.h"

/* DAGGER_GPU_DIRECT for one device: 0 host-staged, 1 direct (an error where
 * UCX cannot read the memory), -1 direct when UCX reports the memory type.
 * Test device memory is host memory UCX can always read, but it stands for
 * a GPU's: auto keeps it host-staged, 1 sends it directly. */
static dagger_status_t resolve_direct(dg_exec_t *ex, dg_dev_t *d)
{
    int want = d->all->gpu_direct;
    if (want < -1 || want > 1)
        return dg_error(DAGGER_ERR_CONFIG, "DAGGER_GPU_DIRECT=%d: use 1 (direct), 0 (host "
                        "staging) or -1 (automatic)", want);
    if (d->be->kind == DG_DEV_TEST || !ex->tx) {
        d->direct = want == 1;
        return DAGGER_OK;
    }
    char why[200];
    int can = dg_tx_device_memory(ex->tx, d->be->kind == DG_DEV_CUDA ? DG_TX_MEM_CUDA
                                                                     : DG_TX_MEM_ROCM,
                                  why, sizeof(why));
    if (want == 1 && !can)
        return dg_error(DAGGER_ERR_CONFIG, "DAGGER_GPU_DIRECT=1, but UCX cannot move %s memory "
                        "(%s); use DAGGER_GPU_DIRECT=0 or -1 (host staging), or a UCX built "
                        "with support for it", d->label, why);
    d->direct = want == 1 || (want == -1 && can);
    return DAGGER_OK;
}

static dagger_status_t start_one(dg_devs_t *ds, dg_dev_t *d, const dg_dev_found_t *f, int i)
{
    dg_exec_t *ex = ds->ex;
    d->ex = ex;
    d->all = ds;
    d->be = f->be;
    d->index = f->index;
    d->space = 1 + (uint32_t)i;
    d->side[DG_DEV_SIDE_PROC].dev = d->side[DG_DEV_SIDE_SPACE].dev = d;
    snprintf(d->label, sizeof(d->label), "%s %d", f->be->label, f->index);
    pthread_mutex_init(&d->mem.lock, NULL);
    pthread_mutex_init(&d->pinned.lock, NULL);
    pthread_mutex_init(&d->ipcmem.lock, NULL);
    d->mem.limit = d->pinned.limit = d->ipcmem.limit = ex->bufs.pool_limit;
    dagger_status_t st = resolve_direct(ex, d);
    if (st == DAGGER_OK)
        st = d->be->set_current(d->index);
    d->nstreams = ds->streams;
    for (uint32_t k = 0; k < d->nstreams && st == DAGGER_OK; k++)
        st = d->be->stream_create(d->index, &d->streams[k]);
    d->nurgent = ds->priority ? d->nstreams : 0;
    dagger_status_t (*urgent)(int, dg_dev_stream_t **) =
        d->be->stream_create_urgent ? d->be->stream_create_urgent : d->be->stream_create;
    for (uint32_t k = 0; k < d->nurgent && st == DAGGER_OK; k++)
        st = urgent(d->index, &d->urgent[k]);
    if (st == DAGGER_OK)
        st = d->be->stream_create(d->index, &d->copy_stream);
    for (uint32_t k = 0; k < d->nstreams; k++)
        d->wakes[k] = (dg_dev_wake_t){.side = &d->side[DG_DEV_SIDE_PROC], .stream = d->streams[k]};
    for (uint32_t k = 0; k < d->nurgent; k++)
        d->wakes[DG_DEV_STREAMS_MAX + k] = (dg_dev_wake_t){.side = &d->side[DG_DEV_SIDE_PROC],
                                                           .stream = d->urgent[k]};
    d->wakes[DG_DEV_WAKE_COPY] = (dg_dev_wake_t){.side = &d->side[DG_DEV_SIDE_SPACE],
                                                 .stream = d->copy_stream};
    if (st == DAGGER_OK)
        st = dg_dev_space_spawn(d);
    if (st == DAGGER_OK)
        st = dg_dev_proc_spawn(d);
    return st;
}

static dagger_status_t start_devs(dg_devs_t *ds, const dg_dev_table_t *t)
{
    if (!t->n)
        return DAGGER_OK;
    ds->dev = dg_calloc((size_t)t->n, sizeof(*ds->dev));
    if (!ds->dev)
        return dg_error(DAGGER_ERR_NO_MEMORY, "executor: out of memory");
    for (int i = 0; i < t->n; i++) {
        ds->n = i + 1; /* destroy cleans up the ones started */
        dagger_status_t st = start_one(ds, &ds->dev[i], &t->dev[i], i);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

/* Which devices of the rank reach each other's memory (dg_dev_t.peers):
 * every ordered pair of one kind whose backend enables it. A pair that
 * cannot stages its copies through host memory, said at info level. */
static void enable_peers(dg_devs_t *ds)
{
    for (int i = 0; i < ds->n; i++)
        for (int j = 0; j < ds->n; j++) {
            dg_dev_t *d = &ds->dev[i], *p = &ds->dev[j];
            if (i == j || d->be != p->be || !d->be->peer_enable)
                continue;
            if (d->be->peer_enable(d->index, p->index) == DAGGER_OK)
                d->peers |= 1u << j;
            else
                dg_log(DG_LOG_INFO, "rank %d: copies from %s to %s go through host memory: %s",
                       ds->ex->rank, p->label, d->label, dagger_error_detail());
        }
}

dagger_status_t dg_devs_type(dg_devs_t *ds, const char *name, size_t size, uint32_t *id)
{
    dagger_msg_type_desc_t d = {name, DAGGER_MSG_FIXED, size};
    return dg_msgtypes_register(dg_act_system_types(ds->ex->actors), &d, id);
}

static void destroy_devs(void *ctx)
{
    dg_devs_t *ds = ctx;
    for (int i = 0; i < ds->n; i++) {
        dg_dev_t *d = &ds->dev[i];
        d->be->set_current(d->index); /* start_one set be first */
        for (int k = 0; k < DG_DEV_STREAMS_MAX; k++) {
            if (d->streams[k])
                d->be->stream_destroy(d->streams[k]);
            if (d->urgent[k])
                d->be->stream_destroy(d->urgent[k]);
        }
        if (d->copy_stream)
            d->be->stream_destroy(d->copy_stream);
        for (int side = 0; side < 2; side++)
            dg_dev_side_cleanup(d, &d->side[side]);
        dg_dev_ipc_cleanup(d);
        dg_dev_cache_cleanup(d, &d->mem);
        dg_dev_cache_cleanup(d, &d->pinned);
        dg_dev_cache_cleanup(d, &d->ipcmem);
        pthread_mutex_destroy(&d->mem.lock);
        pthread_mutex_destroy(&d->pinned.lock);
        pthread_mutex_destroy(&d->ipcmem.lock);
    }
    free(ds->dev);
    free(ds);
}

/* The host space's pinned buffers come from one device's runtime
 * (portable: usable with every device of that runtime). */
static dagger_status_t pin_alloc(void *ctx, size_t bytes, void **ptr)
{
    const dg_dev_t *d = ctx;
    return d->be->host_alloc(bytes, ptr);
}

static void pin_free(void *ctx, void *ptr)
{
    const dg_dev_t *d = ctx;
    d->be->host_free(ptr);
}

/* Host buffers of at least min bytes become pinned memory: of the first
 * GPU's runtime, or the first device's where the rank has only test devices
 * (whose "pinned" memory is plain memory: the same path, tested in CI). */
static void pin_host(dg_devs_t *ds, size_t min)
{
    if (!ds->n || !min)
        return;
    dg_dev_t *d = &ds->dev[0];
    for (int i = 0; i < ds->n; i++)
        if (ds->dev[i].be->kind != DG_DEV_TEST) {
            d = &ds->dev[i];
            break;
        }
    ds->pin = (dg_host_pin_t){.alloc = pin_alloc, .free = pin_free, .ctx = d, .min_bytes = min};
    ds->ex->bufs.spaces[0].impl = &ds->pin;
}

dagger_status_t dg_devices_start(dg_exec_t *ex, const dg_dev_table_t *t,
                                 const dg_devices_params_t *prm)
{
    dg_devs_t *ds = dg_calloc(1, sizeof(*ds));
    if (!ds)
        return dg_error(DAGGER_ERR_NO_MEMORY, "executor: out of memory");
    ds->ex = ex;
    ds->gpu_direct = prm->gpu_direct;
    size_t piece = prm->piece;
    ds->piece = piece < DG_DEV_PIECE_MAX ? piece : DG_DEV_PIECE_MAX; /* the header's u32 */
    ds->ipc = prm->ipc;
    int streams_ok = prm->streams >= 1 && prm->streams <= DG_DEV_STREAMS_MAX;
    ds->streams = streams_ok ? (uint32_t)prm->streams : 0;
    /* First, so that the executor frees ds whatever fails next. */
    dg_exec_set_devices(ex, &(dg_exec_devices_t){.ctx = ds, .quiet = dg_devs_quiet,
                                                  .destroy = destroy_devs});
    dagger_status_t st = ds->streams ? DAGGER_OK
                         : dg_error(DAGGER_ERR_CONFIG, "DAGGER_GPU_STREAMS=%lld: use 1 to %d "
                                    "streams per device", prm->streams, DG_DEV_STREAMS_MAX);
    ds->wake_armed = !prm->wake || !prm->wake[0] || !strcmp(prm->wake, "armed");
    ds->priority = prm->priority;
    ds->chain = prm->chain;
    ds->peer = prm->peer;
    if (st == DAGGER_OK && !ds->wake_armed && strcmp(prm->wake, "each"))
        st = dg_error(DAGGER_ERR_CONFIG, "DAGGER_GPU_WAKE=%s: use armed or each", prm->wake);
    if (st == DAGGER_OK)
        st = dg_dev_launch_type(ds);
    if (st == DAGGER_OK)
        st = dg_dev_poll_type(ds);
    if (st == DAGGER_OK)
        st = dg_dev_staged_type(ds);
    if (st == DAGGER_OK)
        st = dg_dev_piece_type(ds);
    if (st == DAGGER_OK)
        st = dg_dev_ipc_done_type(ds);
    if (st == DAGGER_OK)
        st = dg_host_space_start(ex); /* first actor: the same id on every rank */
    if (st == DAGGER_OK)
        st = dg_host_procs_start(ex);
    if (st == DAGGER_OK)
        st = start_devs(ds, t);
    if (st == DAGGER_OK && ds->peer)
        enable_peers(ds);
    if (st == DAGGER_OK)
        pin_host(ds, prm->pin_min);
    if (st == DAGGER_OK)
        dg_exec_set_devices(ex, &(dg_exec_devices_t){
                                    .ctx = ds, .n = ds->n, .launch_type = ds->msg.launch,
                                    .poll = dg_devs_poll, .launch = dg_devs_launch,
                                    .staged = dg_devs_staged, .piece = dg_devs_piece,
                                    .quiet = dg_devs_quiet, .destroy = destroy_devs});
    return st;
}
