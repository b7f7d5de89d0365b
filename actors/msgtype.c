/* Message type registry (see msgtype.h for the concurrency scheme). */
#include "actors/msgtype.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/hash.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"

#define DG_MSGTYPE_INITIAL_CAP 64

static dg_msgtype_table_t *table_new(size_t cap)
{
    dg_msgtype_table_t *t = dg_calloc(1, sizeof(*t) + cap * sizeof(t->slot[0]));
    if (t)
        t->cap = cap;
    return t;
}

/* Finds the slot of id in t: the slot holding it, or the empty slot where it
 * would go. Linear probing from the id's hash position. */
static size_t table_probe(dg_msgtype_table_t *t, uint32_t id)
{
    size_t mask = t->cap - 1;
    size_t i = (size_t)(id * 2654435761u) & mask;
    for (;;) {
        const dg_msgtype_t *e = atomic_load_explicit(&t->slot[i], memory_order_acquire);
        if (!e || e->id == id)
            return i;
        i = (i + 1) & mask;
    }
}

dagger_status_t dg_msgtypes_init(dg_msgtypes_t *reg)
{
    dg_msgtype_table_t *t = table_new(DG_MSGTYPE_INITIAL_CAP);
    if (!t)
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for the message type registry");
    pthread_mutex_init(&reg->lock, NULL);
    atomic_init(&reg->table, t);
    reg->count = 0;
    return DAGGER_OK;
}

void dg_msgtypes_cleanup(dg_msgtypes_t *reg)
{
    dg_msgtype_table_t *t = atomic_load(&reg->table);
    /* Entries live in the newest table; older tables share them. */
    for (size_t i = 0; i < t->cap; i++)
        free((void *)atomic_load_explicit(&t->slot[i], memory_order_relaxed));
    while (t) {
        dg_msgtype_table_t *older = t->retired;
        free(t);
        t = older;
    }
    pthread_mutex_destroy(&reg->lock);
}

const dg_msgtype_t *dg_msgtypes_get(dg_msgtypes_t *reg, uint32_t id)
{
    dg_msgtype_table_t *t = atomic_load_explicit(&reg->table, memory_order_acquire);
    return atomic_load_explicit(&t->slot[table_probe(t, id)], memory_order_acquire);
}

/* Doubles the table (caller holds the lock); readers of the old one go on. */
static int table_grow(dg_msgtypes_t *reg)
{
    dg_msgtype_table_t *old = atomic_load_explicit(&reg->table, memory_order_relaxed);
    dg_msgtype_table_t *t = table_new(old->cap * 2);
    if (!t)
        return -1;
    for (size_t i = 0; i < old->cap; i++) {
        const dg_msgtype_t *e = atomic_load_explicit(&old->slot[i], memory_order_relaxed);
        if (e)
            atomic_store_explicit(&t->slot[table_probe(t, e->id)], e, memory_order_relaxed);
    }
    t->retired = old;
    atomic_store_explicit(&reg->table, t, memory_order_release);
    return 0;
}

static const char *encoding_name(dagger_msg_encoding_t e)
{
    return e == DAGGER_MSG_FIXED ? "fixed" : "bytes";
}

static dagger_status_t check_desc(const dagger_msg_type_desc_t *desc)
{
    DG_CHECK_ARG(desc, "message type description is NULL");
    DG_CHECK_ARG(desc->name && desc->name[0], "message type name is NULL or empty");
    DG_CHECK_ARG(strlen(desc->name) <= DG_MSGTYPE_NAME_MAX,
                 "message type name '%.40s...' is longer than %d bytes", desc->name,
                 DG_MSGTYPE_NAME_MAX);
    DG_CHECK_ARG(desc->encoding == DAGGER_MSG_FIXED || desc->encoding == DAGGER_MSG_BYTES,
                 "message type '%s': encoding %d is neither DAGGER_MSG_FIXED nor DAGGER_MSG_BYTES",
                 desc->name, (int)desc->encoding);
    DG_CHECK_ARG(desc->size <= UINT32_MAX,
                 "message type '%s': size %zu is above the 4 GiB - 1 message limit", desc->name,
                 desc->size);
    return DAGGER_OK;
}

