/* kvstore: a sharded key-value store made of actors.
 *
 * Shard actors each own the keys that hash to them. A client actor runs a
 * workload of puts, gets and deletes against the shards with request/reply
 * (dagger_ask: the answers come back as messages), keeps its own model of
 * what the store must hold, and checks every answer against it. A periodic
 * timer prints progress and notices requests that never got an answer. The
 * main thread starts the workload with a request to the client and gets the
 * summary as the (deferred) reply.
 *
 *   kvstore [--ops N] [--shards N] [--seed N]
 *
 * Exit status 0 when every answer was right. See docs/actors.md. */
#include <dagger.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEY_MAX 24
#define VALUE_MAX 64
#define NKEYS 1000       /* the client draws keys from key-0 .. key-999 */
#define WINDOW 32        /* requests the client keeps in flight */
#define MAX_SHARDS 64
#define TICK_US 100000   /* progress report every 100 ms */
#define REQUEST_TIMEOUT_S 5.0

/* ------------------------------------------------------------ messages */

typedef struct { char key[KEY_MAX]; } kv_key_t;                      /* kv.get, kv.del */
typedef struct { char key[KEY_MAX]; uint32_t len; char value[VALUE_MAX]; } kv_put_t;
typedef struct { uint32_t existed; } kv_done_t;                      /* answers put, del */
typedef struct { uint32_t found, len; char value[VALUE_MAX]; } kv_value_t; /* answers get */
typedef struct { uint32_t ops, seed; } kv_run_t;
typedef struct { uint64_t ops, mismatches, timeouts, puts, gets, dels; double seconds; } kv_summary_t;

/* kv.put and kv.value carry only the used part of their value: BYTES types
 * whose size is the header plus len. */
#define PUT_SIZE(len) (offsetof(kv_put_t, value) + (len))
#define VALUE_SIZE(len) (offsetof(kv_value_t, value) + (len))

static dagger_msg_type_t KV_PUT, KV_GET, KV_DEL, KV_DONE, KV_VALUE, KV_RUN, KV_SUMMARY, KV_TICK;

static int register_types(dagger_runtime_t *rt)
{
    const struct { const char *name; dagger_msg_encoding_t enc; size_t size; dagger_msg_type_t *id; } t[] = {
        {"kv.put", DAGGER_MSG_BYTES, sizeof(kv_put_t), &KV_PUT},
        {"kv.get", DAGGER_MSG_FIXED, sizeof(kv_key_t), &KV_GET},
        {"kv.del", DAGGER_MSG_FIXED, sizeof(kv_key_t), &KV_DEL},
        {"kv.done", DAGGER_MSG_FIXED, sizeof(kv_done_t), &KV_DONE},
        {"kv.value", DAGGER_MSG_BYTES, sizeof(kv_value_t), &KV_VALUE},
        {"kv.run", DAGGER_MSG_FIXED, sizeof(kv_run_t), &KV_RUN},
        {"kv.summary", DAGGER_MSG_FIXED, sizeof(kv_summary_t), &KV_SUMMARY},
        {"kv.tick", DAGGER_MSG_FIXED, 0, &KV_TICK},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        dagger_msg_type_desc_t d = {t[i].name, t[i].enc, t[i].size};
        dagger_status_t st = dagger_msg_type_register(rt, &d, t[i].id);
        if (st != DAGGER_OK) {
            fprintf(stderr, "kvstore: %s: %s\n", dagger_strerror(st), dagger_error_detail());
            return -1;
        }
    }
    return 0;
}

static uint32_t hash_key(const char *key)
{
    uint32_t h = 2166136261u;
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 16777619u;
    return h;
}

/* --------------------------------------------------------------- a shard */

/* A shard is a small chained hash table. Only its own handlers touch it,
 * one message at a time, so it needs no lock. */
typedef struct entry {
    struct entry *next;
    char key[KEY_MAX];
    uint32_t len;
    char value[VALUE_MAX];
} entry_t;

typedef struct {
    entry_t *bucket[256];
} shard_t;

static entry_t **shard_find(shard_t *s, const char *key)
{
    entry_t **e = &s->bucket[hash_key(key) % 256];
    while (*e && strcmp((*e)->key, key))
        e = &(*e)->next;
    return e;
}

