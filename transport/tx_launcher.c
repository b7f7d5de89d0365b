/* Which process is this rank's launcher (see tx_proc.h): the nearest
 * ancestor that is not a process of this rank. A launcher puts PMIX_NAMESPACE
 * and PMIX_RANK in the environment of what it starts, and everything started
 * from there (a wrapper script, a test runner's forked child) inherits them,
 * so the first ancestor whose environment lacks our two values (or cannot be
 * read: a daemon of another user) is the one that launched us: mpirun, its
 * orted, prted, slurmstepd. Not signal-safe (it allocates): start-up only. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "transport/tx_proc.h"

#define DG_ENVIRON_MAX (1 << 20)
#define DG_ANCESTORS_MAX 16

/* The file's first DG_ENVIRON_MAX bytes (NUL-terminated), or NULL. */
static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 16384, n = 0;
    char *buf = dg_malloc(cap + 1);
    for (ssize_t got = 1; buf && got > 0 && n < DG_ENVIRON_MAX;) {
        if (n == cap) {
            char *bigger = dg_realloc(buf, 2 * cap + 1);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        got = read(fd, buf + n, cap - n);
        n += got > 0 ? (size_t)got : 0;
    }
    close(fd);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* Whether /proc/<pid>/environ holds both entries. */
static int environ_has(int32_t pid, const char *a, const char *b)
{
    char path[48];
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    size_t len = 0;
    char *env = read_file(path, &len);
    int found = 0;
    for (size_t at = 0; env && at < len; at += strlen(env + at) + 1)
        found |= (strcmp(env + at, a) == 0) | (strcmp(env + at, b) == 0) << 1;
    free(env);
    return found == 3;
}

static void command_name(int32_t pid, char *name, size_t cap)
{
    char path[48];
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    size_t len = 0;
    char *comm = read_file(path, &len);
    snprintf(name, cap, "%.*s", comm ? (int)strcspn(comm, "\n") : 1, comm ? comm : "?");
    free(comm);
}

int dg_proc_launcher(dg_proc_id_t *out, char *name, size_t cap)
{
    const char *ns = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
    if (!ns || !rank)
        return -1;
    char want_ns[512], want_rank[64];
    snprintf(want_ns, sizeof(want_ns), "PMIX_NAMESPACE=%s", ns);
    snprintf(want_rank, sizeof(want_rank), "PMIX_RANK=%s", rank);
    int32_t pid = (int32_t)getppid();
    for (int depth = 0; depth < DG_ANCESTORS_MAX && pid > 1; depth++) {
        int32_t ppid = -1;
        if (dg_proc_of(pid, out, &ppid) < 0)
            return -1;
        if (!environ_has(pid, want_ns, want_rank)) {
            command_name(pid, name, cap);
            return 0;
        }
        pid = ppid;
    }
    return -1;
}
