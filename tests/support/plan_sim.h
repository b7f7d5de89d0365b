/* A reference executor for op streams: runs the streams of P ranks of one
 * program in one process, in random (or FIFO) but legal interleavings, with
 * real bytes per (rank, buffer). It checks the stream contract: every op's
 * dependencies exist and come earlier, every SEND has exactly one RECV with
 * the same tag, peers, byte count and span lengths, buffers exist when used
 * and are allocated once, REGION_END orders a rank's regions, and every op
 * eventually runs. Tests and the executor's authors use it as the model of
 * what an executor must do. */
#ifndef DG_TEST_PLAN_SIM_H
#define DG_TEST_PLAN_SIM_H

#include "core/plan/plan.h"

typedef struct dg_plan_sim dg_plan_sim_t;

/* Runs a LAUNCH on `rank`; resolve buffers with dg_plan_sim_buffer. Non-zero
 * fails the run. */
typedef int (*dg_plan_sim_launch_fn)(void *ctx, dg_plan_sim_t *sim, int32_t rank,
                                     const dg_plan_op_t *op);

typedef struct dg_plan_sim_opts {
    uint64_t seed;        /* interleaving; ignored when fifo */
    int fifo;             /* 1: run ready ops in the order they became ready */
    uint64_t window;      /* > 0: like the executor's ring, op s of a rank starts only after
                           * all its ops <= s - window ran (pair with the planner's
                           * retire_window); 0: dependencies alone order ops */
    dg_plan_sim_launch_fn launch;
    void *ctx;
} dg_plan_sim_opts_t;

dagger_status_t dg_plan_sim_create(int32_t nranks, dg_plan_sim_t **out);
void dg_plan_sim_destroy(dg_plan_sim_t *s);

/* The emit callback and its context for the planner of `rank`. */
void dg_plan_sim_emit(void *rank_ctx, const dg_plan_op_t *op);
void *dg_plan_sim_rank_ctx(dg_plan_sim_t *s, int32_t rank);

/* A buffer that exists before any op (a chunk's home storage). */
dagger_status_t dg_plan_sim_add_buffer(dg_plan_sim_t *s, int32_t rank, dg_plan_buf_t buf,
                                       const void *init, size_t bytes);
/* The bytes of a live buffer, or NULL. */
void *dg_plan_sim_buffer(dg_plan_sim_t *s, int32_t rank, dg_plan_buf_t buf, size_t *bytes);

/* Runs every op recorded and not yet run. DAGGER_ERR_PROTOCOL (contract
 * broken), DAGGER_ERR_HANG (ops that can never run) or DAGGER_ERR_TASK_FAILED
 * (a launch failed), with the detail message naming the op. */
dagger_status_t dg_plan_sim_run(dg_plan_sim_t *s, const dg_plan_sim_opts_t *o);

/* Ops recorded so far on `rank` (tests count op kinds with it). */
uint64_t dg_plan_sim_nops(const dg_plan_sim_t *s, int32_t rank);
const dg_plan_op_t *dg_plan_sim_op(const dg_plan_sim_t *s, int32_t rank, uint64_t index);

#endif
