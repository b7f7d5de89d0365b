/* The calling thread's mark and the check of SPMD calls (spmd_caller.h). */
#include "core/base/spmd_caller.h"

#include "core/base/status_internal.h"

_Thread_local int dg_caller_mark __attribute__((tls_model("initial-exec")));

dagger_status_t dg_spmd_allowed(const char *fn)
{
    int mark = dg_caller_mark;
    if (mark == DG_CALLER_PLAIN)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_STATE, "%s: called from %s; the SPMD calls (submissions, "
                    "collectives, regions, fetches, chunks, arrays, registrations, "
                    "dagger_finalize) belong to the program's own thread, which makes them in "
                    "the same order on every rank", fn,
                    mark == DG_CALLER_CODELET ? "a task's codelet" : "an actor's handler");
}
