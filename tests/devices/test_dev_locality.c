/* Device locality from PCI bus ids (devices/dev_locality.c), on whatever
 * PCI devices this machine has: a bus id hwloc knows gets the cores near
 * it; one it does not know stays unknown. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "devices/discover.h"

/* The first PCI device in sysfs, or 0 when there is none (a container). */
static int some_bus_id(char *out, size_t cap)
{
    DIR *d = opendir("/sys/bus/pci/devices");
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(out, cap, "%.63s", e->d_name);
            found = 1;
        }
    closedir(d);
    return found;
}

Test(dev_locality, a_known_bus_id_gets_its_cores_and_an_unknown_one_stays_unknown)
{
    char id[64];
    if (!some_bus_id(id, sizeof(id)))
        cr_skip_test("no PCI devices visible here");
    const char *ids[3] = {id, "ffff:ff:1f.7", NULL};
    int32_t numa[3] = {-1, -1, -1};
    char cpus[3][64] = {"", "", ""};
    int n = dg_dev_locality_n(ids, 3, numa, cpus);
    cr_assert_eq(n, 1, "%s (in sysfs) is found, the made-up id is not", id);
    cr_assert_neq(cpus[0][0], '\0', "cores near %s", id);
    cr_assert_str_eq(cpus[1], "");
    cr_assert_eq(numa[1], -1);
}

Test(dev_locality, the_table_keeps_what_backends_reported)
{
    dg_dev_table_t t = {.n = 1};
    snprintf(t.dev[0].info.pci_bus_id, sizeof(t.dev[0].info.pci_bus_id), "ffff:ff:1f.7");
    t.dev[0].info.numa_node = 3;
    snprintf(t.dev[0].info.cpus, sizeof(t.dev[0].info.cpus), "4-7");
    dg_dev_locality(&t);
    cr_assert_eq(t.dev[0].info.numa_node, 3);
    cr_assert_str_eq(t.dev[0].info.cpus, "4-7");
}
