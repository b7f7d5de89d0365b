/* The test device kind's IPC calls (device.h): what CUDA IPC handles give
 * ranks of one node, with host memory. An exportable block is a memfd
 * mapped shared; its handle names the process, the descriptor and the
 * block's generation, and another process of the node opens it through
 * /proc/<pid>/fd/<fd> and maps the same pages. As with CUDA, a process
 * cannot open its own handles. */
#include "devices/testdev/testdev.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "transport/wire.h"

#define TDI_MAGIC 0x50494454u /* "TDIP" */
#define TDI_NAME "dagger-testdev-ipc-"

typedef struct tdi_block {
    struct tdi_block *next;
    void *ptr;
    size_t bytes;
    int fd;
    uint64_t gen;
} tdi_block_t;

static pthread_mutex_t tdi_lock = PTHREAD_MUTEX_INITIALIZER;
static tdi_block_t *tdi_mine;   /* exportable blocks of this process */
static tdi_block_t *tdi_opened; /* other processes' blocks mapped here (fd unused) */
static uint64_t tdi_gen;
static _Atomic long tdi_open_countdown; /* dg_testdev_ipc_fail_open */

void dg_testdev_ipc_fail_open(long k)
{
    atomic_store(&tdi_open_countdown, k > 0 ? k : 0);
}

static size_t rounded(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes ? bytes + page - 1 : page) / page * page;
}

dagger_status_t dg_testdev_ipc_alloc(int dev, size_t bytes, void **ptr)
{
    *ptr = NULL;
    pthread_mutex_lock(&tdi_lock);
    uint64_t gen = ++tdi_gen;
    pthread_mutex_unlock(&tdi_lock);
    char name[64];
    snprintf(name, sizeof(name), TDI_NAME "%llu", (unsigned long long)gen);
    size_t len = rounded(bytes);
    int fd = memfd_create(name, MFD_CLOEXEC);
    void *p = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)len) == 0)
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    tdi_block_t *b = p != MAP_FAILED ? dg_malloc(sizeof(*b)) : NULL;
    if (!b) {
        if (p != MAP_FAILED)
            munmap(p, len);
        if (fd >= 0)
            close(fd);
        return dg_error(DAGGER_ERR_NO_MEMORY, "test device %d: cannot allocate %zu bytes of "
                        "exportable memory (memfd)", dev, bytes);
    }
    *b = (tdi_block_t){.ptr = p, .bytes = len, .fd = fd, .gen = gen};
    pthread_mutex_lock(&tdi_lock);
    b->next = tdi_mine;
    tdi_mine = b;
    pthread_mutex_unlock(&tdi_lock);
    *ptr = p;
    return DAGGER_OK;
}

/* Unlinks and returns the block at ptr from *list, or NULL. Lock held. */
static tdi_block_t *take(tdi_block_t **list, const void *ptr)
{
    for (tdi_block_t **pp = list; *pp; pp = &(*pp)->next)
        if ((*pp)->ptr == ptr) {
            tdi_block_t *b = *pp;
            *pp = b->next;
            return b;
        }
    return NULL;
}

void dg_testdev_ipc_free(int dev, void *ptr)
{
    (void)dev;
    pthread_mutex_lock(&tdi_lock);
    tdi_block_t *b = take(&tdi_mine, ptr);
    pthread_mutex_unlock(&tdi_lock);
    if (!b)
        return;
    munmap(b->ptr, b->bytes);
    close(b->fd);
    free(b);
}

/* handle: u32 magic, i32 pid, i32 fd, u32 device, u64 bytes, u64 generation. */
dagger_status_t dg_testdev_ipc_export(int dev, void *ptr, void *handle)
{
    pthread_mutex_lock(&tdi_lock);
    const tdi_block_t *b = tdi_mine;
    while (b && b->ptr != ptr)
        b = b->next;
    tdi_block_t copy = b ? *b : (tdi_block_t){0};
    pthread_mutex_unlock(&tdi_lock);
    if (!b)
        return dg_error(DAGGER_ERR_INVALID_ARG, "test device %d: %p is not a block of "
                        "exportable memory (ipc_alloc)", dev, ptr);
    dg_wire_cursor_t c = dg_wire_cursor(handle, DG_TESTDEV_IPC_HANDLE);
    dg_wire_put_u32(&c, TDI_MAGIC);
    dg_wire_put_u32(&c, (uint32_t)getpid());
    dg_wire_put_u32(&c, (uint32_t)copy.fd);
    dg_wire_put_u32(&c, (uint32_t)dev);
    dg_wire_put_u64(&c, copy.bytes);
    dg_wire_put_u64(&c, copy.gen);
    return DAGGER_OK;
}

