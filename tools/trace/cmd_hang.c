/* dagger-trace hang: joins the hang dumps of all ranks into one wait graph
 * and names what the job waits for. Nodes are the unfinished ops of every
 * rank's last dump; an op waits for the ops of its rank it depends on (the
 * dump's edges), a posted receive for the sender's send of its tag, a
 * ready send (rendezvous) for the receiver's receive. A node that waits for
 * nothing recorded is a root: a running task, a message that never came
 * (and whether its sender ever planned it), a receive never planned. A
 * cycle in the graph is named as such. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

typedef struct hnode {
    int rank;
    const tr_hang_op_t *op;
    size_t out_at, nout;    /* its edges in hang_t.out */
    int color;              /* DFS: 0 new, 1 on the path, 2 done */
    int waiters;            /* nodes whose chain ends here (roots) */
} hnode_t;

typedef struct hang {
    const tr_trace_t *tr;
    FILE *f;
    const tr_hang_t **dump; /* per rank: the dump used, or NULL */
    tr_vec_t nodes;         /* hnode_t */
    tr_vec_t out;           /* size_t: node index */
    tr_map_t *by_seq;       /* per rank: seq + 1 -> node */
    tr_map_t *send_by_tag, *recv_by_tag; /* per rank: tag + 1 -> node */
} hang_t;

static hnode_t *node(hang_t *h, size_t i)
{
    return TR_AT(&h->nodes, hnode_t, i);
}

