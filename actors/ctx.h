/* The context of one handler call (the public dagger_ctx_t) and the
 * thread-local state that tells the kernel which actor, if any, this thread
 * is running. */
#ifndef DG_ACT_CTX_H
#define DG_ACT_CTX_H

#include <dagger/actor.h>

#include "actors/actor.h"
#include "actors/msg.h"

struct dg_act_system;

struct dagger_ctx {
    struct dg_act_system *sys;
    dg_actor_t *actor;
    dg_msg_t *msg; /* NULL in on_stop */
    int worker;
    int replied;
};

/* Per thread: the system this thread is a worker of (NULL otherwise), its
 * worker index, and the handler context running now (NULL between handlers). */
typedef struct dg_act_tls {
    struct dg_act_system *sys;
    int worker;
    dagger_ctx_t *ctx;
} dg_act_tls_t;

/* initial-exec: a fixed offset from the thread pointer instead of a call
 * to __tls_get_addr on every access (the library is built -fPIC); it sits
 * on the hot path of every borrowed turn (a task's launch, a submission).
 * The variable is small, so a dlopen()ed libdagger.so still finds room in
 * glibc's static TLS reserve. */
#define DG_TLS_IE __attribute__((tls_model("initial-exec")))
extern _Thread_local dg_act_tls_t dg_act_tls DG_TLS_IE;

/* dg_act_current_worker for the kernel's own hot paths (inline). */
static inline int dg_act_tls_worker(const struct dg_act_system *sys)
{
    return dg_act_tls.sys == sys ? dg_act_tls.worker : -1;
}

#endif
