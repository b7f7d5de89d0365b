/* Asymmetric fences (see asym_fence.h). */
#include "core/asym_fence.h"

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
    pthread_once(&asym_once, ask_kernel);
    return asym_ok;
}

void dg_fence_heavy(int asym)
{
    if (!asym || syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}
