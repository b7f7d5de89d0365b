/* Reading rank files: the header, the blocks, and every event in them, with
 * a precise error (file and byte offset) for anything that does not fit the
 * format. Events are handed to build.c's model as they are read. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

int tr_fail(tr_trace_t *tr, const char *path, long long offset, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (offset >= 0)
        snprintf(tr->error, sizeof(tr->error), "%s: offset %lld: %s", path, offset, msg);
    else
        snprintf(tr->error, sizeof(tr->error), "%s: %s", path, msg);
    return -1;
}

int tr_read_file(tr_trace_t *tr, const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tr_fail(tr, path, -1, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = tr_alloc(cap);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        cap *= 2;
        buf = tr_realloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return tr_fail(tr, path, (long long)n, "read error");
    }
    buf[n] = '\0'; /* the loop ends with n < cap */
    *data = buf;
    *size = n;
    return 0;
}

static int check_header(tr_trace_t *tr, int rank, const char *path, const unsigned char *data,
                        size_t size)
{
    dg_trf_header_t h;
    if (size < sizeof(h))
        return tr_fail(tr, path, (long long)size, "the file ends inside its header (%zu of %zu "
                       "bytes): it is truncated", size, sizeof(h));
    memcpy(&h, data, sizeof(h));
    if (memcmp(h.magic, DG_TRF_MAGIC, sizeof(DG_TRF_MAGIC)) != 0)
        return tr_fail(tr, path, 0, "not a Dagger-C trace file (bad magic)");
    if (h.version != DG_TRF_VERSION)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, version),
                       "trace format version %u; this dagger-trace reads version %u", h.version,
                       DG_TRF_VERSION);
    if (h.byte_order != DG_TRF_BYTE_ORDER)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, byte_order),
                       "byte order mark %08x: written on a machine of another byte order, or "
                       "corrupt", h.byte_order);
    if (h.header_bytes < sizeof(h) || h.header_bytes > size)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, header_bytes),
                       "header length %u is impossible (file of %zu bytes): corrupt or truncated",
                       h.header_bytes, size);
    if (h.nworkers > TR_MAX_WORKERS || h.nspaces > TR_MAX_SPACES)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, nworkers),
                       "%u workers and %u memory spaces; at most %d and %d: corrupt", h.nworkers,
                       h.nspaces, TR_MAX_WORKERS, TR_MAX_SPACES);
    if (h.start_ns > TR_MAX_TIME_NS || h.clock_offset_ns > (int64_t)TR_MAX_TIME_NS ||
        h.clock_offset_ns < -(int64_t)TR_MAX_TIME_NS)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, clock_offset_ns),
                       "start time %llu ns or clock offset %lld ns is more than %llu ns: corrupt",
                       (unsigned long long)h.start_ns, (long long)h.clock_offset_ns,
                       (unsigned long long)TR_MAX_TIME_NS);
    if (h.rank != rank)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, rank),
                       "the header says rank %d, the file name says rank %d", h.rank, rank);
    if (h.nranks != tr->nranks)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, nranks),
                       "the header says %d ranks, %s says %d: files of different runs in one "
                       "directory", h.nranks, DG_TRF_META_NAME, tr->nranks);
    if (h.job_id != tr->job_id)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, job_id),
                       "job id %016llx differs from %s (%016llx): files of different runs in "
                       "one directory", (unsigned long long)h.job_id, DG_TRF_META_NAME,
                       (unsigned long long)tr->job_id);
    const tr_rank_t *rk = &tr->ranks[rank];
    if (h.clock_offset_ns != rk->meta_offset || h.nworkers != rk->meta_workers)
        return tr_fail(tr, path, (long long)offsetof(dg_trf_header_t, nworkers),
                       "%u workers and clock offset %lld ns, but %s says %u and %lld: files of "
                       "different runs in one directory", h.nworkers, (long long)h.clock_offset_ns,
                       DG_TRF_META_NAME, rk->meta_workers, (long long)rk->meta_offset);
    tr->ranks[rank].hdr = h;
    return 0;
}

/* ------------------------------------------------------------ events */

