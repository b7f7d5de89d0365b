/* Memory spaces: where a buffer's bytes live (host memory, or one GPU's
 * memory). The executor allocates, frees and copies through these ops only,
 * so a device backend plugs in without touching the planner or the executor.
 * Space 0 of every rank is host memory; space 1 + d is device d. */
#ifndef DG_EXEC_MEMSPACE_H
#define DG_EXEC_MEMSPACE_H

#include <dagger/status.h>
#include <stddef.h>

typedef enum dg_dev_kind {
    DG_DEV_HOST = 0,
    DG_DEV_CUDA = 1,
    DG_DEV_HIP = 2,
    DG_DEV_TEST = 3          /* the test device kind (DAGGER_TEST_DEVICES): no GPU */
} dg_dev_kind_t;

typedef struct dg_memspace dg_memspace_t;

typedef struct dg_memspace_ops {
    const char *name;
    dg_dev_kind_t kind;
    /* bytes of memory, aligned for any element type; NULL when out of memory */
    void *(*alloc)(dg_memspace_t *ms, size_t bytes);
    void (*free)(dg_memspace_t *ms, void *ptr, size_t bytes);
    /* copies bytes; each side is in this space or in host memory (dst_host /
     * src_host say which); returns when the bytes are in place */
    dagger_status_t (*copy)(dg_memspace_t *ms, void *dst, int dst_host, const void *src,
                            int src_host, size_t bytes);
} dg_memspace_ops_t;

struct dg_memspace {
    const dg_memspace_ops_t *ops;
    int device;              /* device index (0 for the host) */
    void *impl;              /* backend state (the device's stream...) */
    int huge;                /* host space: blocks of 2 MiB or more in transparent huge pages
                                (dg_alloc_block; DAGGER_HUGE_PAGES) */
};

/* Page-locked host memory for the host space, which devices/ gives it on a
 * rank with devices (DAGGER_GPU_PIN_HOST): buffers of at least min_bytes
 * come from alloc (the device runtime's pinned allocator), so that copies
 * between them and device memory are asynchronous and at the link's speed.
 * The host space's impl points at it; NULL (the default): plain memory. */
typedef struct dg_host_pin {
    dagger_status_t (*alloc)(void *ctx, size_t bytes, void **ptr);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
    size_t min_bytes;        /* > 0 */
} dg_host_pin_t;

/* The host memory space (always present, core/exec/host_memspace.c: the
 * buffer table's pool of released blocks is host memory). The device kinds
 * add their own ops tables (devices/dev_space.c). */
extern const dg_memspace_ops_t dg_host_memspace_ops;

#endif
