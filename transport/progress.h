/* The progress engine: the one loop that moves every channel's traffic
 * (COLL, ACTOR, DATA, TEST and CTRL: tx.h lists each channel's handler) and
 * completes every send, put, get and receive of this rank.
 *
 * One round is dg_tx_progress (progress.c): it takes the operations other
 * threads pushed onto the outbox, runs one round of UCX worker progress, in
 * which arriving active messages reach their channel's handler (tx_recv.c),
 * and runs the done callbacks of finished operations. Handlers and
 * callbacks therefore run on the thread that runs the round, the owner
 * (dg_tx_is_owner); any other thread only pushes and wakes the owner.
 *
 * Who drives the engine, in a process with the runtime (core/runtime/runtime.c):
 *  - during dagger_init, the thread that called it: dg_tx_create's handshake
 *    and the first barrier run rounds from dg_tx_wait (progress_wait.c);
 *  - from the end of dagger_init to dagger_finalize, actor worker 0:
 *    dg_tx_engine_start installs the engine as the actor kernel's poller
 *    (dg_act_poller_t, actors/system.h), so worker 0 runs a round whenever
 *    it looks for work and, when idle, sleeps on the UCX worker's fd beside
 *    its own (progress_worker0.c);
 *  - after dg_tx_engine_stop, the finalizing thread again, from dg_tx_wait.
 * Tests and benchmarks without the runtime drive it from their own thread
 * (dg_tx_wait, or dg_tx_progress in a loop). The round and waiting are
 * declared in tx.h with the rest of the transport's calls; this header
 * declares the hand-over to actor worker 0. */
#ifndef DG_PROGRESS_H
#define DG_PROGRESS_H

#include "actors/system.h"
#include "transport/tx.h"

/* The wake-up the engine needs to reach worker 0 wherever it sleeps
 * (dg_tx_params_t.wake, with the actor system as context). */
void dg_tx_engine_wake(void *sys);

/* Owner thread: hands the engine to actor worker 0. The caller releases the
 * UCX worker and worker 0 adopts it on its first poll; returns once worker 0
 * polls. Install every channel's handler first (on every rank: a barrier
 * after installing them does it). */
void dg_tx_engine_start(dg_tx_t *tx, dg_act_system_t *sys);

/* Takes the engine back from worker 0 to the calling thread, which becomes
 * the owner (returns once worker 0 no longer touches it). Harmless when the
 * engine was never started. */
void dg_tx_engine_stop(dg_tx_t *tx, dg_act_system_t *sys);

#endif
