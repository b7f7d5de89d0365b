/* The test device kind: everything a GPU backend gives the runtime, on a
 * machine without one, so CI exercises every device data path. Its "device
 * memory" is a host allocation of its own (never the host pool); each stream
 * is a thread that runs the work queued on it in order, asynchronously, and
 * sleeps on a condition variable when its queue is empty; an event completes
 * when its stream's thread passes it. Off unless DAGGER_TEST_DEVICES gives a
 * rank test devices (dg_testdev_configure). */
#include "devices/testdev/testdev.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"

#define TD_ALIGN 64
#define TD_MEM_BYTES (1ull << 34) /* what info reports: 16 GiB, nominal */

typedef enum { TD_COPY, TD_MEMSET, TD_PACK, TD_EVENT, TD_WAIT, TD_HOSTFN, TD_QUIT } td_kind_t;

struct dg_dev_event {
    int dev;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t recorded;       /* generation of the last record (guarded by lock) */
    _Atomic uint64_t passed; /* generation the stream thread passed */
};

typedef struct td_item {
    struct td_item *next;
    td_kind_t kind;
    void *dst;
    const void *src;
    size_t bytes;
    dg_dev_span_t *spans;    /* TD_PACK: a copy */
    uint32_t nspans;
    int unpack;
    dg_dev_event_t *event;   /* TD_EVENT, TD_WAIT */
    uint64_t gen;
    void (*fn)(void *);      /* TD_HOSTFN */
} td_item_t;

struct dg_dev_stream {
    int dev;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    td_item_t *head, *tail;
    td_item_t quit;          /* the last item (stream_destroy) */
};

static _Atomic int td_count;
static _Atomic int64_t td_live_bytes, td_live_blocks;
static _Atomic int td_no_peers; /* dg_testdev_peers(0) */

void dg_testdev_configure(int n)
{
    atomic_store(&td_count, n < 0 ? 0 : n);
}

void dg_testdev_peers(int on)
{
    atomic_store(&td_no_peers, !on);
}

int dg_testdev_peers_on(void)
{
    return !atomic_load(&td_no_peers);
}

/* Test devices' memory is host memory: each reaches the others' unless
 * dg_testdev_peers(0) says they have no peer access. */
static dagger_status_t td_peer_enable(int dev, int peer)
{
    if (!dg_testdev_peers_on())
        return dg_error(DAGGER_ERR_UNSUPPORTED, "test device %d: no peer access to test device "
                        "%d (dg_testdev_peers(0))", dev, peer);
    return DAGGER_OK;
}

void dg_testdev_stats(int64_t *bytes, int64_t *blocks)
{
    *bytes = atomic_load(&td_live_bytes);
    *blocks = atomic_load(&td_live_blocks);
}

/* ------------------------------------------------------------ discovery */

static int td_count_fn(char *why, size_t cap)
{
    int n = atomic_load(&td_count);
    if (!n && why)
        snprintf(why, cap, "test devices are off (DAGGER_TEST_DEVICES=0)");
    return n;
}

static dagger_status_t td_check_dev(int dev, const char *fn)
{
    if (dev < 0 || dev >= atomic_load(&td_count))
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: test device %d of %d", fn, dev,
                        atomic_load(&td_count));
    return DAGGER_OK;
}

static dagger_status_t td_info(int dev, dg_dev_info_t *out)
{
    dagger_status_t st = td_check_dev(dev, "test device info");
    if (st != DAGGER_OK)
        return st;
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "test device %d", dev);
    out->mem_bytes = TD_MEM_BYTES;
    out->numa_node = -1;
    return DAGGER_OK;
}

/* Like a GPU runtime, the kind has a current device per thread, and work
 * for another device is refused: a path that forgets set_current fails
 * here as it would on CUDA. */
static _Thread_local int td_current = -1;

static dagger_status_t td_set_current(int dev)
{
    dagger_status_t st = td_check_dev(dev, "test device set_current");
    if (st == DAGGER_OK)
        td_current = dev;
    return st;
}

static dagger_status_t td_check_current(int dev, const char *fn)
{
    if (td_current != dev)
        return dg_error(DAGGER_ERR_INTERNAL, "%s: work for test device %d on a thread whose "
                        "current device is %d (set_current first)", fn, dev, td_current);
    return DAGGER_OK;
}

/* ------------------------------------------------------------ the stream thread */

static void pack_spans(const td_item_t *it)
{
    unsigned char *d = it->dst;
    const unsigned char *s = it->src;
    for (uint32_t i = 0; i < it->nspans; i++) {
        const dg_dev_span_t *sp = &it->spans[i];
        if (it->unpack)
            memcpy(d + sp->offset, s, sp->bytes);
        else
            memcpy(d, s + sp->offset, sp->bytes);
        if (it->unpack)
            s += sp->bytes;
        else
            d += sp->bytes;
    }
}

