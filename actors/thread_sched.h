/* The scheduling attributes of the runtime's own threads: their names, the
 * scheduler slice they ask for, and how they pause while they spin.
 *
 * Why a slice: Linux's EEVDF scheduler (6.6 and later) lets a waking thread
 * preempt the running one only when the waking thread asks for a shorter
 * slice (Linux 6.12 added the request for normal threads, sched_setattr's
 * sched_runtime); otherwise it waits until the running thread's slice ends,
 * which the scheduler sees at its next tick (4 ms at 250 Hz). A worker
 * sleeps when it has nothing to do and is woken by a message or a ready
 * task, so every hand-over between ranks or threads goes through a wake-up;
 * beside one busy process on the same cores, each of them waited for a
 * tick (Task Bench on 2 ranks x 1 thread beside one busy loop on 2 cores:
 * 100-250x slower than alone; 10-20x faster again with 100 us slices). The
 * same preemption costs ranks whose threads outnumber the cores, so the
 * slice is a setting, off by default (DAGGER_SCHED_SLICE_US,
 * docs/benchmarks.md, "Beside a busy process"). Kernels before 6.12 keep no
 * slice for normal threads and ignore the request. */
#ifndef DG_ACT_THREAD_SCHED_H
#define DG_ACT_THREAD_SCHED_H

#include <stdint.h>
#include <sys/types.h>

/* The least and most slice the kernel takes (it clamps to 0.1-100 ms). */
#define DG_SLICE_MIN_US 100
#define DG_SLICE_MAX_US 100000

/* Asks the kernel for a slice of slice_us microseconds for the calling
 * thread, leaving its policy (SCHED_OTHER) and nice value as they are; 0
 * asks for nothing. Returns 0, or an errno value where the kernel refused
 * (ENOSYS where there is no sched_setattr). */
int dg_thread_set_slice(uint32_t slice_us);

/* The slice in nanoseconds of thread tid (0: the calling one), as the
 * kernel reports it: the one asked for, else the kernel's default (Linux
 * 6.12 and later), or 0 (a kernel that keeps no slice for normal threads).
 * Returns 0 or an errno value. */
int dg_thread_slice_ns(pid_t tid, uint64_t *ns);

/* How the runtime's spinning threads (an idle worker for 50 us before it
 * sleeps, a waiting submitting thread and a collective's waiter for 30 us)
 * pause between two checks: with yields on (the default) each pause is a
 * sched_yield, which lets the rank's own threads that share the core run;
 * off, a short busy pause that keeps the core. Beside a busy process each
 * yield hands the core to it until the next scheduler tick (4 ms), so a
 * program that shares its cores with other work runs far faster with
 * yields off (docs/benchmarks.md, "Beside a busy process"), and one whose
 * ranks and threads outnumber the cores slower. Process-wide: the actor
 * system sets it at creation (DAGGER_SPIN_YIELD). */
void dg_spin_set_yield(int on);
int dg_spin_yields(void);
void dg_spin_pause(void);

/* Names the calling thread (what top -H, ps -L, perf and gdb show): at most
 * 15 characters are kept. */
void dg_thread_name(const char *name);

#endif
