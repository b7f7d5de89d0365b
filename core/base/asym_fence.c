/* Asymmetric fences (see asym_fence.h). */
#include "core/base/asym_fence.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static int asym_ok;
static pthread_once_t asym_once = PTHREAD_ONCE_INIT;

static void ask_kernel(void)
{
    /* Registration is once per process and needed before the command. */
    asym_ok = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
              syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

int dg_fence_asym_ok(void)
{
    pthread_once(&asym_once, ask_kernel); /* waits for an asker already in it */
    return asym_ok;
}

static void *ask_in_background(void *arg)
{
    (void)arg;
    dg_fence_asym_ok();
    return NULL;
}

/* In a process that already has threads (OpenBLAS starts its pool when it
 * is loaded), registration waits for an RCU grace period: 6-16 ms measured
 * here, asleep. Asked on a thread of its own, that wait overlaps with the
 * rest of start-up. Detached: dg_fence_asym_ok waits in pthread_once for
 * its answer; without a thread, the first caller asks itself. */
void dg_fence_asym_ask_early(void)
{
    pthread_t t;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr))
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    (void)pthread_create(&t, &attr, ask_in_background, NULL);
    pthread_attr_destroy(&attr);
}

void dg_fence_heavy(int asym)
{
    if (!asym || syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}