static dagger_status_t shard_put(dagger_ctx_t *ctx)
{
    shard_t *s = dagger_ctx_state(ctx);
    const kv_put_t *p = dagger_ctx_payload(ctx);
    if (dagger_ctx_size(ctx) < PUT_SIZE(0) || PUT_SIZE(p->len) != dagger_ctx_size(ctx))
        return DAGGER_ERR_INVALID_ARG; /* the requester learns it from its reply */
    entry_t **e = shard_find(s, p->key);
    kv_done_t done = {*e != NULL};
    if (!*e) {
        *e = calloc(1, sizeof(entry_t));
        if (!*e)
            return DAGGER_ERR_NO_MEMORY;
        memcpy((*e)->key, p->key, KEY_MAX);
    }
    (*e)->len = p->len;
    memcpy((*e)->value, p->value, p->len);
    return dagger_reply(ctx, KV_DONE, &done, sizeof(done));
}

static dagger_status_t shard_get(dagger_ctx_t *ctx)
{
    shard_t *s = dagger_ctx_state(ctx);
    const kv_key_t *k = dagger_ctx_payload(ctx);
    entry_t *e = *shard_find(s, k->key);
    kv_value_t v = {.found = e != NULL, .len = e ? e->len : 0};
    if (e)
        memcpy(v.value, e->value, e->len);
    return dagger_reply(ctx, KV_VALUE, &v, VALUE_SIZE(v.len));
}

static dagger_status_t shard_del(dagger_ctx_t *ctx)
{
    shard_t *s = dagger_ctx_state(ctx);
    const kv_key_t *k = dagger_ctx_payload(ctx);
    entry_t **e = shard_find(s, k->key), *gone = *e;
    kv_done_t done = {gone != NULL};
    if (gone) {
        *e = gone->next;
        free(gone);
    }
    return dagger_reply(ctx, KV_DONE, &done, sizeof(done));
}

