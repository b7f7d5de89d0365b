/* The per-thread error detail that dg_error sets, and each code's name and
 * meaning (their public readers: core/runtime/status_api.c). */
#include "core/base/status_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char dg_detail[1024];

const char *dg_error_text(void)
{
    return dg_detail;
}

dagger_status_t dg_error(dagger_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dg_detail, sizeof(dg_detail), fmt, ap);
    va_end(ap);
    return status;
}

const char *dg_status_text(dagger_status_t status)
{
    switch (status) {
#define DG_S(code, text) case code: return #code ": " text;
    DG_S(DAGGER_OK, "success")
    DG_S(DAGGER_ERR_INVALID_ARG, "an argument is NULL, out of range or malformed")
    DG_S(DAGGER_ERR_NO_MEMORY, "an allocation failed")
    DG_S(DAGGER_ERR_BAD_HANDLE, "a handle is NULL, destroyed or of the wrong kind")
    DG_S(DAGGER_ERR_NOT_FOUND, "the name or id is not registered")
    DG_S(DAGGER_ERR_EXISTS, "already registered or created")
    DG_S(DAGGER_ERR_TIMEOUT, "the wait reached its deadline")
    DG_S(DAGGER_ERR_UNSUPPORTED, "not available in this build or on this machine")
    DG_S(DAGGER_ERR_STATE, "not allowed in the object's current state")
    DG_S(DAGGER_ERR_CONFIG, "a DAGGER_* setting has an unusable value")
    DG_S(DAGGER_ERR_INTERNAL, "internal invariant broken (a bug, please report it)")
    DG_S(DAGGER_ERR_SYSTEM, "an operating-system call failed")
    DG_S(DAGGER_ERR_OVERFLOW, "a size or count is too large for its destination")
    DG_S(DAGGER_ERR_ACTOR_STOPPED, "the destination actor was stopped")
    DG_S(DAGGER_ERR_NO_SUCH_ACTOR, "no actor has this address")
    DG_S(DAGGER_ERR_MSG_TYPE, "unregistered message type, or no handler for it")
    DG_S(DAGGER_ERR_MSG_SIZE, "payload size does not match the registered message type")
    DG_S(DAGGER_ERR_TYPE_CONFLICT, "message type name collision or conflicting registration")
    DG_S(DAGGER_ERR_BOOTSTRAP, "PMIx bootstrap failed")
    DG_S(DAGGER_ERR_TRANSPORT, "UCX transport error")
    DG_S(DAGGER_ERR_PEER_LOST, "a peer rank died or disconnected")
    DG_S(DAGGER_ERR_BUILD_MISMATCH, "ranks run different builds of libdagger")
    DG_S(DAGGER_ERR_BAD_VIEW, "a view is out of bounds or has the wrong shape")
    DG_S(DAGGER_ERR_DTYPE, "element type mismatch")
    DG_S(DAGGER_ERR_SCOPE, "no processor satisfies the scope")
    DG_S(DAGGER_ERR_CYCLE, "explicit dependencies form a cycle")
    DG_S(DAGGER_ERR_TASK_FAILED, "a task returned an error")
    DG_S(DAGGER_ERR_DIVERGENCE, "ranks disagree on planning inputs")
    DG_S(DAGGER_ERR_HANG, "no progress within DAGGER_HANG_TIMEOUT")
    DG_S(DAGGER_ERR_PROTOCOL, "a transfer header does not match the plan")
#undef DG_S
    }
    return NULL;
}
