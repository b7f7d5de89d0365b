/* Dagger-C: a runtime for distributed task-parallel C programs.
 *
 * The umbrella header. Include this one; the files under dagger/ hold one
 * concern each and are documented per function. The rules below hold for
 * every call; a header says only where a call departs from them.
 *
 * Errors. A call that can fail returns a dagger_status_t: DAGGER_OK (0), or
 * a negative code (dagger/status.h) with a detail message for the calling
 * thread, dagger_error_detail(), that says what to change. Bad input never
 * crashes or hangs: it is an error code. Collective calls fail alike on
 * every rank. After a failure an output holds only what the call says
 * (dagger_request's reply size, for one); a call creating an object
 * through a pointer output (dagger_init, dagger_region_begin, the array
 * constructors and views, dagger_stencil_create) sets it to NULL.
 *
 * Sentinels. Calls that return a value instead of a status (queries and
 * view builders) answer bad input with a sentinel and set no detail: -1 for
 * an int (a rank, a count, an index, a processor id), 0 for an unsigned
 * value (a size_t count, a sequence number, a message type, a size) and for
 * a yes/no int, NULL for a pointer, a view with ndims 0 (rejected where it
 * is used), a slot whose data is NULL, dagger_actor_none() for an address
 * (and the address of a dagger_reply_to_t).
 *
 * Handles. An object every rank creates alike and that travels in tasks
 * and messages is a value id, a small struct the same on every rank
 * (dagger_chunk_t, dagger_future_t, dagger_codelet_t,
 * dagger_stencil_kernel_t, dagger_index_fn_id_t, dagger_msg_type_t); a local
 * object is an opaque pointer. One release verb per shape: a value id is
 * released with *_free (dagger_chunk_free, dagger_future_free,
 * dagger_request_free), an opaque pointer with *_destroy
 * (dagger_array_destroy, dagger_stencil_destroy). Registered ids (codelets,
 * kernels, index functions, message types) live as long as the runtime.
 * Objects whose end is an operation keep its verb: dagger_init/_finalize,
 * dagger_region_begin/_end, dagger_actor_spawn/_stop/_join,
 * dagger_timer_start/_cancel. A released handle is DAGGER_ERR_BAD_HANDLE
 * wherever it is passed later. docs/design.md lists every public type.
 *
 * Ownership. The caller keeps what it passes in: the library copies what it
 * needs beyond the call (names, descriptions, handler tables, payloads,
 * by-value task arguments, stencil arguments) and keeps no pointer into the
 * caller's memory. The exceptions: an actor's state pointer
 * (dagger_actor_desc_t.state) is held until on_stop; an array view and a
 * prepared stencil use the arrays they were made from (destroy them
 * first). What the library hands out is the library's, for as long as each
 * call says: dagger_chunk_data's memory (until the chunk is freed, between
 * regions), a task's slots and result (during the task), a handler's
 * context and payload (during the handler), dagger_error_detail (until the
 * next failing call on the thread), dagger_strerror (for ever). The one
 * buffer the caller frees is dagger_allgather's *all (with free()).
 *
 * Threads, per call family:
 *  - the SPMD calls (dagger/coll.h, chunk.h, task.h outside a task,
 *    region.h, array.h, stencil.h, linalg.h, dagger_init and
 *    dagger_finalize): every rank makes the same calls in the same order,
 *    from one thread at a time, never from an actor handler or a task
 *    implementation (they wait for other ranks: DAGGER_ERR_STATE there
 *    where it can be detected; in a task's codelet the collectives,
 *    dagger_region_begin/end, the fetches and dagger_finalize always say
 *    so, and the other SPMD calls report the task's region as open);
 *  - inside a task (dagger_task_*): only on the thread running that task;
 *  - actors (dagger/actor.h): dagger_send, dagger_timer_*, dagger_actor_*
 *    and dagger_msg_type_* from any thread; dagger_reply, dagger_ask and
 *    dagger_ctx_* only inside the handler whose context they take;
 *    dagger_request, dagger_actor_join and waits with a timeout only
 *    outside handlers (DAGGER_ERR_STATE there);
 *  - queries (dagger_rank, dagger_nranks, dagger_num_threads, dagger_procs,
 *    dagger_strerror, dagger_error_detail, dagger_version, dagger_rand_*,
 *    dagger_dtype_size) from any thread.
 *
 * Process-wide effects, each with a switch in dagger_params_t
 * (dagger/runtime.h) whose zero value keeps it:
 *  - signal handlers: a SIGTERM handler that names the lost rank before the
 *    process dies of the signal (launchers send SIGTERM to every rank when
 *    one fails), and a SIGUSR1 handler that prints what each rank waits for;
 *    each is installed only where the signal is at SIG_DFL and the SIGTERM
 *    one is removed at dagger_finalize. Switch: no_signal_handlers.
 *  - ending the process: after a lost peer (5 s after the loss is known,
 *    if the program has not ended by itself by then), when the
 *    launcher is gone, when a start-up step passes DAGGER_START_TIMEOUT
 *    (status 124), and when a hang passes DAGGER_HANG_TIMEOUT +
 *    DAGGER_HANG_EXIT (status 124). Switch: no_exit (the event is said on
 *    stderr and waits on a lost peer return DAGGER_ERR_PEER_LOST).
 * Besides: worker threads pinned to cores (no_bind), one runtime per
 * process, the settings read from DAGGER_* environment variables, and
 * HWLOC_PLUGINS_BLACKLIST set while dagger_init makes its hwloc topology
 * (then removed; only where the program did not set it), so that hwloc does
 * not load its XML, OpenCL and GL plugins, which the runtime does not use.
 * Set the variable yourself (empty: load every plugin) to keep them. */
#ifndef DAGGER_H
#define DAGGER_H

#include <dagger/version.h>
#include <dagger/status.h>
#include <dagger/types.h>
#include <dagger/runtime.h>
#include <dagger/actor.h>
#include <dagger/coll.h>
#include <dagger/chunk.h>
#include <dagger/task.h>
#include <dagger/region.h>
#include <dagger/array.h>
#include <dagger/stencil.h>
#include <dagger/linalg.h>

#endif
