/* Whether a signal is set in one of the masks of a /proc status file
 * ("SigBlk", "SigCgt", ...): /proc/self/status for the process,
 * /proc/self/task/TID/status for one thread. 0 when the file or the field
 * cannot be read. */
#ifndef DG_TEST_PROC_SIGMASK_H
#define DG_TEST_PROC_SIGMASK_H

#include <stdio.h>
#include <string.h>

static inline int dgt_sigmask_has(const char *status_path, const char *field, int sig)
{
    FILE *f = fopen(status_path, "r");
    char line[256];
    size_t n = strlen(field);
    unsigned long long mask = 0;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, field, n) && line[n] == ':' && sscanf(line + n + 1, "%llx", &mask) == 1)
            break;
    if (f)
        fclose(f);
    return (int)((mask >> (sig - 1)) & 1);
}

#endif