static void event_pass(dg_dev_event_t *e, uint64_t gen)
{
    pthread_mutex_lock(&e->lock);
    if (atomic_load(&e->passed) < gen)
        atomic_store_explicit(&e->passed, gen, memory_order_release);
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

/* Blocks this stream's thread (never a worker) until e passes gen. */
static void event_wait(dg_dev_event_t *e, uint64_t gen)
{
    pthread_mutex_lock(&e->lock);
    while (atomic_load_explicit(&e->passed, memory_order_acquire) < gen)
        pthread_cond_wait(&e->cond, &e->lock);
    pthread_mutex_unlock(&e->lock);
}

static void run_item(td_item_t *it)
{
    switch (it->kind) {
    case TD_COPY: memcpy(it->dst, it->src, it->bytes); break;
    case TD_MEMSET: memset(it->dst, 0, it->bytes); break;
    case TD_PACK: pack_spans(it); break;
    case TD_EVENT: event_pass(it->event, it->gen); break;
    case TD_WAIT: event_wait(it->event, it->gen); break;
    case TD_HOSTFN: it->fn(it->dst); break;
    case TD_QUIT: break; /* stream_main stops before it */
    }
}

static void *stream_main(void *arg)
{
    dg_dev_stream_t *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->head)
            pthread_cond_wait(&s->cond, &s->lock); /* idle: sleeps, never spins */
        td_item_t *it = s->head;
        s->head = it->next;
        if (!s->head)
            s->tail = NULL;
        pthread_mutex_unlock(&s->lock);
        if (it == &s->quit)
            return NULL;
        run_item(it);
        free(it->spans);
        free(it);
    }
}

static dagger_status_t enqueue(dg_dev_stream_t *s, const td_item_t *proto)
{
    dagger_status_t st = td_check_current(s->dev, "test device stream work");
    if (st != DAGGER_OK)
        return st;
    td_item_t *it = dg_malloc(sizeof(*it));
    if (!it)
        return dg_error(DAGGER_ERR_NO_MEMORY, "test device %d: out of memory queueing work",
                        s->dev);
    *it = *proto;
    it->next = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return DAGGER_OK;
}

/* ------------------------------------------------------------ streams and events */

/* A zeroed object of a device that exists, or NULL with the error recorded. */
static void *td_object(int dev, size_t bytes, const char *fn, dagger_status_t *st)
{
    *st = td_check_dev(dev, fn);
    if (*st == DAGGER_OK)
        *st = td_check_current(dev, fn);
    void *o = *st == DAGGER_OK ? dg_calloc(1, bytes) : NULL;
    if (*st == DAGGER_OK && !o)
        *st = dg_error(DAGGER_ERR_NO_MEMORY, "%s: test device %d: out of memory", fn, dev);
    return o;
}

static dagger_status_t td_stream_create(int dev, dg_dev_stream_t **out)
{
    dagger_status_t st;
    dg_dev_stream_t *s = td_object(dev, sizeof(*s), "test device stream_create", &st);
    if (!s)
        return st;
    s->dev = dev;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return dg_error(DAGGER_ERR_SYSTEM, "test device %d: cannot start a stream thread", dev);
    }
    *out = s;
    return DAGGER_OK;
}

