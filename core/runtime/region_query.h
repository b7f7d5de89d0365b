/* What the libraries on top of the runtime (arrays, linear algebra) ask of
 * an open region beyond the public API. */
#ifndef DG_RUNTIME_REGION_QUERY_H
#define DG_RUNTIME_REGION_QUERY_H

#include <dagger.h>

/* 1 when r's scope limits where tasks may run by rank (it lists ranks or
 * processors, or is a union): a task scope naming one rank may then admit
 * no processor, so the libraries leave placement to owner-computes there. */
int dg_region_limits_ranks(const dagger_region_t *r);

#endif