dagger_status_t dg_testdev_ipc_open(int dev, const void *handle, void **ptr)
{
    *ptr = NULL;
    dg_wire_cursor_t c = dg_wire_cursor(handle, DG_TESTDEV_IPC_HANDLE);
    uint32_t magic = dg_wire_get_u32(&c);
    int pid = (int)dg_wire_get_u32(&c), fd = (int)dg_wire_get_u32(&c);
    uint32_t owner = dg_wire_get_u32(&c);
    uint64_t bytes = dg_wire_get_u64(&c), gen = dg_wire_get_u64(&c);
    if (magic != TDI_MAGIC)
        return dg_error(DAGGER_ERR_INVALID_ARG, "test device %d: not a test device IPC handle",
                        dev);
    long k = atomic_load(&tdi_open_countdown);
    while (k > 0 && !atomic_compare_exchange_weak(&tdi_open_countdown, &k, k - 1))
        ;
    if (k == 1)
        return dg_error(DAGGER_ERR_SYSTEM, "test device %d: ipc_open refused (fault injected by "
                        "dg_testdev_ipc_fail_open)", dev);
    if (!dg_testdev_peers_on() && owner != (uint32_t)dev)
        return dg_error(DAGGER_ERR_UNSUPPORTED, "test device %d: no peer access to test device "
                        "%u (dg_testdev_peers(0))", dev, owner);
    if (pid == (int)getpid())
        return dg_error(DAGGER_ERR_INVALID_ARG, "test device %d: the IPC handle is this "
                        "process's own (open it in another process)", dev);
    /* The descriptor must still be that block: its name carries the generation. */
    char path[64], link[128], want[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    snprintf(want, sizeof(want), "/memfd:" TDI_NAME "%llu ", (unsigned long long)gen);
    ssize_t n = readlink(path, link, sizeof(link) - 1);
    link[n > 0 ? n : 0] = '\0';
    if (n <= 0 || strncmp(link, want, strlen(want)) != 0)
        return dg_error(DAGGER_ERR_INVALID_ARG, "test device %d: IPC handle of block %llu of "
                        "process %d: %s is '%s', not that block (freed, or the process ended)",
                        dev, (unsigned long long)gen, pid, path, link);
    int f = open(path, O_RDWR | O_CLOEXEC);
    struct stat sb;
    void *p = MAP_FAILED;
    if (f >= 0 && fstat(f, &sb) == 0 && (uint64_t)sb.st_size == bytes)
        p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    if (f >= 0)
        close(f);
    tdi_block_t *b = p != MAP_FAILED ? dg_malloc(sizeof(*b)) : NULL;
    if (!b) {
        if (p != MAP_FAILED)
            munmap(p, (size_t)bytes);
        return dg_error(DAGGER_ERR_SYSTEM, "test device %d: cannot map IPC handle %s (%llu "
                        "bytes)", dev, path, (unsigned long long)bytes);
    }
    *b = (tdi_block_t){.ptr = p, .bytes = (size_t)bytes, .fd = -1, .gen = gen};
    pthread_mutex_lock(&tdi_lock);
    b->next = tdi_opened;
    tdi_opened = b;
    pthread_mutex_unlock(&tdi_lock);
    *ptr = p;
    return DAGGER_OK;
}

void dg_testdev_ipc_close(int dev, void *ptr)
{
    (void)dev;
    pthread_mutex_lock(&tdi_lock);
    tdi_block_t *b = take(&tdi_opened, ptr);
    pthread_mutex_unlock(&tdi_lock);
    if (!b)
        return;
    munmap(b->ptr, b->bytes);
    free(b);
}