static const char *kind_name(uint32_t k)
{
    static const char *names[] = {"?", "launch", "send", "recv", "copy", "alloc", "free",
                                  "region end"};
    return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static void describe(hang_t *h, const hnode_t *n, char *buf, size_t len)
{
    const tr_hang_op_t *o = n->op;
    if (o->kind == DG_TRF_OP_SEND || o->kind == DG_TRF_OP_RECV)
        snprintf(buf, len, "rank %d %s tag %" PRIx64 ":%" PRIu64 " %s rank %d (op %" PRIu64 ")",
                 n->rank, kind_name(o->kind), o->tag >> 32, o->tag & 0xffffffffu,
                 o->kind == DG_TRF_OP_SEND ? "to" : "from", o->peer, o->seq);
    else if (o->kind == DG_TRF_OP_LAUNCH)
        snprintf(buf, len, "rank %d task %" PRIu64 " (%s, op %" PRIu64 ")", n->rank, o->task,
                 tr_codelet_name(h->tr, o->codelet), o->seq);
    else
        snprintf(buf, len, "rank %d %s (op %" PRIu64 ")", n->rank, kind_name(o->kind), o->seq);
}

/* ------------------------------------------------------------ the graph */

static const tr_hang_t *last_dump(const tr_rank_t *rk)
{
    const tr_hang_t *best = NULL;
    for (size_t i = 0; i < rk->hangs.n; i++) {
        const tr_hang_t *d = TR_AT(&rk->hangs, tr_hang_t, i);
        if (d->complete || !best)
            best = d;
    }
    return best;
}

static void add_nodes(hang_t *h)
{
    for (int r = 0; r < h->tr->nranks; r++) {
        tr_map_init(&h->by_seq[r]);
        tr_map_init(&h->send_by_tag[r]);
        tr_map_init(&h->recv_by_tag[r]);
        const tr_hang_t *d = h->dump[r] = last_dump(&h->tr->ranks[r]);
        for (size_t i = 0; d && i < d->ops.n; i++) {
            hnode_t *n = tr_vec_push(&h->nodes);
            n->rank = r;
            n->op = TR_AT(&d->ops, tr_hang_op_t, i);
            uint32_t idx = (uint32_t)(h->nodes.n - 1);
            tr_map_put(&h->by_seq[r], n->op->seq + 1, idx);
            if (n->op->kind == DG_TRF_OP_SEND)
                tr_map_put(&h->send_by_tag[r], n->op->tag + 1, idx);
            if (n->op->kind == DG_TRF_OP_RECV)
                tr_map_put(&h->recv_by_tag[r], n->op->tag + 1, idx);
        }
    }
}

/* The peer's op a transfer op waits for, when it has one. */
static int peer_op(hang_t *h, const hnode_t *n, uint32_t *to)
{
    const tr_hang_op_t *o = n->op;
    if (o->pending > 0 || (o->kind != DG_TRF_OP_SEND && o->kind != DG_TRF_OP_RECV) || o->peer < 0 ||
        o->peer >= h->tr->nranks)
        return 0;
    tr_map_t *m = o->kind == DG_TRF_OP_RECV ? &h->send_by_tag[o->peer] : &h->recv_by_tag[o->peer];
    return tr_map_get(m, o->tag + 1, to);
}

static void add_edges(hang_t *h)
{
    for (size_t i = 0; i < h->nodes.n; i++) {
        hnode_t *n = node(h, i);
        n->out_at = h->out.n;
        const tr_hang_t *d = h->dump[n->rank];
        for (size_t e = 0; e < d->edges.n; e++) {
            const tr_hang_edge_t *ed = TR_AT(&d->edges, tr_hang_edge_t, e);
            uint32_t to;
            if (ed->waiter == n->op->seq && tr_map_get(&h->by_seq[n->rank], ed->op + 1, &to))
                *(size_t *)tr_vec_push(&h->out) = to;
        }
        uint32_t to;
        if (peer_op(h, n, &to))
            *(size_t *)tr_vec_push(&h->out) = to;
        n->nout = h->out.n - n->out_at;
    }
}

/* ------------------------------------------------------------ roots */

static const tr_hang_op_t *running_task(const tr_hang_t *d, uint64_t task)
{
    for (size_t i = 0; d && i < d->running.n; i++)
        if (TR_AT(&d->running, tr_hang_op_t, i)->task == task)
            return TR_AT(&d->running, tr_hang_op_t, i);
    return NULL;
}

/* When rank r finished planning region (its copy-back planning), or TR_NONE:
 * after that, everything it would send or receive in the region is known. */
static int64_t region_planned(const tr_trace_t *tr, int r, uint64_t region)
{
    const tr_vec_t *ph = &tr->ranks[r].phases;
    for (size_t i = 0; i < ph->n; i++) {
        const tr_span_t *s = TR_AT(ph, tr_span_t, i);
        if (s->kind == DG_TRP_REGION_PLAN_END && s->a == region)
            return s->t1;
    }
    return TR_NONE;
}

/* Why a transfer whose peer shows no matching op is stuck. */
static void explain_transfer(hang_t *h, const hnode_t *n, FILE *f)
{
    const tr_hang_op_t *o = n->op;
    const tr_xfer_t *x = tr_xfer_find(h->tr, o->tag);
    int p = o->peer;
    const char *nodump = h->dump[p] ? "" : " (it recorded no hang dump: its trace may end early)";
    char a[32];
    int64_t planned = region_planned(h->tr, p, o->tag >> 32);
    if (o->kind == DG_TRF_OP_RECV) {
        if ((!x || x->planned_send == TR_NONE) && planned != TR_NONE)
            fprintf(f, "rank %d never planned a send of tag %" PRIx64 ":%" PRIu64 " to rank %d: it "
                    "finished planning region %" PRIu64 " at %s without it. The ranks' plans "
                    "differ: rerun with DAGGER_CHECK_UNIFORMITY=1 to find the first difference", p,
                    o->tag >> 32, o->tag & 0xffffffffu, n->rank, o->tag >> 32,
                    tr_fmt_time(a, (double)planned));
        else if (!x || x->planned_send == TR_NONE)
            fprintf(f, "rank %d never planned a send of tag %" PRIx64 ":%" PRIu64 " to rank %d%s; "
                    "it planned tasks up to %" PRIu64 ". The ranks' plans differ: rerun with "
                    "DAGGER_CHECK_UNIFORMITY=1 to find the first difference", p, o->tag >> 32,
                    o->tag & 0xffffffffu, n->rank, nodump, h->tr->ranks[p].last_planned);
        else if (x->send_t1 != TR_NONE)
            fprintf(f, "rank %d sent it at %s and the send completed, but it never arrived "
                    "(lost by the transport?)", p, tr_fmt_time(a, (double)x->send_t1));
        else if (x->send_t0 != TR_NONE)
            fprintf(f, "rank %d started sending it at %s; the send never completed%s", p,
                    tr_fmt_time(a, (double)x->send_t0), nodump);
        else
            fprintf(f, "rank %d planned the send (op %" PRIu64 ") but it never became ready%s", p,
                    x->send_seq, nodump);
    } else {
        if (!x || x->planned_recv == TR_NONE)
            fprintf(f, "rank %d never planned the receive of tag %" PRIx64 ":%" PRIu64 "%s%s. The "
                    "ranks' plans differ: rerun with DAGGER_CHECK_UNIFORMITY=1", p, o->tag >> 32,
                    o->tag & 0xffffffffu, planned != TR_NONE ? " (it finished planning the region "
                    "without it)" : "", planned != TR_NONE ? "" : nodump);
        else if (x->post == TR_NONE)
            fprintf(f, "rank %d planned the receive (op %" PRIu64 ") but never posted it%s", p,
                    x->recv_seq, nodump);
        else
            fprintf(f, "rank %d posted the receive at %s; the data is on its way or lost", p,
                    tr_fmt_time(a, (double)x->post));
    }
}

static void explain_root(hang_t *h, const hnode_t *n, FILE *f)
{
    const tr_hang_op_t *o = n->op;
    char d[160], a[32], b[32];
    describe(h, n, d, sizeof(d));
    fprintf(f, "%s: ", d);
    if (o->pending > 0) {
        fprintf(f, "waits for %d earlier ops that the dump does not show\n", o->pending);
        return;
    }
    if (o->kind == DG_TRF_OP_LAUNCH) {
        const tr_hang_op_t *run = running_task(h->dump[n->rank], o->task);
        if (run)
            fprintf(f, "running on worker %d for %s (since %s): a task that does not return "
                    "holds up everything after it\n", run->peer,
                    tr_fmt_time(a, (double)(h->dump[n->rank]->t - run->t0)),
                    tr_fmt_time(b, (double)run->t0));
        else
            fprintf(f, "ready but not started: no worker took it (all busy or blocked)\n");
    } else if (o->kind == DG_TRF_OP_SEND || o->kind == DG_TRF_OP_RECV) {
        explain_transfer(h, n, f);
        fputc('\n', f);
    } else {
        fprintf(f, "ready but not finished\n");
    }
}

/* ------------------------------------------------------------ walking */

/* Follows start's first wait to a root or a cycle, printing the chain when
 * print is set. Returns the root (or the node closing a cycle). */
static size_t follow(hang_t *h, size_t start, FILE *f, int print, int *cycle)
{
    size_t cur = start, steps = 0;
    tr_vec_t path;
    tr_vec_init(&path, sizeof(size_t));
    char d[160];
    *cycle = 0;
    for (;;) {
        hnode_t *n = node(h, cur);
        describe(h, n, d, sizeof(d));
        if (print)
            fprintf(f, "%s%s", steps ? "\n      -> " : "    ", d);
        if (n->color == 1) {
            *cycle = 1;
            break;
        }
        n->color = 1;
        *(size_t *)tr_vec_push(&path) = cur;
        if (!n->nout || ++steps > h->nodes.n)
            break;
        cur = *TR_AT(&h->out, size_t, n->out_at);
    }
    if (print)
        fputc('\n', f);
    for (size_t i = 0; i < path.n; i++)
        node(h, *TR_AT(&path, size_t, i))->color = 0;
    tr_vec_free(&path);
    return cur;
}

#define MAX_CHAINS 20

/* A cycle that no start reaches (every op in it is waited for). Each op
 * follows one wait, so remembering where each op leads (lead: 1 a root, 2
 * a cycle) keeps this linear. Prints the first one found; returns 1 then. */
static int cycle_nobody_reaches(hang_t *h, FILE *f)
{
    unsigned char *lead = tr_alloc(h->nodes.n + 1);
    tr_vec_t path;
    tr_vec_init(&path, sizeof(size_t));
    int found = 0;
    for (size_t i = 0; !found && i < h->nodes.n; i++) {
        size_t cur = i;
        path.n = 0;
        while (!lead[cur] && node(h, cur)->nout && node(h, cur)->color != 1) {
            node(h, cur)->color = 1;
            *(size_t *)tr_vec_push(&path) = cur;
            cur = *TR_AT(&h->out, size_t, node(h, cur)->out_at);
        }
        int new_cycle = node(h, cur)->color == 1;
        unsigned char to = new_cycle || lead[cur] == 2 ? 2 : 1;
        for (size_t k = 0; k < path.n; k++) {
            node(h, *TR_AT(&path, size_t, k))->color = 0;
            lead[*TR_AT(&path, size_t, k)] = to;
        }
        if (new_cycle) {
            int cycle;
            follow(h, cur, f, 1, &cycle);
            fprintf(f, "    WAIT CYCLE (no op outside it waits)\n");
            found = 1;
        }
    }
    free(lead);
    tr_vec_free(&path);
    return found;
}

/* Chains start at ops nothing else waits for (usually a region's end).
 * Returns 1 when a wait cycle was found. */
static int chains(hang_t *h, FILE *f)
{
    int *waited = tr_alloc((h->nodes.n + 1) * sizeof(int));
    for (size_t i = 0; i < h->out.n; i++)
        waited[*TR_AT(&h->out, size_t, i)] = 1;
    fprintf(f, "Wait chains (from ops nothing else waits for):\n");
    int any_cycle = 0;
    size_t shown = 0, total = 0;
    for (size_t i = 0; i < h->nodes.n; i++) {
        if (waited[i])
            continue;
        int cycle, print = shown < MAX_CHAINS;
        size_t end = follow(h, i, f, print, &cycle);
        shown += print;
        total++;
        if (cycle) {
            char d[160];
            describe(h, node(h, end), d, sizeof(d));
            fprintf(f, "    WAIT CYCLE: the chain comes back to %s\n", d);
            any_cycle = 1;
        } else {
            node(h, end)->waiters++;
        }
    }
    if (total > shown)
        fprintf(f, "    ... and %zu more chains\n", total - shown);
    if (!any_cycle)
        any_cycle = cycle_nobody_reaches(h, f);
    free(waited);
    return any_cycle;
}

static void roots(hang_t *h, FILE *f, int cycle)
{
    fprintf(f, "What the job waits for:\n");
    int any = 0;
    if (cycle) {
        fprintf(f, "  the wait cycle above: no op in it can finish before another op in it "
                "does (a planning or protocol bug; please report it with this trace)\n");
        any = 1;
    }
    for (size_t i = 0; i < h->nodes.n; i++) {
        hnode_t *n = node(h, i);
        if (n->nout || !n->waiters)
            continue;
        fprintf(f, "  [%d chain%s] ", n->waiters, n->waiters == 1 ? "" : "s");
        explain_root(h, n, f);
        any = 1;
    }
    if (!any)
        fprintf(f, "  nothing found: the dumps show no blocked op\n");
}

/* Where a rank without a dump was last seen: its last region phase. */
static void last_phase(const tr_trace_t *tr, int r, FILE *f)
{
    const tr_vec_t *ph = &tr->ranks[r].phases;
    const tr_span_t *last = NULL;
    for (size_t i = 0; i < ph->n; i++) {
        const tr_span_t *s = TR_AT(ph, tr_span_t, i);
        if (s->kind != DG_TRP_CLOCK_SYNC && (!last || s->t1 >= last->t1))
            last = s;
    }
    char a[32];
    if (tr->ranks[r].complete)
        fprintf(f, "it ended normally\n");
    else if (!last)
        fprintf(f, "its trace shows no region\n");
    else if (last->kind == DG_TRP_REGION_WAIT)
        fprintf(f, "it finished its ops of region %" PRIu64 " at %s and then waited for the other "
                "ranks in the region's status agreement\n", last->a, tr_fmt_time(a, (double)last->t1));
    else if (last->kind == DG_TRP_REGION_PLAN_END)
        fprintf(f, "it planned region %" PRIu64 " to its end at %s and then waited for its ops "
                "(with no DAGGER_HANG_TIMEOUT, or killed before it)\n", last->a,
                tr_fmt_time(a, (double)last->t1));
    else
        fprintf(f, "its last record is from %s, in region %" PRIu64 " (it was not stuck waiting "
                "for its ops)\n", tr_fmt_time(a, (double)last->t1), last->a);
}

static void dumps(hang_t *h, FILE *f)
{
    fprintf(f, "Hang dumps:\n");
    for (int r = 0; r < h->tr->nranks; r++) {
        const tr_hang_t *d = h->dump[r];
        char a[32];
        if (!d) {
            fprintf(f, "  rank %d: no hang dump; ", r);
            last_phase(h->tr, r, f);
            continue;
        }
        fprintf(f, "  rank %d: at %s (%s): %" PRIu64 " of %" PRIu64 " ops finished, %zu "
                "unfinished, %zu task%s running%s\n", r, tr_fmt_time(a, (double)d->t), d->why,
                d->retired, d->emitted, d->ops.n, d->running.n, d->running.n == 1 ? "" : "s",
                d->complete ? "" : ", the dump is cut short");
        for (size_t i = 0; i < d->early.n; i++) {
            const tr_hang_op_t *o = TR_AT(&d->early, tr_hang_op_t, i);
            fprintf(f, "    data of tag %" PRIx64 ":%" PRIu64 " came from rank %d before this "
                    "rank planned its receive\n", o->tag >> 32, o->tag & 0xffffffffu, o->peer);
        }
    }
}

int tr_cmd_hang(const tr_trace_t *tr, FILE *out)
{
    hang_t h = {tr, out, NULL, {0}, {0}, NULL, NULL, NULL};
    int n = tr->nranks;
    h.dump = tr_alloc((size_t)n * sizeof(*h.dump));
    h.by_seq = tr_alloc((size_t)n * sizeof(tr_map_t));
    h.send_by_tag = tr_alloc((size_t)n * sizeof(tr_map_t));
    h.recv_by_tag = tr_alloc((size_t)n * sizeof(tr_map_t));
    tr_vec_init(&h.nodes, sizeof(hnode_t));
    tr_vec_init(&h.out, sizeof(size_t));
    add_nodes(&h);
    add_edges(&h);
    dumps(&h, out);
    int rc = 0;
    if (!h.nodes.n) {
        fprintf(out, "No rank recorded a hang dump with unfinished ops: run with "
                "DAGGER_HANG_TIMEOUT=seconds (or send SIGUSR1 to the stuck ranks) while tracing.\n");
        rc = 1;
    } else {
        int cycle = chains(&h, out);
        roots(&h, out, cycle);
    }
    for (int r = 0; r < n; r++) {
        tr_map_free(&h.by_seq[r]);
        tr_map_free(&h.send_by_tag[r]);
        tr_map_free(&h.recv_by_tag[r]);
    }
    free(h.by_seq);
    free(h.send_by_tag);
    free(h.recv_by_tag);
    free(h.dump);
    tr_vec_free(&h.nodes);
    tr_vec_free(&h.out);
    return rc;
}
