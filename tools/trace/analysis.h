/* Derived measures of a loaded trace: the critical path through the task
 * graph, the longest waits, how many tasks a rank ran at once, and the
 * spread of each codelet's run times. */
#ifndef TR_ANALYSIS_H
#define TR_ANALYSIS_H

#include "model.h"

typedef struct tr_critpath {
    int64_t length;         /* ns: sum of task run times along the longest chain */
    uint64_t *tasks;        /* the chain, first task first */
    size_t ntasks;
} tr_critpath_t;

/* Longest dependency chain weighted by measured run times (communication
 * counted as free: a lower bound of the run time with unlimited processors). */
void tr_critpath(const tr_trace_t *tr, tr_critpath_t *cp);
void tr_critpath_free(tr_critpath_t *cp);

typedef enum tr_wait_kind { TR_WAIT_TASK = 1, TR_WAIT_RECV = 2 } tr_wait_kind_t;

typedef struct tr_wait {
    tr_wait_kind_t kind;
    int64_t ns;
    uint64_t task;          /* TASK: the task that waited */
    uint64_t limiter;       /* TASK: the input finished last (0: none, it waited for its plan) */
    const tr_xfer_t *xfer;  /* RECV: the receive that waited for its data */
} tr_wait_t;

/* The n longest waits (sorted, longest first), into out; returns how many:
 * tasks that started long after their inputs were ready, receives whose
 * data came long after they were posted. */
size_t tr_top_waits(const tr_trace_t *tr, tr_wait_t *out, size_t n);

/* When a task's inputs were ready: its last dependency's end (or its plan). */
int64_t tr_task_ready(const tr_trace_t *tr, const tr_task_t *t, uint64_t *limiter);

/* How many tasks a rank ran at once over the traced wall time (t_begin ..
 * t_end), split by what its submitting thread was doing: [0] outside its
 * region-end waits (submitting and planning, or the program's own code
 * between regions), [1] waiting at a region's end (when it also runs
 * tasks). ns: that time; task_ns: the run time of the rank's tasks within it
 * (task_ns / ns is the mean number running); none_ns: the part of it in
 * which no task of the rank ran. */
typedef struct tr_occupancy {
    double ns[2], task_ns[2], none_ns[2];
} tr_occupancy_t;

void tr_occupancy(const tr_trace_t *tr, int rank, tr_occupancy_t *o);

/* A rank's regions against their submission: the time from a region's
 * begin to the start of its region-end wait (the submitting thread
 * submitting its tasks) over the time from its begin to the wait's end.
 * Only regions with a begin, a wait and at least one task the rank ran
 * count. nregions: those; share: the median of their ratios (of an even
 * count, the mean of the middle two); tasks: the tasks of those regions the
 * rank ran; ended: those of them that ended before their region's wait
 * began, while tasks were still being submitted. Most of a region spent
 * submitting, with most tasks done by then, says the submitting thread set
 * the pace. */
typedef struct tr_submit_share {
    uint64_t nregions, tasks, ended;
    double share;
} tr_submit_share_t;

void tr_submit_share(const tr_trace_t *tr, int rank, tr_submit_share_t *o);

/* The run times of a codelet's tasks that ran (ns): their sum, the median
 * (of an even count, the mean of the middle two), the 90th percentile (the
 * smallest time that at least 90 % of the runs do not exceed) and the
 * longest. A mean well above the median says that some runs were slowed
 * (a thread off its CPU, inputs elsewhere in memory), not all of them. */
typedef struct tr_cl_times {
    uint64_t count;
    double total, median, p90, max;
} tr_cl_times_t;

/* out[k] for codelet index k (tr_codelet_index), tr->codelets.n + 1
 * entries: the last for tasks whose codelet has no name record. */
void tr_codelet_times(const tr_trace_t *tr, tr_cl_times_t *out);

#endif
