/* Small futures carried by a region's end agreement (tasks.h, "carry").
 *
 * A region's end agrees on the first failure with one allreduce (MIN of a
 * task id). When few small futures made in the region are still alive at
 * its end (at most DG_CARRY_MAX of them, DG_CARRY_WORDS words in all), the
 * same allreduce carries their values: each future's owner puts its bytes
 * in the future's words, every other rank all ones, and the minimum is the
 * owner's bytes. A dagger_fetch of such a future before the next region
 * then needs no broadcast (on 4 ranks x 1 thread on two cores a broadcast
 * cost about a quarter of the seeds' tiny-tree round: docs/benchmarks.md).
 * Which futures, and so the allreduce's length, depends only on what every
 * rank submitted and freed: the same on every rank. Future ids grow with
 * every chunk made, so the futures a region made and did not free are the
 * live ones between the first and the last id it made. The values are kept
 * only when the region ended without a failure, and only until the next
 * region begins (a later task may write the future) or the future is
 * freed. */
#include <string.h>

#include "core/runtime/tasks.h"

void dg_carry_region_begin(dg_tasks_t *t)
{
    dg_carry_t *c = &t->carry;
    c->first = c->last = 0;
    c->alive = 0;
    c->n = 0;
    c->valid = 0;
}

void dg_carry_made(dg_tasks_t *t, uint64_t id)
{
    dg_carry_t *c = &t->carry;
    if (!c->first)
        c->first = id;
    c->last = id;
    c->alive++;
}

void dg_carry_freed(dg_tasks_t *t, uint64_t id)
{
    dg_carry_t *c = &t->carry;
    if (t->region && c->first && id >= c->first && c->alive)
        c->alive--;
    for (size_t i = 0; i < c->n; i++)
        if (c->id[i] == id)
            c->id[i] = 0; /* its value is not served any more */
}

size_t dg_carry_plan(dg_tasks_t *t)
{
    dg_carry_t *c = &t->carry;
    c->n = 0;
    c->valid = 0;
    if (!c->alive || c->alive > DG_CARRY_MAX)
        return 0;
    /* From the newest id down: what a region leaves alive is mostly what it
     * made last (a reduction's root), and the scan stops when it has found
     * them all. A freed id costs a miss in the futures' table, which probes
     * to the end of its run of tombs (sequential ids sit side by side): 127
     * of them from the oldest id up were about 84k instructions, a tenth of
     * a tiny-tree region on one rank. */
    size_t words = 0;
    for (uint64_t id = c->last; id && id >= c->first && c->n < c->alive; id--) {
        int owner;
        size_t size;
        if (!dg_tasks_future_find(t, id, &owner, &size))
            continue; /* another chunk, or freed */
        size_t w = (size + 7) / 8;
        if (!size || words + w > DG_CARRY_WORDS) {
            c->n = 0; /* too large (or empty): none */
            return 0;
        }
        c->id[c->n] = id;
        c->size[c->n] = size;
        c->owner[c->n] = owner;
        c->word0[c->n] = words;
        c->n++;
        words += w;
    }
    return words;
}

void dg_carry_fill(dg_tasks_t *t, uint64_t *words, size_t nwords)
{
    dg_carry_t *c = &t->carry;
    memset(words, 0xff, nwords * sizeof(*words));
    for (size_t i = 0; i < c->n; i++) {
        if (c->owner[i] != t->rank)
            continue;
        unsigned char bytes[DG_CARRY_WORDS * 8];
        memset(bytes, 0, sizeof(bytes));
        const unsigned char *h = dg_tasks_home_bytes(t, c->id[i]);
        if (h) /* as dagger_fetch: no home storage reads as zeros */
            memcpy(bytes, h, c->size[i]);
        memcpy(words + c->word0[i], bytes, (c->size[i] + 7) / 8 * 8);
    }
}

void dg_carry_agreed(dg_tasks_t *t, const uint64_t *words, int ok)
{
    dg_carry_t *c = &t->carry;
    c->valid = ok && c->n > 0;
    for (size_t i = 0; c->valid && i < c->n; i++)
        memcpy(c->value[i], words + c->word0[i], c->size[i]);
}

int dg_carry_fetch(dg_tasks_t *t, uint64_t id, void *buf, size_t size)
{
    const dg_carry_t *c = &t->carry;
    if (!c->valid || t->region || !id)
        return 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->id[i] == id && c->size[i] == size) {
            memcpy(buf, c->value[i], size);
            return 1;
        }
    return 0;
}
