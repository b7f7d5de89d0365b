/* Public scopes (dagger_scope_t) to the planner's (dg_plan_scope_t): lists
 * copied into a caller's buffer, no allocation; and their uniformity hash. */
#ifndef DG_API_SCOPE_H
#define DG_API_SCOPE_H

#include <dagger/region.h>

#include "core/plan/plan.h"

#define DG_SCOPE_WORDS 1024 /* ranks and processors listed, all parts together */

typedef struct dg_scope_buf {
    dg_plan_scope_t s;
    dg_plan_scope_t parts[DG_PLAN_MAX_PARTS];
    uint32_t words[DG_SCOPE_WORDS];
} dg_scope_buf_t;

/* Fills b->s from in (NULL: b->s is the empty scope). DAGGER_ERR_INVALID_ARG
 * (naming fn) for negative counts, NULL lists or too many entries; what the
 * entries name is checked by the planner (DAGGER_ERR_SCOPE). */
dagger_status_t dg_scope_convert(const dagger_scope_t *in, dg_scope_buf_t *b, const char *fn);

/* Mixes a converted scope, with its parts, into h. */
uint64_t dg_scope_hash(uint64_t h, const dg_plan_scope_t *s);

#endif
