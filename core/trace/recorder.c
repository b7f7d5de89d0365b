/* The recorder: per-thread buffers, written to the rank's file in blocks.
 *
 * A thread finds its buffer through two thread-local words: the buffer and
 * the recorder generation it belongs to. A stop bumps the generation, so a
 * thread never touches a buffer of an earlier recording. Buffers are owned
 * by the recorder (a list), which writes and frees them at the stop: by then
 * the worker threads have exited, which is why the stop must come after
 * they joined. */
#include "core/trace/recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"

typedef struct dg_trace_buf {
    struct dg_trace_buf *next;
    dg_trace_thread_t th;
    int32_t thread;
    uint32_t used, nevents;
    _Alignas(8) unsigned char data[DG_TRACE_BUF_BYTES];
} dg_trace_buf_t;

typedef struct dg_trace_running {
    _Atomic uint64_t task, t0;
    _Atomic uint32_t codelet;
} dg_trace_running_t;

static struct {
    pthread_mutex_t lock;      /* the file, the buffer list, the state below */
    _Atomic uint64_t gen;      /* odd while a recording is open */
    const void *owner;
    int fd;
    dg_trace_buf_t *bufs;
    int32_t nthreads;
    int write_failed;
    uint64_t events;
    _Atomic uint64_t dropped;
    dg_trace_running_t *running;
    int nworkers;
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

_Atomic int dg_trace_active;

static _Thread_local dg_trace_buf_t *tl_buf;
static _Thread_local uint64_t tl_gen;

uint64_t dg_trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ writing */

static int write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Writes b's events as one block. rec.lock held. */
static void write_block(dg_trace_buf_t *b, uint64_t checksum)
{
    if (!b->used)
        return;
    dg_trf_block_t h = {DG_TRF_BLOCK_MAGIC, b->used, b->thread, b->th.worker, checksum};
    struct iovec iov[2] = {{&h, sizeof(h)}, {b->data, b->used}};
    if (rec.write_failed || write_all(rec.fd, iov, 2)) {
        if (!rec.write_failed)
            dg_log(DG_LOG_ERROR, "trace: writing the trace file failed (%s); later events are lost",
                   strerror(errno));
        rec.write_failed = 1;
        atomic_fetch_add_explicit(&rec.dropped, b->nevents, memory_order_relaxed);
    } else {
        rec.events += b->nevents;
    }
    b->used = 0;
    b->nevents = 0;
}

static void flush_buf(dg_trace_buf_t *b)
{
    /* The checksum is over this thread's own bytes: no lock needed for it. */
    uint64_t sum = dg_trf_checksum(b->data, b->used);
    pthread_mutex_lock(&rec.lock);
    write_block(b, sum);
    pthread_mutex_unlock(&rec.lock);
}

/* ------------------------------------------------------------ buffers */

static dg_trace_buf_t *new_buf(uint64_t gen)
{
    dg_trace_buf_t *b = dg_malloc(sizeof(*b));
    if (!b)
        return NULL;
    memset(b, 0, offsetof(dg_trace_buf_t, data));
    b->th.worker = -1;
    pthread_mutex_lock(&rec.lock);
    if (atomic_load_explicit(&rec.gen, memory_order_relaxed) != gen || !(gen & 1)) {
        pthread_mutex_unlock(&rec.lock); /* stopped meanwhile */
        free(b);
        return NULL;
    }
    b->thread = rec.nthreads++;
    b->next = rec.bufs;
    rec.bufs = b;
    pthread_mutex_unlock(&rec.lock);
    tl_buf = b;
    tl_gen = gen;
    return b;
}

static dg_trace_buf_t *my_buf(void)
{
    uint64_t gen = atomic_load_explicit(&rec.gen, memory_order_acquire);
    if (DG_LIKELY(tl_buf && tl_gen == gen))
        return tl_buf;
    if (!(gen & 1))
        return NULL;
    return new_buf(gen);
}

/* Room for an event in b (see dg_rec_event). */
static void *buf_event(dg_trace_buf_t *b, dg_trf_type_t type, uint32_t aux, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    if (DG_UNLIKELY(!b || size > UINT16_MAX)) {
        atomic_fetch_add_explicit(&rec.dropped, 1, memory_order_relaxed);
        return NULL;
    }
    if (b->used + size > DG_TRACE_BUF_BYTES)
        flush_buf(b);
    dg_trf_ev_t *e = (dg_trf_ev_t *)(b->data + b->used);
    memset(e, 0, size);
    e->type = (uint16_t)type;
    e->size = (uint16_t)size;
    e->aux = aux;
    b->used += (uint32_t)size;
    b->nevents++;
    return e;
}

void *dg_rec_event(dg_trf_type_t type, uint32_t aux, size_t size)
{
    return buf_event(my_buf(), type, aux, size);
}

/* At the stop, a worker that was idle when it exited: its span ends now.
 * Its thread is gone, so the stopping thread may write to its buffer (its
 * own buffer, tl_buf, has no idle span: it is not a worker). */
static void close_idle_spans(uint64_t now)
{
    pthread_mutex_lock(&rec.lock);
    dg_trace_buf_t *list = rec.bufs;
    pthread_mutex_unlock(&rec.lock);
    for (dg_trace_buf_t *b = list; b; b = b->next) {
        if (!b->th.idle_since || b == tl_buf)
            continue;
        dg_trf_span_t *e = buf_event(b, DG_TRE_IDLE, (uint32_t)b->th.worker, sizeof(*e));
        if (e) {
            e->t0 = b->th.idle_since;
            e->t1 = now;
        }
        b->th.idle_since = 0;
    }
}

dg_trace_thread_t *dg_rec_thread(void)
{
    dg_trace_buf_t *b = my_buf();
    return b ? &b->th : NULL;
}

void dg_rec_flush_mine(void)
{
    dg_trace_buf_t *b = my_buf();
    if (b)
        flush_buf(b);
}

/* ------------------------------------------------------------ lifecycle */

dagger_status_t dg_rec_open(const char *path, const dg_trf_header_t *hdr, const void *owner,
                            int nworkers)
{
    pthread_mutex_lock(&rec.lock);
    if (atomic_load(&rec.gen) & 1) {
        pthread_mutex_unlock(&rec.lock);
        return dg_error(DAGGER_ERR_STATE, "DAGGER_TRACE: another runtime of this process is "
                        "being traced; one runtime at a time records");
    }
    dagger_status_t st = DAGGER_OK;
    rec.running = dg_calloc((size_t)(nworkers > 0 ? nworkers : 1), sizeof(*rec.running));
    rec.fd = rec.running ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    if (!rec.running)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "DAGGER_TRACE: out of memory");
    else if (rec.fd < 0)
        st = dg_error(DAGGER_ERR_CONFIG, "DAGGER_TRACE: cannot create %s: %s; point DAGGER_TRACE "
                      "at a writable directory", path, strerror(errno));
    else {
        struct iovec iov = {(void *)hdr, sizeof(*hdr)};
        if (write_all(rec.fd, &iov, 1))
            st = dg_error(DAGGER_ERR_CONFIG, "DAGGER_TRACE: cannot write %s: %s", path,
                          strerror(errno));
    }
    if (st != DAGGER_OK) {
        if (rec.fd >= 0)
            close(rec.fd);
        rec.fd = -1;
        free(rec.running);
        rec.running = NULL;
    } else {
        rec.owner = owner;
        rec.nworkers = nworkers;
        rec.nthreads = 0;
        rec.events = 0;
        rec.write_failed = 0;
        atomic_store(&rec.dropped, 0);
        atomic_fetch_add(&rec.gen, 1); /* odd: open */
    }
    pthread_mutex_unlock(&rec.lock);
    return st;
}

