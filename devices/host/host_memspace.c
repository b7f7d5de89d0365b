/* Host memory: aligned allocation and memcpy. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "devices/memspace.h"

#define DG_HOST_ALIGN 64

static void *host_alloc(dg_memspace_t *ms, size_t bytes)
{
    (void)ms;
    size_t rounded = (bytes + DG_HOST_ALIGN - 1) / DG_HOST_ALIGN * DG_HOST_ALIGN;
    return dg_aligned_alloc(DG_HOST_ALIGN, rounded ? rounded : DG_HOST_ALIGN);
}

static void host_free(dg_memspace_t *ms, void *ptr, size_t bytes)
{
    (void)ms;
    (void)bytes;
    free(ptr);
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