static void td_stream_destroy(dg_dev_stream_t *s)
{
    if (!s)
        return;
    /* Queued work runs first (in order); then the thread ends. The quit
     * item lives in the stream, so stopping never needs memory. */
    s->quit = (td_item_t){.kind = TD_QUIT};
    pthread_mutex_lock(&s->lock);
    if (s->tail)
        s->tail->next = &s->quit;
    else
        s->head = &s->quit;
    s->tail = &s->quit;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static void *td_stream_native(dg_dev_stream_t *s)
{
    return s;
}

static dagger_status_t td_event_create(int dev, dg_dev_event_t **out)
{
    dagger_status_t st;
    dg_dev_event_t *e = td_object(dev, sizeof(*e), "test device event_create", &st);
    if (!e)
        return st;
    e->dev = dev;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    *out = e;
    return DAGGER_OK;
}

static void td_event_destroy(dg_dev_event_t *e)
{
    if (!e)
        return;
    /* A record still queued would touch it: wait for it to pass. */
    pthread_mutex_lock(&e->lock);
    uint64_t gen = e->recorded;
    pthread_mutex_unlock(&e->lock);
    event_wait(e, gen);
    pthread_cond_destroy(&e->cond);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

static dagger_status_t td_event_record(dg_dev_event_t *e, dg_dev_stream_t *s)
{
    pthread_mutex_lock(&e->lock);
    uint64_t gen = ++e->recorded;
    pthread_mutex_unlock(&e->lock);
    td_item_t it = {.kind = TD_EVENT, .event = e, .gen = gen};
    return enqueue(s, &it);
}

static int td_event_query(dg_dev_event_t *e)
{
    pthread_mutex_lock(&e->lock);
    uint64_t gen = e->recorded;
    pthread_mutex_unlock(&e->lock);
    return atomic_load_explicit(&e->passed, memory_order_acquire) >= gen;
}

static dagger_status_t td_stream_wait(dg_dev_stream_t *s, dg_dev_event_t *e)
{
    pthread_mutex_lock(&e->lock);
    uint64_t gen = e->recorded;
    pthread_mutex_unlock(&e->lock);
    td_item_t it = {.kind = TD_WAIT, .event = e, .gen = gen};
    return enqueue(s, &it);
}

static dagger_status_t td_launch_host_fn(dg_dev_stream_t *s, void (*fn)(void *), void *arg)
{
    td_item_t it = {.kind = TD_HOSTFN, .fn = fn, .dst = arg};
    return enqueue(s, &it);
}

/* ------------------------------------------------------------ memory */

/* A separate host allocation: the block is the device's, never the host
 * pool's, so a path that confuses the two shows up as a leak or a double
 * free under the sanitizers. */
static dagger_status_t td_mem_alloc(int dev, size_t bytes, void **ptr)
{
    dagger_status_t st = td_check_dev(dev, "test device mem_alloc");
    if (st == DAGGER_OK)
        st = td_check_current(dev, "test device mem_alloc");
    if (st != DAGGER_OK)
        return st;
    size_t rounded = (bytes + TD_ALIGN - 1) / TD_ALIGN * TD_ALIGN + TD_ALIGN;
    unsigned char *p = dg_aligned_alloc(TD_ALIGN, rounded);
    if (!p)
        return dg_error(DAGGER_ERR_NO_MEMORY, "test device %d: cannot allocate %zu bytes", dev,
                        bytes);
    memcpy(p, &rounded, sizeof(rounded)); /* the block's size, in front of it */
    atomic_fetch_add(&td_live_bytes, (int64_t)rounded);
    atomic_fetch_add(&td_live_blocks, 1);
    *ptr = p + TD_ALIGN;
    return DAGGER_OK;
}

static void td_mem_free(int dev, void *ptr)
{
    (void)dev;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - TD_ALIGN;
    size_t rounded;
    memcpy(&rounded, p, sizeof(rounded));
    atomic_fetch_sub(&td_live_bytes, (int64_t)rounded);
    atomic_fetch_sub(&td_live_blocks, 1);
    free(p);
}

static dagger_status_t td_host_alloc(size_t bytes, void **ptr)
{
    *ptr = dg_aligned_alloc(TD_ALIGN, (bytes + TD_ALIGN - 1) / TD_ALIGN * TD_ALIGN + TD_ALIGN);
    return *ptr ? DAGGER_OK
                : dg_error(DAGGER_ERR_NO_MEMORY, "test device: cannot allocate %zu bytes of "
                           "staging memory", bytes);
}

static void td_host_free(void *ptr)
{
    free(ptr);
}

/* ------------------------------------------------------------ data */

static dagger_status_t td_copy(dg_dev_stream_t *s, void *dst, const void *src, size_t bytes,
                               dg_dev_copy_dir_t dir)
{
    (void)dir; /* all test device memory is host-addressable */
    td_item_t it = {.kind = TD_COPY, .dst = dst, .src = src, .bytes = bytes};
    return enqueue(s, &it);
}

static dagger_status_t td_memset0(dg_dev_stream_t *s, void *ptr, size_t bytes)
{
    td_item_t it = {.kind = TD_MEMSET, .dst = ptr, .bytes = bytes};
    return enqueue(s, &it);
}

static dagger_status_t td_pack(dg_dev_stream_t *s, void *dst, const void *src,
                               const dg_dev_span_t *spans, uint32_t nspans, int unpack)
{
    td_item_t it = {.kind = TD_PACK, .dst = dst, .src = src, .nspans = nspans, .unpack = unpack};
    it.spans = dg_malloc((nspans ? nspans : 1) * sizeof(*spans));
    if (!it.spans)
        return dg_error(DAGGER_ERR_NO_MEMORY, "test device %d: out of memory queueing a pack",
                        s->dev);
    memcpy(it.spans, spans, nspans * sizeof(*spans));
    dagger_status_t st = enqueue(s, &it);
    if (st != DAGGER_OK)
        free(it.spans);
    return st;
}

const dg_dev_backend_t dg_testdev_backend = {
    .name = "testdev",
    .label = "test device",
    .kind = DG_DEV_TEST,
    .count = td_count_fn,
    .info = td_info,
    .set_current = td_set_current,
    .stream_create = td_stream_create,
    .stream_destroy = td_stream_destroy,
    .stream_native = td_stream_native,
    .event_create = td_event_create,
    .event_destroy = td_event_destroy,
    .event_record = td_event_record,
    .event_query = td_event_query,
    .stream_wait = td_stream_wait,
    .mem_alloc = td_mem_alloc,
    .mem_free = td_mem_free,
    .host_alloc = td_host_alloc,
    .host_free = td_host_free,
    .copy = td_copy,
    .memset0 = td_memset0,
    .pack = td_pack,
    .launch_host_fn = td_launch_host_fn,
    .peer_enable = td_peer_enable,
    .ipc_handle_bytes = DG_TESTDEV_IPC_HANDLE,
    .ipc_export = dg_testdev_ipc_export,
    .ipc_open = dg_testdev_ipc_open,
    .ipc_close = dg_testdev_ipc_close,
    .ipc_alloc = dg_testdev_ipc_alloc,
    .ipc_free = dg_testdev_ipc_free,
};
