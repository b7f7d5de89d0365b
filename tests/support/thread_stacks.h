/* Every thread's stack, printed by a test's watchdog before the test's time
 * limit kills a hung process without a word: each other thread of the
 * process is asked in turn, by a real-time signal sent to it alone, for its
 * return addresses (backtrace(3) in the handler); the watchdog then names
 * each frame with addr2line (static functions and file:line from the debug
 * information, which dladdr cannot give), one addr2line run per module, or
 * with dladdr where addr2line is missing. A thread that blocks the signal
 * (UCX's, PMIx's and Criterion's helper threads) gets the system call it sits
 * in and the address it made it from, read from /proc. Tests only: it takes
 * a signal number for the duration of the call and expects nothing else to
 * use it, and the signal ends the sleeps of the threads it stops (nanosleep,
 * poll: never restarted), so a test that times itself may notice; it is for
 * a process that is already hung.
 *   dgt_print_thread_stacks(stderr, "dgt watchdog: rank 1");
 * Header-only, like the harnesses that include it (tests/transport/tx_test.h). */
#ifndef DG_TEST_THREAD_STACKS_H
#define DG_TEST_THREAD_STACKS_H

#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "support/proc_sigmask.h"

#define DGT_STACK_THREADS 64
#define DGT_STACK_DEPTH 40

typedef struct dgt_stack {
    pid_t tid;
    char name[20]; /* /proc/self/task/TID/comm */
    int n;         /* frames; -1: none (it blocks the signal, or did not answer) */
    void *frames[DGT_STACK_DEPTH];
} dgt_stack_t;

/* The thread being asked and where its answer goes: a handler that runs
 * late, on a thread no longer asked, writes nothing. */
static _Atomic pid_t dgt_stack_want;
static _Atomic int dgt_stack_done;
static dgt_stack_t *dgt_stack_slot;

static void dgt_stack_on_signal(int sig)
{
    (void)sig;
    if ((pid_t)syscall(SYS_gettid) != atomic_load(&dgt_stack_want))
        return;
    dgt_stack_t *st = dgt_stack_slot;
    int n = backtrace(st->frames, DGT_STACK_DEPTH);
    /* Leave out this handler and the kernel's signal frame. */
    int skip = n > 2 ? 2 : 0;
    memmove(st->frames, st->frames + skip, (size_t)(n - skip) * sizeof(st->frames[0]));
    st->n = n - skip;
    atomic_store(&dgt_stack_done, 1);
}

static inline void dgt_stack_comm(pid_t tid, char *name, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "r");
    name[0] = '\0';
    if (f) {
        if (fgets(name, (int)cap, f))
            name[strcspn(name, "\n")] = '\0';
        fclose(f);
    }
}

/* 1 when thread tid blocks signal sig (its SigBlk in /proc). */
static inline int dgt_stack_blocks(pid_t tid, int sig)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
    return dgt_sigmask_has(path, "SigBlk", sig);
}

/* Asks thread st->tid for its frames, unless it blocks the signal; 500 ms
 * for an answer. */
static inline void dgt_stack_take(dgt_stack_t *st, int sig)
{
    st->n = -1;
    if (dgt_stack_blocks(st->tid, sig))
        return;
    dgt_stack_slot = st;
    atomic_store(&dgt_stack_done, 0);
    atomic_store(&dgt_stack_want, st->tid);
    if (syscall(SYS_tgkill, getpid(), st->tid, sig) == 0)
        for (int i = 0; i < 500 && !atomic_load(&dgt_stack_done); i++)
            nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 1000000}, NULL);
    atomic_store(&dgt_stack_want, 0);
}

/* The file addr2line reads for a module: the test program itself runs
 * under another name (Criterion re-executes it as "boxfort-worker"). */
static inline const char *dgt_stack_file(const Dl_info *di, char *buf, size_t cap)
{
    Dl_info self;
    if (!dladdr((void *)dgt_stack_comm, &self) || self.dli_fbase != di->dli_fbase)
        return di->dli_fname;
    snprintf(buf, cap, "/proc/%d/exe", (int)getpid()); /* not self: addr2line reads it */
    return buf;
}

/* Names every frame of one module (by its load address), in the stacks'
 * order, through one addr2line run; "??" where that run gave no name or
 * could not run (addr2line missing: dladdr's names are printed then).
 * Each frame is a return address: the call is the byte before it. */
