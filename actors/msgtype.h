/* Registry of message types: name -> id (dg_name_id), encoding and size.
 *
 * Lookups happen on every send and never lock: the table is open addressing
 * over pointers to immutable entries, published with release stores. Writers
 * (registration) serialise on a mutex; when the table grows, the old array is
 * kept until the registry is destroyed, so a reader still probing it is safe. */
#ifndef DG_ACT_MSGTYPE_H
#define DG_ACT_MSGTYPE_H

#include <dagger/actor.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define DG_MSGTYPE_NAME_MAX 127

typedef struct dg_msgtype {
    uint32_t id;
    dagger_msg_encoding_t encoding;
    size_t size;
    char name[DG_MSGTYPE_NAME_MAX + 1];
} dg_msgtype_t;

typedef struct dg_msgtype_table {
    size_t cap; /* power of two */
    struct dg_msgtype_table *retired; /* older, smaller tables still readable */
    _Atomic(const dg_msgtype_t *) slot[];
} dg_msgtype_table_t;

typedef struct dg_msgtypes {
    pthread_mutex_t lock;
    _Atomic(dg_msgtype_table_t *) table;
    size_t count;
} dg_msgtypes_t;

dagger_status_t dg_msgtypes_init(dg_msgtypes_t *reg);
void dg_msgtypes_cleanup(dg_msgtypes_t *reg);

/* Registers a type (idempotent for an identical description). Errors:
 * DAGGER_ERR_INVALID_ARG, DAGGER_ERR_TYPE_CONFLICT, DAGGER_ERR_NO_MEMORY. */
dagger_status_t dg_msgtypes_register(dg_msgtypes_t *reg, const dagger_msg_type_desc_t *desc,
                                     uint32_t *id);

/* The entry of a registered id, or NULL. Lock-free. */
const dg_msgtype_t *dg_msgtypes_get(dg_msgtypes_t *reg, uint32_t id);

/* Checks a payload size against a type; DAGGER_ERR_MSG_TYPE for an
 * unregistered id, DAGGER_ERR_MSG_SIZE for a size that does not fit. The
 * detail starts with `what` (e.g. "dagger_send"). */
dagger_status_t dg_msgtypes_check(dg_msgtypes_t *reg, uint32_t id, size_t size, const char *what);

/* The name of a type for diagnostics ("?" when unregistered). */
const char *dg_msgtypes_name(dg_msgtypes_t *reg, uint32_t id);

/* Calls fn for every registered type, under the registration lock (fn must
 * not register). */
void dg_msgtypes_each(dg_msgtypes_t *reg, void (*fn)(void *arg, uint32_t id, const char *name),
                      void *arg);

#endif
