/* A device backend: what one device kind (CUDA, HIP, or the test device
 * kind that CI runs without a GPU) gives the runtime. The device's
 * processor actor and memory-space actor (devices/dev_*.c, above the kinds)
 * are built on these calls only, so the actors, the executor and the
 * planner are the same code for every kind. Here, below every kind
 * (devices/testdev, devices/cuda, devices/hip implement it; devices/gpu has
 * what the GPU kinds share).
 *
 * Threading: discovery (count, info) runs once at init on the init thread.
 * Every other call for device d is made from a turn of one of d's actors;
 * the two actors of a device may run at the same time on different threads,
 * so a backend keeps per-stream state per stream and guards what the two
 * share. set_current is called before the first call of each turn.
 *
 * Errors: a call that fails returns a status other than DAGGER_OK and
 * records the reason with dg_error() (core/base/status_internal.h), naming the
 * device and the backend's own error string. Nothing here blocks on the
 * device: work is queued on a stream, and its end is seen by polling an
 * event recorded after it. The only waiting calls are stream_destroy and
 * the final close. */
#ifndef DG_DEV_DEVICE_H
#define DG_DEV_DEVICE_H

#include <dagger/status.h>
#include <stddef.h>
#include <stdint.h>

#include "core/exec/memspace.h"

/* What discovery learns about one device (the processor table carries it). */
typedef struct dg_dev_info {
    char name[96];           /* "NVIDIA H200", "test device 0" */
    uint64_t mem_bytes;      /* device memory */
    char pci_bus_id[24];     /* "0000:3b:00.0"; "" when the kind has none */
    int32_t numa_node;       /* closest NUMA node; -1 unknown */
    char cpus[64];           /* the cores closest to it ("0-15,32-47"); "" unknown */
} dg_dev_info_t;

typedef struct dg_dev_stream dg_dev_stream_t; /* a queue of device work, in order */
typedef struct dg_dev_event dg_dev_event_t;   /* a point in a stream's work */

typedef enum dg_dev_copy_dir {
    DG_DEV_H2D = 1,          /* host (pinned or not) to this device */
    DG_DEV_D2H = 2,
    DG_DEV_D2D = 3           /* within this device, or with a peer's memory (peer_enable) */
} dg_dev_copy_dir_t;

/* One contiguous run of bytes of a strided or sub-view buffer. */
typedef struct dg_dev_span {
    uint64_t offset;         /* bytes from the buffer's start */
    uint64_t bytes;
} dg_dev_span_t;