typedef struct tr_reader {
    tr_trace_t *tr;
    tr_rank_t *rk;
    int rank;
    const char *path;
    int64_t shift;          /* local clock -> job clock from origin */
    tr_hang_t *hang;        /* the dump being read */
    uint64_t bad_time;      /* an event time past TR_MAX_TIME_NS, or 0 */
    uint64_t max_task;      /* task ids above this cannot be in this file */
    uint64_t bad_task;      /* an event's impossible task id, or 0 */
} tr_reader_t;

static int64_t job_time(tr_reader_t *rd, uint64_t local)
{
    if (local > TR_MAX_TIME_NS) {
        rd->bad_time = local;
        local = 0;
    }
    int64_t t = (int64_t)local + rd->shift;
    if (t > rd->rk->last)
        rd->rk->last = t;
    return t;
}

/* The model's slot of a task named by an event, or NULL (and bad_task) for
 * an id this file cannot hold: the task table is dense. */
static tr_task_t *task_slot(tr_reader_t *rd, uint64_t id)
{
    if (id > rd->max_task) {
        rd->bad_task = id;
        return NULL;
    }
    return tr_task_slot(rd->tr, id);
}

static void on_task(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    const dg_trf_task_t *ev = (const void *)e;
    tr_task_t *t = task_slot(rd, ev->task);
    if (!t)
        return;
    t->ran = 1;
    t->worker = (int32_t)e->aux;
    t->codelet = ev->codelet;
    t->t0 = job_time(rd, ev->t0);
    t->t1 = job_time(rd, ev->t1);
    t->failed = ev->failed != 0;
    if (!t->planned)
        t->rank = rd->rank;
}

static void on_plan(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    const dg_trf_plan_t *ev = (const void *)e;
    rd->rk->plan_ns += (double)ev->t1 - (double)ev->t0;
    rd->rk->planned++;
    if (ev->task > rd->rk->last_planned)
        rd->rk->last_planned = ev->task;
    int64_t t1 = job_time(rd, ev->t1);
    tr_task_t *t = task_slot(rd, ev->task);
    if (!t)
        return;
    if (ev->rank == rd->rank) {
        t->plan_t0 = job_time(rd, ev->t0);
        t->planned_at = t1;
    }
    if (t->planned)
        return; /* every rank plans every task: the first record serves */
    t->planned = 1;
    t->region = ev->region;
    t->codelet = ev->codelet;
    t->rank = ev->rank;
    t->proc = ev->proc;
    t->ndeps = e->aux;
    t->deps_at = rd->tr->deps.n;
    const uint64_t *deps = (const uint64_t *)(ev + 1);
    for (uint32_t i = 0; i < e->aux; i++)
        *(uint64_t *)tr_vec_push(&rd->tr->deps) = deps[i];
}

static void on_xfer(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    const dg_trf_xfer_t *ev = (const void *)e;
    tr_xfer_t *x = tr_xfer_slot(rd->tr, ev->tag);
    int64_t t = job_time(rd, ev->t);
    int send = e->aux == DG_TRX_PLANNED ? ev->is_send != 0
                                        : e->aux == DG_TRX_SEND_START || e->aux == DG_TRX_SEND_DONE;
    if (e->aux != DG_TRX_RECV_ARRIVE) {
        x->bytes = ev->bytes;
        x->chunk = ev->chunk;
    }
    if (send) {
        x->src = rd->rank;
        x->dst = ev->peer;
        x->send_seq = ev->seq;
    } else {
        x->dst = rd->rank;
        x->src = ev->peer;
        if (ev->seq)
            x->recv_seq = ev->seq;
    }
    switch (e->aux) {
    case DG_TRX_PLANNED: *(send ? &x->planned_send : &x->planned_recv) = t; break;
    case DG_TRX_SEND_START: x->send_t0 = t; break;
    case DG_TRX_SEND_DONE: x->send_t1 = t; break;
    case DG_TRX_RECV_POST: x->post = t; break;
    case DG_TRX_RECV_ARRIVE: x->arrive = t; break;
    case DG_TRX_RECV_DONE: x->recv_t1 = t; break;
    default: break;
    }
}

static tr_span_t *push_span(tr_reader_t *rd, tr_vec_t *v, uint64_t t0, uint64_t t1, uint32_t kind)
{
    tr_span_t *s = tr_vec_push(v);
    s->t0 = job_time(rd, t0);
    s->t1 = job_time(rd, t1);
    s->kind = kind;
    return s;
}

