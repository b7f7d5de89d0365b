/* Who calls: the mark of the calling thread (a plain thread, a task's
 * codelet, an actor's handler) and the check of the SPMD calls.
 *
 * The SPMD calls belong to the program's own thread, which makes them in
 * the same order on every rank. From a codelet or a handler, which runs on
 * one rank at a time chosen by the scheduler, the calls that wait for every
 * rank (collectives, region begin and end, fetches, finalize) would wait for
 * calls the other ranks never make, or for the very worker they block; and
 * the ones that change what every rank's planner holds (submissions, chunks,
 * futures, registrations, arrays, views, stencils) would be made by one rank
 * alone, racing the program's thread. So they refuse to run there.
 *
 * The executor marks the thread around each codelet (core/exec/run.c), the
 * actor kernel around each handler and on_stop (actors/dispatch.c,
 * actors/bound.h). Marks nest: a codelet that waits runs other actors'
 * turns (actors/worker.h), and a handler's codelet runs inside the
 * processor actor's turn. Leaf layer, so that the collectives' API (over
 * transport/ only) and the actor kernel can use it. */
#ifndef DG_SPMD_CALLER_H
#define DG_SPMD_CALLER_H

#include <dagger/status.h>

enum { DG_CALLER_PLAIN = 0, DG_CALLER_CODELET = 1, DG_CALLER_HANDLER = 2 };

/* initial-exec: a fixed offset from the thread pointer (it is written twice
 * per handler call and per task; one int fits the static TLS reserve of a
 * dlopen()ed libdagger.so). */
extern _Thread_local int dg_caller_mark __attribute__((tls_model("initial-exec")));

/* Marks the calling thread with one of DG_CALLER_*; returns the mark it
 * replaces, for the caller to put back with dg_caller_restore. */
static inline int dg_caller_enter(int mark)
{
    int was = dg_caller_mark;
    dg_caller_mark = mark;
    return was;
}

static inline void dg_caller_restore(int was)
{
    dg_caller_mark = was;
}

/* DAGGER_OK on a plain thread; DAGGER_ERR_STATE with a detail naming fn and
 * the place when the calling thread runs a codelet or a handler. */
dagger_status_t dg_spmd_allowed(const char *fn);

#endif