static inline void dgt_stack_resolve(const Dl_info *mod, dgt_stack_t *sts, int nst, char **names)
{
    char exe[64];
    const char *file = dgt_stack_file(mod, exe, sizeof(exe));
    size_t cap = strlen(file) + 64 + (size_t)nst * DGT_STACK_DEPTH * 20, len = 0;
    char *cmd = malloc(cap);
    FILE *p = NULL;
    if (cmd) {
        len += (size_t)snprintf(cmd, cap, "addr2line -f -C -p -e '%s'", file);
        for (int t = 0; t < nst; t++)
            for (int i = 0; i < sts[t].n; i++) {
                Dl_info di;
                if (dladdr(sts[t].frames[i], &di) && di.dli_fbase == mod->dli_fbase)
                    len += (size_t)snprintf(cmd + len, cap - len, " 0x%lx",
                                            (unsigned long)((uintptr_t)sts[t].frames[i] -
                                                            (uintptr_t)di.dli_fbase - 1));
            }
        snprintf(cmd + len, cap - len, " 2>/dev/null");
        p = popen(cmd, "r");
        free(cmd);
    }
    char line[512];
    for (int t = 0; t < nst; t++)
        for (int i = 0; i < sts[t].n; i++) {
            Dl_info di;
            if (!dladdr(sts[t].frames[i], &di) || di.dli_fbase != mod->dli_fbase)
                continue;
            if (!p || !fgets(line, sizeof(line), p))
                snprintf(line, sizeof(line), "??");
            line[strcspn(line, "\n")] = '\0';
            names[t * DGT_STACK_DEPTH + i] = strdup(line);
        }
    if (p)
        pclose(p);
}

/* A thread that blocks the signal (UCX's, PMIx's and Criterion's helper
 * threads do): where it sits in the kernel, from /proc (the system call's
 * number and the user-space address it was made from, as frame 0). */
static inline void dgt_stack_from_proc(dgt_stack_t *st, char *what, size_t cap)
{
    char path[64], line[256] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)st->tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof(line), f))
            line[0] = '\0';
        fclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    long nr = -1;
    unsigned long pc = 0;
    const char *last = strrchr(line, ' ');
    if (sscanf(line, "%ld", &nr) == 1 && nr >= 0 && last) {
        pc = strtoul(last + 1, NULL, 16);
        snprintf(what, cap, ": blocks the signal; in system call %ld", nr);
        if (pc) {
            st->frames[0] = (void *)(pc + 1); /* resolved as a return address */
            st->n = 1;
        }
    } else {
        snprintf(what, cap, ": blocks the signal; %.32s", line[0] ? line : "state unknown");
    }
}

/* Prints every thread's stack but the caller's, each line prefixed. */
static inline void dgt_print_thread_stacks(FILE *out, const char *prefix)
{
    int sig = SIGRTMIN + 6;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = dgt_stack_on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    void *warm[2];
    backtrace(warm, 2); /* loads the unwinder here, not in a handler */
    dgt_stack_t *sts = calloc(DGT_STACK_THREADS, sizeof(*sts));
    char **names = calloc(DGT_STACK_THREADS * DGT_STACK_DEPTH, sizeof(*names));
    DIR *d = opendir("/proc/self/task");
    if (!sts || !names || !d || sigaction(sig, &sa, &old) != 0) {
        fprintf(out, "%s: cannot take the threads' stacks\n", prefix);
        if (d)
            closedir(d);
        free(sts);
        free(names);
        return;
    }
    pid_t self = (pid_t)syscall(SYS_gettid);
    int nst = 0;
    for (struct dirent *e; (e = readdir(d)) && nst < DGT_STACK_THREADS;) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == self)
            continue;
        sts[nst].tid = tid;
        dgt_stack_comm(tid, sts[nst].name, sizeof(sts[nst].name));
        dgt_stack_take(&sts[nst], sig);
        nst++;
    }
    closedir(d);
    sigaction(sig, &old, NULL);
    char (*what)[64] = calloc((size_t)nst + 1, sizeof(*what));
    for (int t = 0; what && t < nst; t++)
        if (sts[t].n < 0)
            dgt_stack_from_proc(&sts[t], what[t], sizeof(what[t]));
    /* One addr2line run per module, in the order the modules first appear. */
    for (int t = 0; t < nst; t++)
        for (int i = 0; i < sts[t].n; i++) {
            Dl_info di;
            if (!names[t * DGT_STACK_DEPTH + i] && dladdr(sts[t].frames[i], &di) && di.dli_fname)
                dgt_stack_resolve(&di, sts, nst, names);
        }
    for (int t = 0; t < nst; t++) {
        fprintf(out, "%s: thread %d (%s)%s\n", prefix, (int)sts[t].tid, sts[t].name,
                what ? what[t] : "");
        for (int i = 0; i < sts[t].n; i++) {
            const char *name = names[t * DGT_STACK_DEPTH + i];
            Dl_info di = {0};
            dladdr(sts[t].frames[i], &di);
            const char *mod = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
            mod = mod ? mod + 1 : di.dli_fname ? di.dli_fname : "?";
            if (name && strncmp(name, "??", 2) != 0)
                fprintf(out, "%s:   #%-2d %s (%s)\n", prefix, i, name, mod);
            else
                fprintf(out, "%s:   #%-2d %s+%#lx (%s)\n", prefix, i,
                        di.dli_sname ? di.dli_sname : "?",
                        (unsigned long)((uintptr_t)sts[t].frames[i] -
                                        (uintptr_t)(di.dli_saddr ? di.dli_saddr : di.dli_fbase)),
                        mod);
        }
    }
    fflush(out);
    for (int k = 0; k < DGT_STACK_THREADS * DGT_STACK_DEPTH; k++)
        free(names[k]);
    free(names);
    free(what);
    free(sts);
}

#endif
