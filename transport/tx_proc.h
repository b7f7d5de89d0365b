/* Is another process of the job still there? For peers on this host the
 * answer comes from /proc: the pid plus the process start time (so a reused
 * pid is not mistaken for the peer). Everything here is async-signal-safe
 * (open/read/close and plain string code), so the SIGTERM handler uses it. */
#ifndef DG_TX_PROC_H
#define DG_TX_PROC_H

#include <stddef.h>
#include <stdint.h>

typedef struct dg_proc_id {
    int32_t pid;
    uint64_t starttime; /* clock ticks since boot, field 22 of /proc/<pid>/stat */
} dg_proc_id_t;

typedef enum dg_proc_state {
    DG_PROC_ALIVE = 0,
    DG_PROC_EXITED = 1, /* a zombie: it ended, its wait status is known */
    DG_PROC_GONE = 2    /* no such process any more (or another one with its pid) */
} dg_proc_state_t;

/* This process's identity; -1 when /proc cannot be read. */
int dg_proc_self(dg_proc_id_t *out);
/* The identity of process pid and (ppid non-NULL) its parent's pid; -1 when
 * it cannot be read. */
int dg_proc_of(int32_t pid, dg_proc_id_t *out, int32_t *ppid);

/* This rank's launcher (the process that started it, or its local daemon:
 * mpirun, orted, prted, slurmstepd) and its command name: 0, or -1 when
 * there is none to be found (a singleton, /proc unreadable). Not
 * async-signal-safe (tx_launcher.c). */
int dg_proc_launcher(dg_proc_id_t *out, char *name, size_t cap);

/* Probes id; *wstatus gets the wait status when EXITED. */
dg_proc_state_t dg_proc_probe(const dg_proc_id_t *id, int *wstatus);

/* Appends a description of a probe ("was killed by signal 9",
 * "exited with status 3", "is gone") to buf of cap bytes, NUL-terminated. */
void dg_proc_describe(char *buf, size_t cap, dg_proc_state_t state, int wstatus);

/* Async-signal-safe string building: appends s / the decimal v to buf. */
void dg_str_append(char *buf, size_t cap, const char *s);
void dg_str_append_int(char *buf, size_t cap, long long v);

#endif
