/* The devices of a rank in the executor: their state, streams and actors
 * (dev.h), and whether transfers of their memory to other ranks go direct. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/exec/exec.h"
#include "core/base/status_internal.h"
#include "devices/dev.h"
#include "devices/discover.h"
#include "transport/tx.h"

/* DAGGER_GPU_DIRECT for one device: 0 host-staged, 1 direct (an error where
 * UCX cannot read the memory), -1 direct when UCX reports the memory type.
 * Test device memory is host memory UCX can always read, but it stands for
 * a GPU's: auto keeps it host-staged, 1 sends it directly. */
static dagger_status_t resolve_direct(dg_exec_t *ex, dg_dev_t *d)
{
    int want = ex->gpu_direct;
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

static dagger_status_t start_one(dg_exec_t *ex, dg_dev_t *d, const dg_dev_found_t *f, int i)
{
    d->ex = ex;
    d->be = f->be;
    d->index = f->index;
    d->space = 1 + (uint32_t)i;
    d->side[DG_DEV_SIDE_PROC].dev = d->side[DG_DEV_SIDE_SPACE].dev = d;
    snprintf(d->label, sizeof(d->label), "%s %d", f->be->label, f->index);
    pthread_mutex_init(&d->mem.lock, NULL);
    pthread_mutex_init(&d->pinned.lock, NULL);
    d->mem.limit = d->pinned.limit = ex->bufs.pool_limit;
    dagger_status_t st = resolve_direct(ex, d);
    if (st == DAGGER_OK)
        st = d->be->set_current(d->index);
    for (int k = 0; k < DG_DEV_STREAMS && st == DAGGER_OK; k++)
        st = d->be->stream_create(d->index, &d->streams[k]);
    if (st == DAGGER_OK)
        st = d->be->stream_create(d->index, &d->copy_stream);
    if (st == DAGGER_OK)
        st = dg_dev_space_spawn(d);
    if (st == DAGGER_OK)
        st = dg_dev_proc_spawn(d);
    return st;
}

dagger_status_t dg_devs_start(dg_exec_t *ex, const dg_dev_table_t *t)
{
    ex->devs = dg_calloc((size_t)t->n, sizeof(*ex->devs));
    if (!ex->devs)
        return dg_error(DAGGER_ERR_NO_MEMORY, "executor: out of memory");
    for (int i = 0; i < t->n; i++) {
        ex->ndevs = i + 1; /* destroy cleans up the ones started */
        dagger_status_t st = start_one(ex, &ex->devs[i], &t->dev[i], i);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

void dg_devs_destroy(dg_exec_t *ex)
{
    for (int i = 0; i < ex->ndevs; i++) {
        dg_dev_t *d = &ex->devs[i];
        d->be->set_current(d->index); /* start_one set be first */
        for (int k = 0; k < DG_DEV_STREAMS; k++)
            if (d->streams[k])
                d->be->stream_destroy(d->streams[k]);
        if (d->copy_stream)
            d->be->stream_destroy(d->copy_stream);
        for (int side = 0; side < 2; side++)
            dg_dev_side_cleanup(d, &d->side[side]);
        dg_dev_cache_cleanup(d, &d->mem);
        dg_dev_cache_cleanup(d, &d->pinned);
        pthread_mutex_destroy(&d->mem.lock);
        pthread_mutex_destroy(&d->pinned.lock);
    }
    free(ex->devs);
    ex->devs = NULL;
    ex->ndevs = 0;
}
