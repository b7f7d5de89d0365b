/* The executor's message types (payloads in msgs.h), registered by name
 * when the executor is created, and its way of sending them. The devices
 * register their own (dagger.dev.*, devices/dev_setup.c); docs/design.md,
 * "Message types", lists both (a test compares the table with what is
 * registered). */
#include <stddef.h>
#include <stdio.h>

#include "actors/msgtype.h"
#include "actors/system.h"
#include "core/exec/exec.h"
#include "core/exec/rewrap.h"
#include "core/exec/xfer.h"
#include "core/exec/msgs.h"
#include "core/base/status_internal.h"

typedef struct dg_msg_decl {
    const char *name;
    dagger_msg_encoding_t encoding;
    size_t size;
    size_t field; /* offsetof(dg_exec_msgs_t, ...) */
} dg_msg_decl_t;

static const dg_msg_decl_t decls[] = {
    {"dagger.mem.alloc", DAGGER_MSG_FIXED, sizeof(dg_mem_alloc_msg_t),
     offsetof(dg_exec_msgs_t, alloc)},
    {"dagger.mem.free", DAGGER_MSG_FIXED, sizeof(dg_mem_op_msg_t), offsetof(dg_exec_msgs_t, free)},
    {"dagger.mem.copy", DAGGER_MSG_FIXED, sizeof(dg_mem_op_msg_t), offsetof(dg_exec_msgs_t, copy)},
    {"dagger.mem.send", DAGGER_MSG_FIXED, sizeof(dg_mem_op_msg_t), offsetof(dg_exec_msgs_t, send)},
    {"dagger.mem.recv", DAGGER_MSG_FIXED, sizeof(dg_mem_op_msg_t), offsetof(dg_exec_msgs_t, recv)},
    {"dagger.proc.launch", DAGGER_MSG_FIXED, sizeof(dg_proc_launch_msg_t),
     offsetof(dg_exec_msgs_t, launch)},
    /* On the wire: the 72-byte move_rewrap header; as delivered: where the
     * children are (dg_xfer_arrival_t), so the type allows the larger. */
    {"dagger.mem.rewrap", DAGGER_MSG_BYTES,
     sizeof(dg_xfer_arrival_t) > DG_REWRAP_HDR_LEN ? sizeof(dg_xfer_arrival_t) : DG_REWRAP_HDR_LEN,
     offsetof(dg_exec_msgs_t, rewrap)},
    /* On the wire: a piece's 32-byte header (rewrap.h), its bytes eager or
     * by rendezvous; delivered as dg_xfer_arrival_t. */
    {"dagger.mem.piece", DAGGER_MSG_BYTES,
     sizeof(dg_xfer_arrival_t) > DG_REWRAP_PIECE_LEN ? sizeof(dg_xfer_arrival_t)
                                                     : DG_REWRAP_PIECE_LEN,
     offsetof(dg_exec_msgs_t, piece)},
};

dagger_status_t dg_exec_msgs_register(dg_exec_t *ex)
{
    struct dg_msgtypes *reg = dg_act_system_types(ex->actors);
    for (size_t i = 0; i < sizeof(decls) / sizeof(decls[0]); i++) {
        dagger_msg_type_desc_t d = {decls[i].name, decls[i].encoding, decls[i].size};
        uint32_t *id = (uint32_t *)((char *)&ex->msg + decls[i].field);
        dagger_status_t st = dg_msgtypes_register(reg, &d, id);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

dagger_status_t dg_exec_post_space(dg_exec_t *ex, uint32_t space, const dg_act_post_t *p,
                                   int *direct)
{
    if (ex->nlanes[space] > 1)
        return dg_act_post_any(ex->actors, ex->lane[space], ex->lane_addr[space],
                               ex->nlanes[space], p, direct);
    return dg_act_post_local(ex->actors, ex->space[space], p, direct);
}

dagger_status_t dg_exec_post_op(dg_exec_t *ex, uint32_t type, uint32_t space, dg_xop_t *op)
{
    dg_mem_op_msg_t m = {op};
    dg_act_post_t p = {.to = ex->space_actor[space], .type = type, .payload = &m,
                       .size = sizeof(m), .what = "executor"};
    int direct;
    dagger_status_t st = dg_exec_post_space(ex, space, &p, &direct);
    if (DG_UNLIKELY(st != DAGGER_OK)) {
        char why[400];
        snprintf(why, sizeof(why), "the memory-space actor of space %u did not take an op: %s",
                 space, dagger_error_detail());
        dg_exec_fail(ex, UINT64_MAX - 1, st, why);
        dg_exec_finish(ex, op);
    }
    return st;
}
