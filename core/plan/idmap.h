/* A hash map from non-zero 64-bit ids to pointers (chunk and codelet
 * tables): open addressing, linear probing, deletion by backward shift so
 * that tables with heavy create/free churn stay tombstone-free. */
#ifndef DG_PLAN_IDMAP_H
#define DG_PLAN_IDMAP_H

#include <stdint.h>

#include "core/plan/mem.h"

typedef struct dg_plan_idmap {
    uint64_t *keys; /* 0 = empty */
    void **vals;
    uint32_t cap;   /* power of two */
    uint32_t n;
} dg_plan_idmap_t;

void dg_plan_idmap_init(dg_plan_idmap_t *m);
void *dg_plan_idmap_get(const dg_plan_idmap_t *m, uint64_t key);
/* 0 on success, -1 when out of memory. key must not be present. */
int dg_plan_idmap_put(dg_plan_mem_t *mem, dg_plan_idmap_t *m, uint64_t key, void *val);
void dg_plan_idmap_del(dg_plan_idmap_t *m, uint64_t key);

#endif
