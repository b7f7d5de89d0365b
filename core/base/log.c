/* Logging: one line per call, written with a single write so lines of
 * different threads and ranks do not interleave. */
#include "core/base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int dg_log_rank = -1;
static int dg_log_level = DG_LOG_WARN;

void dg_log_set_rank(int rank, int level)
{
    dg_log_rank = rank;
    dg_log_level = level;
}

void dg_log(int level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    if (level > dg_log_level)
        return;
    char line[2048];
    int n;
    if (dg_log_rank >= 0)
        n = snprintf(line, sizeof(line), "dagger[rank %d] %s: ", dg_log_rank, names[level]);
    else
        n = snprintf(line, sizeof(line), "dagger %s: ", names[level]);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t rc = write(STDERR_FILENO, line, (size_t)n);
    (void)rc;
}