static void on_hang(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    const dg_trf_hang_t *ev = (const void *)e;
    int64_t t = job_time(rd, ev->t);
    if (e->aux == DG_TRH_BEGIN) {
        tr_hang_t *h = rd->hang = tr_vec_push(&rd->rk->hangs);
        h->t = t;
        h->retired = ev->seq;
        h->emitted = ev->tag;
        size_t len = e->size - sizeof(*ev);
        memcpy(h->why, ev + 1, len < sizeof(h->why) ? len : sizeof(h->why) - 1);
        tr_vec_init(&h->ops, sizeof(tr_hang_op_t));
        tr_vec_init(&h->edges, sizeof(tr_hang_edge_t));
        tr_vec_init(&h->running, sizeof(tr_hang_op_t));
        tr_vec_init(&h->recv_wait, sizeof(tr_hang_op_t));
        tr_vec_init(&h->early, sizeof(tr_hang_op_t));
        return;
    }
    tr_hang_t *h = rd->hang;
    if (!h)
        return; /* a part of a dump whose beginning is not in the file */
    tr_vec_t *into = NULL;
    switch (e->aux) {
    case DG_TRH_END: h->complete = 1; rd->hang = NULL; return;
    case DG_TRH_WAITER: {
        tr_hang_edge_t *ed = tr_vec_push(&h->edges);
        ed->waiter = ev->seq;
        ed->op = ev->task;
        return;
    }
    case DG_TRH_OP: into = &h->ops; break;
    case DG_TRH_RUNNING: into = &h->running; break;
    case DG_TRH_RECV_WAIT: into = &h->recv_wait; break;
    case DG_TRH_EARLY: into = &h->early; break;
    default: return;
    }
    tr_hang_op_t *o = tr_vec_push(into);
    *o = (tr_hang_op_t){ev->seq, ev->tag, ev->chunk, ev->bytes, ev->task,
                        e->aux == DG_TRH_RUNNING ? job_time(rd, ev->t0) : t,
                        ev->peer, ev->pending, ev->opkind, ev->codelet};
}

static void on_codelet(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    const dg_trf_name_t *ev = (const void *)e;
    uint32_t idx;
    if (tr_map_get(&rd->tr->codelet_by_id, e->aux, &idx))
        return;
    tr_codelet_t *c = tr_vec_push(&rd->tr->codelets);
    c->id = e->aux;
    memcpy(c->name, ev->name, sizeof(c->name));
    c->name[sizeof(c->name) - 1] = '\0';
    tr_map_put(&rd->tr->codelet_by_id, e->aux, (uint32_t)(rd->tr->codelets.n - 1));
}

static void on_msg(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    const dg_trf_msg_t *ev = (const void *)e;
    tr_msg_t *m = tr_vec_push(&rd->rk->msgs);
    *m = (tr_msg_t){job_time(rd, ev->t), e->aux, ev->actor, ev->from_rank, ev->from_id};
}

/* An actor's or a message type's name (the first one recorded counts). */
static void on_name(tr_vec_t *v, const dg_trf_ev_t *e)
{
    const dg_trf_name_t *ev = (const void *)e;
    for (size_t i = 0; i < v->n; i++)
        if (TR_AT(v, tr_name_t, i)->id == e->aux)
            return;
    tr_name_t *n = tr_vec_push(v);
    n->id = e->aux;
    memcpy(n->name, ev->name, sizeof(n->name));
    n->name[sizeof(n->name) - 1] = '\0';
}

/* Events that become per-rank spans: idle, copies, phases, checks. */
static void on_span(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    tr_rank_t *rk = rd->rk;
    switch (e->type) {
    case DG_TRE_IDLE: {
        const dg_trf_span_t *ev = (const void *)e;
        push_span(rd, &rk->idle, ev->t0, ev->t1, e->aux);
        break;
    }
    case DG_TRE_COPY: {
        const dg_trf_copy_t *ev = (const void *)e;
        push_span(rd, &rk->copies, ev->t0, ev->t1, e->aux)->a = ev->bytes;
        break;
    }
    case DG_TRE_PHASE: {
        const dg_trf_phase_ev_t *ev = (const void *)e;
        tr_span_t *s = push_span(rd, &rk->phases, ev->t0, ev->t1, e->aux);
        s->a = ev->region;
        s->status = ev->status;
        break;
    }
    default: {
        const dg_trf_check_t *ev = (const void *)e;
        tr_span_t *s = push_span(rd, &rk->checks, ev->t0, ev->t1, e->aux);
        s->a = ev->task;
        s->b = ev->hash;
        s->status = ev->status;
        break;
    }
    }
}