/* An existing entry with the same id: identical description or a conflict. */
static dagger_status_t same_id(const dg_msgtype_t *e, const dagger_msg_type_desc_t *desc)
{
    if (strcmp(e->name, desc->name))
        return dg_error(DAGGER_ERR_TYPE_CONFLICT,
                        "message types '%s' and '%s' hash to the same id 0x%08x; rename one",
                        e->name, desc->name, e->id);
    if (e->encoding != desc->encoding || e->size != desc->size)
        return dg_error(DAGGER_ERR_TYPE_CONFLICT,
                        "message type '%s' is registered as %s %zu bytes and now as %s %zu bytes",
                        e->name, encoding_name(e->encoding), e->size,
                        encoding_name(desc->encoding), desc->size);
    return DAGGER_OK;
}

dagger_status_t dg_msgtypes_register(dg_msgtypes_t *reg, const dagger_msg_type_desc_t *desc,
                                     uint32_t *id)
{
    dagger_status_t st = check_desc(desc);
    if (st != DAGGER_OK)
        return st;
    uint32_t tid = dg_name_id(desc->name);
    pthread_mutex_lock(&reg->lock);
    const dg_msgtype_t *e = dg_msgtypes_get(reg, tid);
    if (e) {
        st = same_id(e, desc);
        goto out;
    }
    dg_msgtype_table_t *t = atomic_load_explicit(&reg->table, memory_order_relaxed);
    dg_msgtype_t *n = dg_calloc(1, sizeof(*n));
    if (!n || ((reg->count + 1) * 2 > t->cap && table_grow(reg))) {
        free(n);
        st = dg_error(DAGGER_ERR_NO_MEMORY, "no memory to register message type '%s'", desc->name);
        goto out;
    }
    n->id = tid;
    n->encoding = desc->encoding;
    n->size = desc->size;
    strcpy(n->name, desc->name);
    t = atomic_load_explicit(&reg->table, memory_order_relaxed);
    atomic_store_explicit(&t->slot[table_probe(t, tid)], n, memory_order_release);
    reg->count++;
    if (DG_TRACE_ON())
        dg_trace_named(DG_TRE_TYPE_NAME, tid, n->name);
out:
    pthread_mutex_unlock(&reg->lock);
    if (st == DAGGER_OK)
        *id = tid;
    return st;
}

dagger_status_t dg_msgtypes_check(dg_msgtypes_t *reg, uint32_t id, size_t size, const char *what)
{
    const dg_msgtype_t *e = dg_msgtypes_get(reg, id);
    if (DG_UNLIKELY(!e))
        return dg_error(DAGGER_ERR_MSG_TYPE,
                        "%s: message type 0x%08x is not registered (dagger_msg_type_register)",
                        what, id);
    if (DG_LIKELY(e->encoding == DAGGER_MSG_FIXED ? size == e->size : size <= e->size))
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_MSG_SIZE, "%s: payload of %zu bytes for message type '%s' which %s %zu",
                    what, size, e->name, e->encoding == DAGGER_MSG_FIXED ? "expects" : "allows at most",
                    e->size);
}

const char *dg_msgtypes_name(dg_msgtypes_t *reg, uint32_t id)
{
    const dg_msgtype_t *e = dg_msgtypes_get(reg, id);
    return e ? e->name : "?";
}

void dg_msgtypes_each(dg_msgtypes_t *reg, void (*fn)(void *arg, uint32_t id, const char *name),
                      void *arg)
{
    pthread_mutex_lock(&reg->lock);
    dg_msgtype_table_t *t = atomic_load_explicit(&reg->table, memory_order_relaxed);
    for (size_t i = 0; i < t->cap; i++) {
        const dg_msgtype_t *e = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (e)
            fn(arg, e->id, e->name);
    }
    pthread_mutex_unlock(&reg->lock);
}
