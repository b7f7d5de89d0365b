/* Tests that need a launcher (mpirun, srun, prterun) skip where it is
 * missing, so a developer's machine without Slurm or PRRTE still runs the
 * rest; but a launcher named in DGT_REQUIRE_LAUNCHERS (comma-separated,
 * e.g. "mpirun,srun": tools/run-tests sets it under CI) must be there: its
 * absence fails the test instead of skipping it, so CI never goes green on
 * a launcher test that did not run. */
#ifndef DG_TEST_LAUNCHER_NEED_H
#define DG_TEST_LAUNCHER_NEED_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* 1 if DGT_REQUIRE_LAUNCHERS names the launcher (a whole item). */
static inline int dg_launcher_required(const char *name)
{
    const char *req = getenv("DGT_REQUIRE_LAUNCHERS");
    size_t n = strlen(name);
    for (const char *p = req; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p = end ? end + 1 : p + len;
    }
    return 0;
}

/* When present is 0: fails if name is required, else skips, saying why. */
#define DG_NEED_LAUNCHER(name, present, why)                                                     \
    do {                                                                                         \
        if (!(present)) {                                                                        \
            if (dg_launcher_required(name))                                                      \
                cr_assert_fail("%s is required here (DGT_REQUIRE_LAUNCHERS=%s) but missing: %s", \
                         name, getenv("DGT_REQUIRE_LAUNCHERS"), why);                            \
            cr_skip_test("%s", why);                                                             \
        }                                                                                        \
    } while (0)

#endif
