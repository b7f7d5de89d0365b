/* Asymmetric fences: a hot path that runs often on one thread pays only a
 * compiler barrier (dg_fence_light), and the rare thread that must be sure
 * it sees that thread's stores (and that thread sees its own) pays a heavy
 * fence (dg_fence_heavy: membarrier(2), which runs a full barrier on every
 * running thread of the process). Together they order like two full fences
 * (the store-then-load of Dekker's protocol). Where the kernel lacks
 * membarrier's expedited command (or a sandbox refuses it), the light fence
 * is a full fence and the heavy one is too. */
#ifndef DG_ASYM_FENCE_H
#define DG_ASYM_FENCE_H

#include <stdatomic.h>

/* 1 when membarrier's expedited private command is usable (asked once). */
int dg_fence_asym_ok(void);

/* Starts asking in the background, so that a later dg_fence_asym_ok waits
 * less (dagger_init calls it first). */
void dg_fence_asym_ask_early(void);

static inline void dg_fence_light(int asym)
{
    if (asym)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

void dg_fence_heavy(int asym);

#endif
