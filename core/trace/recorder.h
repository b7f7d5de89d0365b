/* The process-wide recorder under the hooks: this rank's file, the buffers
 * of the threads that record, and the table of tasks running per worker
 * (for hang dumps). Used by the hooks of core/trace, core/exec and
 * core/runtime. */
#ifndef DG_TRACE_RECORDER_H
#define DG_TRACE_RECORDER_H

#include <dagger/status.h>
#include <stddef.h>
#include <stdint.h>

#include "core/trace/format.h"

/* Events a thread keeps before writing them as one block. */
#define DG_TRACE_BUF_BYTES (64u * 1024u)

/* What a thread remembers between hooks (its idle span, actor turns). */
typedef struct dg_trace_thread {
    uint64_t idle_since;       /* 0: not idle */
    uint64_t actor_turns, actor_turns_written;
    uint64_t plan_t0;          /* start of the task being planned */
    int32_t worker;            /* -1 until a worker hook names it */
} dg_trace_thread_t;

/* Writes the header to a new file at path (truncating an old one); the
 * hooks stay off until dg_rec_enable. owner: the runtime being recorded. */
dagger_status_t dg_rec_open(const char *path, const dg_trf_header_t *hdr, const void *owner,
                            int nworkers);
void dg_rec_enable(void);
/* Turns the hooks off, writes every buffer and the end record, closes. */
void dg_rec_close(void);
/* 1 while owner is being recorded; 1 if anyone is when owner is NULL. */
int dg_rec_busy(const void *owner);

/* Room for one event of size bytes (rounded up to 8) in the calling
 * thread's buffer, zeroed, with its header filled in; NULL when the
 * recorder is off or out of memory (the event is counted as dropped). */
void *dg_rec_event(dg_trf_type_t type, uint32_t aux, size_t size);
/* The calling thread's state, NULL when the recorder is off. */
dg_trace_thread_t *dg_rec_thread(void);
/* Ends the calling worker's idle span at t, if it has one (an IDLE event
 * when it lasted long enough to matter). */
void dg_rec_idle_ends(dg_trace_thread_t *th, uint64_t t);
/* Writes the calling thread's buffer now. */
void dg_rec_flush_mine(void);

/* The task each worker runs (0 = none), read by hang dumps. */
void dg_rec_running_set(int worker, uint64_t task, uint32_t codelet, uint64_t t0);
int dg_rec_running_get(int worker, uint64_t *task, uint32_t *codelet, uint64_t *t0);
int dg_rec_nworkers(void);

#endif