typedef struct dg_dev_backend {
    const char *name;        /* "cuda", "hip", "testdev" */
    const char *label;       /* for messages and trace tracks: "CUDA GPU", "test device" */
    dg_dev_kind_t kind;

    /* ---- discovery ---- */
    /* The number of devices; 0 when there are none or no driver, with why
     * ("no CUDA driver: cudaGetDeviceCount: ...") written to why. */
    int (*count)(char *why, size_t cap);
    dagger_status_t (*info)(int dev, dg_dev_info_t *out);

    /* ---- per thread ---- */
    dagger_status_t (*set_current)(int dev);

    /* ---- streams and events ---- */
    dagger_status_t (*stream_create)(int dev, dg_dev_stream_t **out);
    /* Optional: a stream whose queued work the device schedules ahead of
     * the other streams' as it frees up (the runtime's greatest stream
     * priority). NULL: the kind has no priorities. */
    dagger_status_t (*stream_create_urgent)(int dev, dg_dev_stream_t **out);
    /* Waits for the stream's work, then frees it. */
    void (*stream_destroy)(dg_dev_stream_t *s);
    /* What dagger_task_stream() returns: cudaStream_t, hipStream_t, or the
     * test kind's stream object. */
    void *(*stream_native)(dg_dev_stream_t *s);
    dagger_status_t (*event_create)(int dev, dg_dev_event_t **out);
    void (*event_destroy)(dg_dev_event_t *e);
    /* Marks the point after the work queued on s so far. */
    dagger_status_t (*event_record)(dg_dev_event_t *e, dg_dev_stream_t *s);
    /* 1: the work before the recorded point is done; 0: not yet; any other
     * value: the device failed (reason recorded with dg_error). */
    int (*event_query)(dg_dev_event_t *e);
    /* Work queued on s after this call starts after e's point. */
    dagger_status_t (*stream_wait)(dg_dev_stream_t *s, dg_dev_event_t *e);

    /* ---- memory ---- */
    /* Device memory of dev, aligned for any element type. */
    dagger_status_t (*mem_alloc)(int dev, size_t bytes, void **ptr);
    void (*mem_free)(int dev, void *ptr);
    /* Page-locked host memory for staging (registered with every device). */
    dagger_status_t (*host_alloc)(size_t bytes, void **ptr);
    void (*host_free)(void *ptr);

    /* ---- data, queued on a stream ---- */
    dagger_status_t (*copy)(dg_dev_stream_t *s, void *dst, const void *src, size_t bytes,
                            dg_dev_copy_dir_t dir);
    dagger_status_t (*memset0)(dg_dev_stream_t *s, void *ptr, size_t bytes);
    /* One device kernel: gathers the spans of src (device memory) into dst
     * (device memory, contiguous, in span order), or with unpack = 1
     * scatters contiguous src into the spans of dst. spans lives in host
     * memory and may be reused once the call returns. */
    dagger_status_t (*pack)(dg_dev_stream_t *s, void *dst, const void *src,
                            const dg_dev_span_t *spans, uint32_t nspans, int unpack);

    /* ---- optional (NULL when the kind has none) ---- */
    /* Queues fn(arg) on s: it runs on a thread of the backend (not a
     * worker) once the work queued on s before it is done, and must not
     * call the backend (cudaLaunchHostFunc). The actors use it to wake a
     * sleeping worker to poll their events; without it, a worker keeps
     * polling (with yields) while device work is pending. */
    dagger_status_t (*launch_host_fn)(dg_dev_stream_t *s, void (*fn)(void *), void *arg);

    /* ---- between the devices of one process (NULL when the kind has none) ---- */
    /* Lets dev's streams read and write peer's memory: copy with DG_DEV_D2D
     * and pack with one side in peer's memory (cudaDeviceEnablePeerAccess).
     * DAGGER_OK when they can; otherwise the reason (the copies between the
     * two then stage through host memory). Called at init. */
    dagger_status_t (*peer_enable)(int dev, int peer);

    /* ---- between processes of one node (NULL when the kind has none) ---- */
    size_t ipc_handle_bytes; /* at most 128 */
    /* The handle of the block at ptr (a whole block of ipc_alloc, or of
     * mem_alloc where ipc_alloc is NULL), which another process of the node
     * opens with ipc_open (its device current) as a pointer to the same
     * memory, until ipc_close. Opening costs far more than a copy of a few
     * KiB: callers keep what they opened (devices/dev_ipc.c). */
    dagger_status_t (*ipc_export)(int dev, void *ptr, void *handle);
    dagger_status_t (*ipc_open)(int dev, const void *handle, void **ptr);
    void (*ipc_close)(int dev, void *ptr);
    /* Device memory that ipc_export can export; NULL when mem_alloc's can
     * (the GPU kinds: cudaMalloc, hipMalloc). */
    dagger_status_t (*ipc_alloc)(int dev, size_t bytes, void **ptr);
    void (*ipc_free)(int dev, void *ptr);
} dg_dev_backend_t;

/* The backends compiled into this build: the test device kind always, CUDA
 * and HIP when CMake found them (DAGGER_CUDA, DAGGER_HIP). NULL otherwise. */
const dg_dev_backend_t *dg_dev_backend(dg_dev_kind_t kind);

extern const dg_dev_backend_t dg_testdev_backend;
#ifdef DAGGER_HAVE_CUDA
extern const dg_dev_backend_t dg_cuda_backend;
#endif
#ifdef DAGGER_HAVE_HIP
extern const dg_dev_backend_t dg_hip_backend;
#endif

#endif
