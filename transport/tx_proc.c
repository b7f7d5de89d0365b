/* Process liveness from /proc (see tx_proc.h). No stdio, no malloc: this
 * runs inside a signal handler too. */
#include "transport/tx_proc.h"

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void dg_str_append(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(buf);
    while (*s && n + 1 < cap)
        buf[n++] = *s++;
    buf[n] = '\0';
}

void dg_str_append_int(char *buf, size_t cap, long long v)
{
    char digits[24];
    int i = (int)sizeof(digits) - 1;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    digits[i] = '\0';
    do {
        digits[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        digits[--i] = '-';
    dg_str_append(buf, cap, &digits[i]);
}

/* Reads /proc/<pid>/stat into buf; returns its length or -1. */
static ssize_t read_stat(int32_t pid, char *buf, size_t cap)
{
    char path[48] = "/proc/";
    dg_str_append_int(path, sizeof(path), pid);
    dg_str_append(path, sizeof(path), "/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* Field `field` (1-based, as in proc(5)) of a stat line, as text; the
 * command name (field 2) may hold spaces, so count from its closing ')'. */
static const char *stat_field(const char *stat, int field)
{
    const char *p = strrchr(stat, ')');
    if (!p || field < 3)
        return NULL;
    p++;
    for (int f = 3; f <= field; f++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return NULL;
        if (f == field)
            return p;
        while (*p && *p != ' ')
            p++;
    }
    return NULL;
}

static unsigned long long parse_ull(const char *p)
{
    unsigned long long v = 0;
    while (p && *p >= '0' && *p <= '9')
        v = v * 10 + (unsigned long long)(*p++ - '0');
    return v;
}

int dg_proc_of(int32_t pid, dg_proc_id_t *out, int32_t *ppid)
{
    char stat[1024];
    out->pid = pid;
    out->starttime = 0;
    if (read_stat(pid, stat, sizeof(stat)) < 0)
        return -1;
    out->starttime = parse_ull(stat_field(stat, 22));
    if (ppid)
        *ppid = (int32_t)parse_ull(stat_field(stat, 4));
    return 0;
}

int dg_proc_self(dg_proc_id_t *out)
{
    return dg_proc_of((int32_t)getpid(), out, NULL);
}

dg_proc_state_t dg_proc_probe(const dg_proc_id_t *id, int *wstatus)
{
    char stat[1024];
    if (read_stat(id->pid, stat, sizeof(stat)) < 0)
        return DG_PROC_GONE;
    if (id->starttime && parse_ull(stat_field(stat, 22)) != id->starttime)
        return DG_PROC_GONE;
    const char *state = stat_field(stat, 3);
    if (state && (*state == 'Z' || *state == 'X')) {
        if (wstatus)
            *wstatus = (int)parse_ull(stat_field(stat, 52));
        return DG_PROC_EXITED;
    }
    return DG_PROC_ALIVE;
}

void dg_proc_describe(char *buf, size_t cap, dg_proc_state_t state, int wstatus)
{
    if (state == DG_PROC_ALIVE) {
        dg_str_append(buf, cap, "is running");
    } else if (state == DG_PROC_GONE) {
        dg_str_append(buf, cap, "is gone");
    } else if (WIFSIGNALED(wstatus)) {
        dg_str_append(buf, cap, "was killed by signal ");
        dg_str_append_int(buf, cap, WTERMSIG(wstatus));
    } else {
        dg_str_append(buf, cap, "exited with status ");
        dg_str_append_int(buf, cap, WEXITSTATUS(wstatus));
    }
}
