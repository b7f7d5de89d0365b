/* Host memory: aligned allocation and memcpy. The executor's own memory
 * space (space 0 of every rank), here rather than in devices/host because
 * the buffer table's pool of released blocks (bufs.c) is host memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/exec/memspace.h"

#define DG_HOST_ALIGN 64

/* With a dg_host_pin_t (ms->impl), every buffer of at least min_bytes has a
 * header of DG_HOST_ALIGN bytes before it saying where it came from: pinned
 * memory, or plain memory where the pinned allocator refused (the free
 * below must give each back to its own allocator). */
#define DG_HOST_PINNED 0x70696e6e6564ull /* "pinned" */
#define DG_HOST_PLAIN 0x706c61696eull    /* "plain" */

static size_t rounded(size_t bytes)
{
    size_t r = (bytes + DG_HOST_ALIGN - 1) / DG_HOST_ALIGN * DG_HOST_ALIGN;
    return r ? r : DG_HOST_ALIGN;
}

static void *host_alloc(dg_memspace_t *ms, size_t bytes)
{
    const dg_host_pin_t *pin = ms->impl;
    if (!pin || bytes < pin->min_bytes)
        return dg_alloc_block(rounded(bytes), ms->huge);
    void *base = NULL;
    uint64_t tag = DG_HOST_PINNED;
    if (pin->alloc(pin->ctx, rounded(bytes) + DG_HOST_ALIGN, &base) != DAGGER_OK || !base) {
        /* plain memory instead: slower copies, but the buffer exists */
        tag = DG_HOST_PLAIN;
        base = dg_aligned_alloc(DG_HOST_ALIGN, rounded(bytes) + DG_HOST_ALIGN);
        if (!base)
            return NULL;
    }
    memcpy(base, &tag, sizeof tag);
    return (unsigned char *)base + DG_HOST_ALIGN;
}

static void host_free(dg_memspace_t *ms, void *ptr, size_t bytes)
{
    const dg_host_pin_t *pin = ms->impl;
    if (!ptr)
        return;
    if (!pin || bytes < pin->min_bytes) {
        free(ptr);
        return;
    }
    unsigned char *base = (unsigned char *)ptr - DG_HOST_ALIGN;
    uint64_t tag;
    memcpy(&tag, base, sizeof tag);
    DG_ASSERT(tag == DG_HOST_PINNED || tag == DG_HOST_PLAIN);
    if (tag == DG_HOST_PINNED)
        pin->free(pin->ctx, base);
    else
        free(base);
}

static dagger_status_t host_copy(dg_memspace_t *ms, void *dst, int dst_host, const void *src,
                                 int src_host, size_t bytes)
{
    (void)ms;
    (void)dst_host;
    (void)src_host;
    memcpy(dst, src, bytes);
    return DAGGER_OK;
}

const dg_memspace_ops_t dg_host_memspace_ops = {
    .name = "host",
    .kind = DG_DEV_HOST,
    .alloc = host_alloc,
    .free = host_free,
    .copy = host_copy,
};
