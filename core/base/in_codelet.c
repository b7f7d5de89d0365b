/* The calling thread's codelet mark and the check of SPMD calls (in_codelet.h). */
#include "core/base/in_codelet.h"

#include "core/base/status_internal.h"

/* initial-exec: no __tls_get_addr call (it is set twice per task; see
 * actors/ctx.h for why that fits the static TLS reserve). */
static _Thread_local int tl_in_codelet __attribute__((tls_model("initial-exec")));

int dg_in_codelet_set(int on)
{
    int was = tl_in_codelet;
    tl_in_codelet = on;
    return was;
}

dagger_status_t dg_not_in_codelet(const char *fn)
{
    if (!tl_in_codelet)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_STATE, "%s: called from a task's codelet; the SPMD calls "
                    "(submissions, collectives, regions, fetches, chunks, arrays, registrations, "
                    "dagger_finalize) belong to the program's own thread, which makes them in "
                    "the same order on every rank", fn);
}
