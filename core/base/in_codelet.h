/* Whether the calling thread runs a task's codelet (user code), and the
 * check of the SPMD calls that must not run there. The executor marks the
 * thread around each codelet (core/exec/run.c); while it is marked, the
 * calls that wait for every rank (collectives, region begin and end,
 * fetches, finalize) refuse to run, since one rank's task would wait for
 * calls the other ranks never make, or for itself; and so do the ones that
 * change what every rank's planner holds (submissions, chunks, futures,
 * registrations, arrays, views, stencils), which one rank's task would
 * make alone, racing the program's thread. Leaf layer, so that the
 * collectives' API (over transport/ only) can check it too. */
#ifndef DG_IN_CODELET_H
#define DG_IN_CODELET_H

#include <dagger/status.h>

/* Marks the calling thread as running a codelet (1) or not (0); returns the
 * mark it replaces, for the caller to put back (codelets may nest: a task
 * that waits runs other actors' turns, actors/worker.h). */
int dg_in_codelet_set(int on);

/* DAGGER_OK, or DAGGER_ERR_STATE with a detail naming fn when the calling
 * thread runs a codelet. */
dagger_status_t dg_not_in_codelet(const char *fn);

#endif
