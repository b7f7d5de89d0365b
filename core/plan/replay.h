/* Region replay: a region whose planning inputs repeat those of a recorded
 * region gets the recorded plan back, relocated, instead of being planned
 * again (docs/planner.md, section 11).
 *
 * Planning a region depends on its submissions and on the state it starts
 * from; region ends bring every chunk home and clear every history, so that
 * state is small: the region scope, this rank's slot cache, and for each
 * chunk the region uses, that it is current at home only, untainted, and
 * which of this rank's buffers it has (their histories empty). A recording
 * keeps all of these, the submissions, the ops each one emitted and what
 * each one changed. A later region that starts from the same state is a
 * candidate: each submission equal to the recorded one gets the recorded
 * ops at once (the same ops normal planning would emit, with sequence
 * numbers, task ids, transfer tags and chunk versions moved to this
 * region), and its uniformity hash is computed from the submission as
 * always. At the first difference (or when the region ends early or goes
 * on past the recording) another candidate that recorded the same first
 * submissions and goes on as this region does takes over: a loop's
 * regions and its last, shorter one both replay. Without one, the first
 * difference, or any other planner call that reads or
 * changes the state mid-region, catches up: the planner state goes back to
 * the region's start, the matched submissions are planned again without
 * emitting (the ops are out already), and planning goes on normally.
 *
 * Futures made inside the region are part of the plan: a task that returns
 * a value, a task that reads such a future and the free of one are
 * recorded and replayed, their chunk ids moved by the difference of the
 * regions' chunk counters. Replaying makes no chunk for them: their owner
 * and layout answer the questions asked (dg_plan_rp_vgeom), the region's end
 * gives the survivors their chunks, and catching up forgets them and plans
 * them again with chunks.
 *
 * Not recorded (planned normally every time): regions with a task that
 * reads a future made before the region, explicit dependencies inside the
 * region, chunk creation, frees of chunks made before the region or syncs
 * inside the region, any taint, more than prm.replay_tasks tasks. */
#ifndef DG_PLAN_REPLAY_H
#define DG_PLAN_REPLAY_H

#include "core/plan/planner_internal.h"

/* Allocates the recordings when prm.replay_tasks > 0 (p->rp stays NULL otherwise). */
dagger_status_t dg_plan_rp_create(dg_plan_t *p);
void dg_plan_rp_destroy(dg_plan_t *p);

/* After dg_plan_region_begin set up the region. */
void dg_plan_rp_region_begin(dg_plan_t *p);

/* A submission in a region, before normal planning: 1 when it was replayed
 * (*out filled), 0 when it must be planned normally (the region was caught
 * up if it was a candidate), -1 when catching up failed (p->mem.failed set). */
int dg_plan_rp_submit(dg_plan_t *p, const dg_plan_codelet_t *cl, const dg_plan_task_desc_t *t,
                      dg_plan_submitted_t *out);

/* Recording around normal planning of one task: before (after validation
 * and placement, p->acc filled) and after (info as on_task gets it; the
 * launch's seq on this rank or 0). */
void dg_plan_rp_task_begin(dg_plan_t *p, const dg_plan_codelet_t *cl,
                           const dg_plan_task_desc_t *t);
void dg_plan_rp_task_end(dg_plan_t *p, const dg_plan_task_info_t *info, uint64_t launch_seq);

/* Every emitted op (dg_plan_emit). */
void dg_plan_rp_op(dg_plan_t *p, const dg_plan_op_t *op);

/* Region end: 1 when the whole region was replayed and its end emitted and
 * applied (the caller only closes the region), 0 when the caller ends it
 * normally, -1 when catching up failed. dg_plan_rp_region_ended runs after a
 * normal end and completes a recording. */
int dg_plan_rp_region_end(dg_plan_t *p);
void dg_plan_rp_region_ended(dg_plan_t *p);

/* dg_plan_chunk_free of a live chunk: 1 when the region replayed the free
 * (the chunk is gone), 0 when the caller frees it (then calls
 * dg_plan_rp_free_end; a recording keeps the free when the chunk is a
 * future made in the region, else stops), -1 when catching up failed. */
int dg_plan_rp_free(dg_plan_t *p, uint64_t id);
void dg_plan_rp_free_end(dg_plan_t *p);

/* Any other planner call inside a region: catches a candidate up (returns
 * -1 if that failed); with `changes` (chunk create, free, sync, taint) the
 * region is not recorded either. */
int dg_plan_rp_settle(dg_plan_t *p, int changes);

/* The layout (and *owner, when not NULL) of live future id when it is one a
 * replayed task made and nothing asked for its chunk yet (replaying makes
 * none: the region's end gives the survivors theirs); NULL otherwise. Only
 * while a region is being replayed; a catch-up plans them again with chunks. */
const dg_plan_geom_t *dg_plan_rp_vgeom(const dg_plan_t *p, uint64_t id, int32_t *owner);

/* Since the planner began: tasks replayed, replayed tasks planned again, and
 * recordings that took over from the one a region chose first. */
void dg_plan_rp_counts(const dg_plan_t *p, uint64_t *replayed, uint64_t *replanned,
                       uint64_t *switches);

#endif