/* Runs on the shard's thread once it stopped: the state is ours to free. */
static void shard_stop(dagger_ctx_t *ctx)
{
    shard_t *s = dagger_ctx_state(ctx);
    for (int b = 0; b < 256; b++)
        for (entry_t *e = s->bucket[b], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(s);
}

/* -------------------------------------------------------------- the client */

enum { OP_PUT, OP_GET, OP_DEL };

typedef struct {
    uint64_t corr;     /* the request's id; 0 = free slot */
    int op, key;
    int expect_found;  /* what the store must answer, decided when sent */
    char expect[VALUE_MAX];
    uint32_t expect_len;
    double sent_at;
} pending_t;

typedef struct {
    dagger_actor_addr_t shards[MAX_SHARDS];
    int nshards;
    /* The model: what the store holds if every request is applied in the
     * order the client sent it (one client, per-sender FIFO to each shard). */
    int present[NKEYS];
    uint32_t version[NKEYS];
    pending_t pending[WINDOW];
    int inflight;
    uint64_t sent, answered, target;
    unsigned rng;
    kv_summary_t sum;
    double started;
    dagger_reply_to_t boss; /* the main thread's kv.run request, answered at the end */
    dagger_timer_t ticker;
    int finished;
} client_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned next_rand(client_t *c)
{
    c->rng = c->rng * 1103515245u + 12345u;
    return c->rng >> 8;
}

static void value_of(int key, uint32_t version, char *out, uint32_t *len)
{
    *len = (uint32_t)snprintf(out, VALUE_MAX, "value-%d-v%" PRIu32, key, version);
}

/* Sends one random request and records the answer it must get. */
static dagger_status_t send_one(dagger_ctx_t *ctx, client_t *c, pending_t *p)
{
    int key = (int)(next_rand(c) % NKEYS), dice = (int)(next_rand(c) % 100);
    char name[KEY_MAX];
    snprintf(name, sizeof(name), "key-%d", key);
    dagger_actor_addr_t shard = c->shards[hash_key(name) % (uint32_t)c->nshards];
    *p = (pending_t){.key = key, .expect_found = c->present[key], .sent_at = now_s()};
    dagger_status_t st;
    if (dice < 35) { /* put: the model changes now, in sending order */
        kv_put_t put = {0};
        memcpy(put.key, name, sizeof(name));
        value_of(key, ++c->version[key], put.value, &put.len);
        p->op = OP_PUT;
        c->present[key] = 1;
        c->sum.puts++;
        st = dagger_ask(ctx, shard, KV_PUT, &put, PUT_SIZE(put.len), &p->corr);
    } else if (dice < 85) {
        kv_key_t get = {{0}};
        memcpy(get.key, name, sizeof(name));
        p->op = OP_GET;
        if (p->expect_found)
            value_of(key, c->version[key], p->expect, &p->expect_len);
        c->sum.gets++;
        st = dagger_ask(ctx, shard, KV_GET, &get, sizeof(get), &p->corr);
    } else {
        kv_key_t del = {{0}};
        memcpy(del.key, name, sizeof(name));
        p->op = OP_DEL;
        c->present[key] = 0;
        c->sum.dels++;
        st = dagger_ask(ctx, shard, KV_DEL, &del, sizeof(del), &p->corr);
    }
    if (st == DAGGER_OK) {
        c->inflight++;
        c->sent++;
    }
    return st;
}

/* Keeps WINDOW requests in flight until the workload is sent. */
static dagger_status_t fill_window(dagger_ctx_t *ctx, client_t *c)
{
    for (int i = 0; i < WINDOW && c->sent < c->target; i++) {
        if (c->pending[i].corr)
            continue;
        dagger_status_t st = send_one(ctx, c, &c->pending[i]);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

static dagger_status_t finish(dagger_ctx_t *ctx, client_t *c)
{
    c->finished = 1;
    c->sum.ops = c->answered;
    c->sum.seconds = now_s() - c->started;
    dagger_timer_cancel(dagger_ctx_runtime(ctx), c->ticker);
    return dagger_reply_later(dagger_ctx_runtime(ctx), c->boss, KV_SUMMARY, &c->sum, sizeof(c->sum));
}

static dagger_status_t client_run(dagger_ctx_t *ctx)
{
    client_t *c = dagger_ctx_state(ctx);
    const kv_run_t *run = dagger_ctx_payload(ctx);
    c->target = run->ops;
    c->rng = run->seed;
    c->started = now_s();
    c->boss = dagger_ctx_reply_to(ctx); /* answered when the workload is done */
    dagger_status_t st = dagger_timer_start(dagger_ctx_runtime(ctx), dagger_ctx_self(ctx), KV_TICK,
                                            NULL, 0, TICK_US, TICK_US, &c->ticker);
    return st != DAGGER_OK ? st : fill_window(ctx, c);
}

/* Every answer (kv.done or kv.value) lands here: match it to its request by
 * correlation id and compare it with the model. */
static dagger_status_t client_answer(dagger_ctx_t *ctx)
{
    client_t *c = dagger_ctx_state(ctx);
    pending_t *p = NULL;
    for (int i = 0; i < WINDOW && !p; i++)
        if (c->pending[i].corr == dagger_ctx_corr(ctx))
            p = &c->pending[i];
    if (!p || c->finished)
        return DAGGER_OK; /* answer to a request already written off as timed out */
    int right;
    if (dagger_ctx_type(ctx) == KV_VALUE) {
        const kv_value_t *v = dagger_ctx_payload(ctx);
        right = p->op == OP_GET && (int)v->found == p->expect_found &&
                (!v->found || (v->len == p->expect_len && !memcmp(v->value, p->expect, v->len)));
    } else {
        const kv_done_t *d = dagger_ctx_payload(ctx);
        right = p->op != OP_GET && (int)d->existed == p->expect_found;
    }
    if (!right && c->sum.mismatches++ < 5)
        fprintf(stderr, "kvstore: wrong answer for key-%d (op %d)\n", p->key, p->op);
    p->corr = 0;
    c->inflight--;
    if (++c->answered == c->target)
        return finish(ctx, c);
    return fill_window(ctx, c);
}

/* The timer: progress, and requests that waited too long. */
static dagger_status_t client_tick(dagger_ctx_t *ctx)
{
    client_t *c = dagger_ctx_state(ctx);
    double t = now_s();
    printf("kvstore: %" PRIu64 " of %" PRIu64 " answered, %d in flight\n", c->answered, c->target,
           c->inflight);
    for (int i = 0; i < WINDOW; i++)
        if (c->pending[i].corr && t - c->pending[i].sent_at > REQUEST_TIMEOUT_S)
            c->sum.timeouts++;
    if (c->sum.timeouts && !c->finished) {
        fprintf(stderr, "kvstore: %" PRIu64 " requests got no answer in %.0f s\n", c->sum.timeouts,
                REQUEST_TIMEOUT_S);
        return finish(ctx, c);
    }
    return DAGGER_OK;
}

/* ------------------------------------------------------------------- main */

static int fail(const char *what, dagger_status_t st)
{
    fprintf(stderr, "kvstore: %s: %s (%s)\n", what, dagger_strerror(st), dagger_error_detail());
    return 1;
}

int main(int argc, char **argv)
{
    kv_run_t run = {20000, 1};
    int nshards = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ops"))
            run.ops = (uint32_t)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--shards"))
            nshards = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            run.seed = (uint32_t)atoi(argv[i + 1]);
    }
    if (nshards < 1 || nshards > MAX_SHARDS || run.ops == 0) {
        fprintf(stderr, "usage: kvstore [--ops N>0] [--shards 1..%d] [--seed N]\n", MAX_SHARDS);
        return 2;
    }

    dagger_runtime_t *rt;
    dagger_status_t st = dagger_init(&argc, &argv, NULL, &rt);
    if (st != DAGGER_OK)
        return fail("dagger_init", st);
    if (register_types(rt))
        return 1;

    /* The shards: unpinned, so the runtime spreads them over its workers. */
    static client_t client; /* large: not on the stack */
    client.nshards = nshards;
    dagger_handler_t shard_handlers[] = {{KV_PUT, shard_put}, {KV_GET, shard_get}, {KV_DEL, shard_del}};
    for (int i = 0; i < nshards; i++) {
        shard_t *s = calloc(1, sizeof(*s));
        dagger_actor_desc_t d = {.name = "kv.shard", .state = s, .handlers = shard_handlers,
                                 .nhandlers = 3, .on_stop = shard_stop};
        if (!s || (st = dagger_actor_spawn(rt, &d, &client.shards[i])) != DAGGER_OK)
            return fail("spawning a shard", s ? st : DAGGER_ERR_NO_MEMORY);
    }
    dagger_handler_t client_handlers[] = {
        {KV_RUN, client_run}, {KV_DONE, client_answer}, {KV_VALUE, client_answer}, {KV_TICK, client_tick}};
    dagger_actor_desc_t cd = {.name = "kv.client", .state = &client, .handlers = client_handlers,
                              .nhandlers = 4};
    dagger_actor_addr_t client_addr;
    if ((st = dagger_actor_spawn(rt, &cd, &client_addr)) != DAGGER_OK)
        return fail("spawning the client", st);

    /* Start the workload and wait for its summary (the client's deferred reply). */
    kv_summary_t sum;
    dagger_reply_t reply = {.buf = &sum, .capacity = sizeof(sum)};
    st = dagger_request(rt, client_addr, KV_RUN, &run, sizeof(run), 120 * 1000000LL, &reply);
    if (st != DAGGER_OK)
        return fail("the workload", st);
    printf("kvstore: %" PRIu64 " requests (%" PRIu64 " puts, %" PRIu64 " gets, %" PRIu64
           " deletes) on %d shards in %.3f s: %.0f requests/s, %" PRIu64 " wrong answers, %" PRIu64
           " timeouts\n",
           sum.ops, sum.puts, sum.gets, sum.dels, nshards, sum.seconds, (double)sum.ops / sum.seconds,
           sum.mismatches, sum.timeouts);

    /* Shut down: stop and join every actor, then the runtime. */
    for (int i = 0; i < nshards; i++) {
        dagger_actor_stats_t s;
        if (dagger_actor_stop(rt, client.shards[i]) != DAGGER_OK ||
            dagger_actor_join(rt, client.shards[i], DAGGER_WAIT_FOREVER, &s) != DAGGER_OK)
            return fail("stopping a shard", DAGGER_ERR_STATE);
        printf("kvstore: shard %d handled %" PRIu64 " requests\n", i, s.handled);
    }
    dagger_actor_stop(rt, client_addr);
    dagger_actor_join(rt, client_addr, DAGGER_WAIT_FOREVER, NULL);
    if ((st = dagger_finalize(rt)) != DAGGER_OK)
        return fail("dagger_finalize", st);
    int ok = sum.mismatches == 0 && sum.timeouts == 0 && sum.ops == run.ops;
    printf("kvstore: %s\n", ok ? "every answer was right" : "FAILED");
    return ok ? 0 : 1;
}
