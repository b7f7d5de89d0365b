/* The messages the executor sends to the processor and memory-space actors
 * (their handlers are the device kinds': devices/host/, devices/dev_*.c).
 * The executor defines them, so that it depends on no device kind: a kind
 * implements the handlers and registers them for these type ids (ex->msg,
 * registered by core/exec/msgs.c).
 *
 * Memory-space actors: one per memory space of the rank (host memory, each
 * device's memory). A memory-space actor owns its space's memory:
 * allocation, the pool of released blocks, copies into the space, and the
 * move_rewrap transfers to and from other ranks. The executor reaches it
 * only through the typed messages below (docs/design.md, "Message types").
 *
 * Messages inside a rank carry pointers (the op, the reply slot): they
 * never leave the process. The one message between ranks, dagger.mem.rewrap,
 * carries the move_rewrap header on the data channel; its children follow
 * in the same active message (eager) or by rendezvous. */
#ifndef DG_EXEC_MSGS_H
#define DG_EXEC_MSGS_H

#include <dagger/actor.h>
#include <stdatomic.h>
#include <stdint.h>

struct dg_exec;
struct dg_xop;

/* Reply slot of an allocation request: the requester waits for `done`. */
typedef struct dg_mem_reply {
    void *ptr;
    dagger_status_t status;
    char detail[200];                 /* why, when status is not DAGGER_OK */
    _Atomic int done;
} dg_mem_reply_t;

/* dagger.mem.alloc */
typedef struct dg_mem_alloc_msg {
    uint64_t chunk, bytes;
    uint32_t space;
    int32_t zero;                     /* 1: clear the memory */
    dg_mem_reply_t *reply;
} dg_mem_alloc_msg_t;

/* dagger.mem.free, dagger.mem.copy, dagger.mem.send, dagger.mem.recv: a
 * ready op of this rank, finished by the handler (or, for transfers, when
 * the transport completes it). */
typedef struct dg_mem_op_msg {
    struct dg_xop *op;
} dg_mem_op_msg_t;

/* dagger.proc.launch: a ready LAUNCH op for a CPU processor actor (worker
 * index, or the worker count for the submitting thread's processor). */
typedef struct dg_proc_launch_msg {
    struct dg_exec *ex;
    struct dg_xop *op;
    int32_t worker;
    int32_t pad;
} dg_proc_launch_msg_t;

#endif
