/* Temporary trace directories of the trace tests: made fresh, removed after. */
#ifndef DG_TEST_TRACE_TMPDIR_H
#define DG_TEST_TRACE_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static inline int tmpdir_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes dir and everything in it. */
static inline void tmpdir_remove(const char *dir)
{
    nftw(dir, tmpdir_rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* Makes a new directory /tmp/<prefix>-XXXXXX into buf (64 bytes); NULL on failure. */
static inline char *tmpdir_make(char *buf, const char *prefix)
{
    snprintf(buf, 64, "/tmp/%s-XXXXXX", prefix);
    return mkdtemp(buf);
}

#endif