void dg_rec_enable(void)
{
    atomic_store_explicit(&dg_trace_active, 1, memory_order_release);
}

int dg_rec_busy(const void *owner)
{
    pthread_mutex_lock(&rec.lock);
    int busy = (atomic_load(&rec.gen) & 1) && (!owner || rec.owner == owner);
    pthread_mutex_unlock(&rec.lock);
    return busy;
}

void dg_rec_close(void)
{
    atomic_store(&dg_trace_active, 0);
    dg_trace_buf_t *mine = my_buf();
    close_idle_spans(dg_trace_now());
    /* The end record is the last event of this thread's block, written last. */
    dg_trf_end_t *e = buf_event(mine, DG_TRE_END, 0, sizeof(*e));
    pthread_mutex_lock(&rec.lock);
    if (!(atomic_load(&rec.gen) & 1)) {
        pthread_mutex_unlock(&rec.lock);
        return;
    }
    for (dg_trace_buf_t *b = rec.bufs; b; b = b->next)
        if (b != mine)
            write_block(b, dg_trf_checksum(b->data, b->used));
    if (mine) {
        if (e) {
            e->t = dg_trace_now();
            e->events = rec.events + mine->nevents - 1;
            e->dropped = atomic_load(&rec.dropped);
        }
        write_block(mine, dg_trf_checksum(mine->data, mine->used));
    }
    for (dg_trace_buf_t *b = rec.bufs, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    rec.bufs = NULL;
    if (rec.fd >= 0 && close(rec.fd) != 0)
        dg_log(DG_LOG_ERROR, "trace: closing the trace file failed: %s", strerror(errno));
    rec.fd = -1;
    free(rec.running);
    rec.running = NULL;
    rec.nworkers = 0;
    rec.owner = NULL;
    atomic_fetch_add(&rec.gen, 1); /* even: closed; every thread's buffer is stale */
    pthread_mutex_unlock(&rec.lock);
}

/* ------------------------------------------------------------ running tasks */

void dg_rec_running_set(int worker, uint64_t task, uint32_t codelet, uint64_t t0)
{
    if (worker < 0 || worker >= rec.nworkers)
        return;
    dg_trace_running_t *r = &rec.running[worker];
    atomic_store_explicit(&r->codelet, codelet, memory_order_relaxed);
    atomic_store_explicit(&r->t0, t0, memory_order_relaxed);
    atomic_store_explicit(&r->task, task, memory_order_release);
}

int dg_rec_running_get(int worker, uint64_t *task, uint32_t *codelet, uint64_t *t0)
{
    if (worker < 0 || worker >= rec.nworkers)
        return 0;
    dg_trace_running_t *r = &rec.running[worker];
    *task = atomic_load_explicit(&r->task, memory_order_acquire);
    *codelet = atomic_load_explicit(&r->codelet, memory_order_relaxed);
    *t0 = atomic_load_explicit(&r->t0, memory_order_relaxed);
    return *task != 0;
}

int dg_rec_nworkers(void)
{
    return rec.nworkers;
}
