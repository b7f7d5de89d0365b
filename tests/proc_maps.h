/* Whether a library is mapped into this process: a line of /proc/self/maps
 * names it. For the tests of the libraries Dagger-C loads at run time
 * instead of linking (core/base/dl_table.h): they are not mapped until
 * first used. Criterion tests only (a failed open fails the test). */
#ifndef DG_TESTS_PROC_MAPS_H
#define DG_TESTS_PROC_MAPS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static inline int proc_maps_has(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert(f, "cannot read /proc/self/maps");
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

#endif