static void on_counter(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    tr_rank_t *rk = rd->rk;
    if (e->type == DG_TRE_MEM) {
        const dg_trf_mem_t *ev = (const void *)e;
        tr_mem_t *m = tr_vec_push(&rk->mem);
        *m = (tr_mem_t){job_time(rd, ev->t),
                        (int64_t)(e->aux == DG_TRM_ALLOC ? ev->bytes : 0 - ev->bytes),
                        ev->space, (int)ev->home, ev->chunk};
    } else {
        const dg_trf_count_t *ev = (const void *)e;
        tr_count_t *c = tr_vec_push(&rk->actors);
        *c = (tr_count_t){job_time(rd, ev->t), (int32_t)e->aux, ev->count};
    }
}

static void dispatch(tr_reader_t *rd, const dg_trf_ev_t *e)
{
    switch (e->type) {
    case DG_TRE_TASK: on_task(rd, e); break;
    case DG_TRE_PLAN: on_plan(rd, e); break;
    case DG_TRE_XFER: on_xfer(rd, e); break;
    case DG_TRE_HANG: on_hang(rd, e); break;
    case DG_TRE_CODELET: on_codelet(rd, e); break;
    case DG_TRE_MSG: on_msg(rd, e); break;
    case DG_TRE_ACTOR_NAME: on_name(&rd->rk->actor_names, e); break;
    case DG_TRE_TYPE_NAME: on_name(&rd->tr->type_names, e); break;
    case DG_TRE_IDLE:
    case DG_TRE_COPY:
    case DG_TRE_PHASE:
    case DG_TRE_CHECK: on_span(rd, e); break;
    case DG_TRE_MEM:
    case DG_TRE_ACTOR: on_counter(rd, e); break;
    case DG_TRE_END: {
        const dg_trf_end_t *ev = (const void *)e;
        rd->rk->complete = 1;
        rd->rk->dropped = ev->dropped;
        job_time(rd, ev->t);
        break;
    }
    default: break; /* a later version's event: skipped */
    }
}

/* The smallest size each known event type can have. */
static size_t min_size(uint16_t type)
{
    switch (type) {
    case DG_TRE_TASK: return sizeof(dg_trf_task_t);
    case DG_TRE_PLAN: return sizeof(dg_trf_plan_t);
    case DG_TRE_XFER: return sizeof(dg_trf_xfer_t);
    case DG_TRE_MEM: return sizeof(dg_trf_mem_t);
    case DG_TRE_PHASE: return sizeof(dg_trf_phase_ev_t);
    case DG_TRE_IDLE: return sizeof(dg_trf_span_t);
    case DG_TRE_ACTOR: return sizeof(dg_trf_count_t);
    case DG_TRE_CHECK: return sizeof(dg_trf_check_t);
    case DG_TRE_HANG: return sizeof(dg_trf_hang_t);
    case DG_TRE_CODELET: return sizeof(dg_trf_name_t);
    case DG_TRE_COPY: return sizeof(dg_trf_copy_t);
    case DG_TRE_MSG: return sizeof(dg_trf_msg_t);
    case DG_TRE_ACTOR_NAME:
    case DG_TRE_TYPE_NAME: return sizeof(dg_trf_name_t);
    case DG_TRE_END: return sizeof(dg_trf_end_t);
    default: return sizeof(dg_trf_ev_t);
    }
}

