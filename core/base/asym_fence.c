/* Asymmetric fences (see asym_fence.h). */
#include "core/base/asym_fence.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

/* The process's threads now, from /proc/self/stat (its 20th field); 0 when
 * it cannot be read. */
static long threads_now(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    for (int field = 2; p && field < 20; field++)
        p = strchr(p + 1, ' ');
    return p ? strtol(p + 1, NULL, 10) : 0;
}

/* Registration is quick while the process has one thread (3 us here): the
 * kernel then skips the RCU grace period it otherwise waits for, 9-42 ms
 * measured here, asleep. So a process that is still single-threaded asks
 * at once. One that already has threads (a user's own, or OpenBLAS's pool)
 * asks on a thread of its own, so that the wait overlaps with the rest of
 * start-up. Detached: dg_fence_asym_ok waits in pthread_once for its
 * answer; without a thread, the first caller asks itself. */
void dg_fence_asym_ask_early(void)
{
    if (threads_now() == 1) {
        (void)dg_fence_asym_ok();
        return;
    }
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