static int read_events(tr_reader_t *rd, const unsigned char *p, size_t off, size_t len)
{
    for (size_t at = 0; at < len;) {
        dg_trf_ev_t e;
        long long where = (long long)(off + at);
        if (len - at < sizeof(e))
            return tr_fail(rd->tr, rd->path, where, "a block ends inside an event header (corrupt)");
        memcpy(&e, p + at, sizeof(e));
        if (e.size < sizeof(e) || e.size % 8 || e.size > len - at)
            return tr_fail(rd->tr, rd->path, where, "an event of type %u claims %u bytes, %zu are "
                           "left in its block (corrupt)", e.type, e.size, len - at);
        size_t need = min_size(e.type);
        if (e.type == DG_TRE_PLAN)
            need += (size_t)e.aux * sizeof(uint64_t);
        if (e.size < need)
            return tr_fail(rd->tr, rd->path, where, "an event of type %u is %u bytes, expected at "
                           "least %zu (corrupt)", e.type, e.size, need);
        /* Events are 8-byte aligned within the block copy. */
        dispatch(rd, (const dg_trf_ev_t *)(p + at));
        if (rd->bad_time)
            return tr_fail(rd->tr, rd->path, where, "an event of type %u has the time %llu ns, "
                           "more than %llu (corrupt)", e.type, (unsigned long long)rd->bad_time,
                           (unsigned long long)TR_MAX_TIME_NS);
        if (rd->bad_task)
            return tr_fail(rd->tr, rd->path, where, "an event of type %u names task %llu; a "
                           "file of %zu bytes holds at most %llu tasks (corrupt)", e.type,
                           (unsigned long long)rd->bad_task, rd->rk->raw_size,
                           (unsigned long long)rd->max_task);
        rd->rk->events++;
        at += e.size;
    }
    return 0;
}

static int read_blocks(tr_reader_t *rd, unsigned char *data, size_t size)
{
    unsigned char *events = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t off = rd->rk->hdr.header_bytes; off < size && !rc;) {
        dg_trf_block_t b;
        if (size - off < sizeof(b)) {
            rc = tr_fail(rd->tr, rd->path, (long long)off, "the file ends inside a block header "
                         "(%zu of %zu bytes): it is truncated", size - off, sizeof(b));
            break;
        }
        memcpy(&b, data + off, sizeof(b));
        if (b.magic != DG_TRF_BLOCK_MAGIC)
            rc = tr_fail(rd->tr, rd->path, (long long)off, "no block marker here (found %08x): "
                         "the file is corrupt", b.magic);
        else if (!b.bytes || b.bytes % 8)
            rc = tr_fail(rd->tr, rd->path, (long long)off, "a block of %u bytes (must be a "
                         "non-zero multiple of 8): the file is corrupt", b.bytes);
        else if (b.bytes > size - off - sizeof(b))
            rc = tr_fail(rd->tr, rd->path, (long long)off, "a block of %u bytes runs past the "
                         "end of the file (%zu bytes): it is truncated", b.bytes, size);
        if (rc)
            break;
        if (b.bytes > cap) {
            cap = b.bytes;
            free(events);
            events = tr_alloc(cap);
        }
        memcpy(events, data + off + sizeof(b), b.bytes); /* aligned for the event structs */
        if (dg_trf_checksum(events, b.bytes) != b.checksum)
            rc = tr_fail(rd->tr, rd->path, (long long)off, "the checksum of the block of %u "
                         "bytes does not match its contents: the file is corrupt", b.bytes);
        else
            rc = read_events(rd, events, off + sizeof(b), b.bytes);
        off += sizeof(b) + b.bytes;
    }
    free(events);
    return rc;
}

int tr_read_rank(tr_trace_t *tr, int rank, const char *path)
{
    unsigned char *data;
    size_t size;
    if (tr_read_file(tr, path, &data, &size))
        return -1;
    return tr_take_rank(tr, rank, path, data, size);
}

int tr_take_rank(tr_trace_t *tr, int rank, const char *path, unsigned char *data, size_t size)
{
    tr_rank_t *rk = &tr->ranks[rank];
    rk->raw = data;
    rk->raw_size = size;
    return check_header(tr, rank, path, rk->raw, rk->raw_size);
}

int tr_parse_rank(tr_trace_t *tr, int rank)
{
    tr_rank_t *rk = &tr->ranks[rank];
    /* Every task of a job is planned in every rank's file, one event of
     * 8 bytes or more each: a larger id is damage (and would size the
     * dense task table by it). */
    tr_reader_t rd = {tr, rk, rank, rk->path, rk->hdr.clock_offset_ns - tr->origin, NULL, 0,
                      rk->raw_size / 8 + 1024, 0};
    rk->start = rk->last = job_time(&rd, rk->hdr.start_ns);
    int rc = read_blocks(&rd, rk->raw, rk->raw_size);
    free(rk->raw);
    rk->raw = NULL;
    return rc;
}
