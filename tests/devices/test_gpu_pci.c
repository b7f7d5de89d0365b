/* The PCI locality of a GPU (devices/gpu/gpu_pci.c): bus ids as the CUDA and
 * HIP runtimes print them, and the NUMA node and cores that sysfs gives for
 * a real PCI function of this machine. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "devices/gpu/gpu_pci.h"

Test(gpu_pci, bus_ids_take_sysfs_form)
{
    char out[24];
    cr_assert_eq(dg_gpu_pci_normalize("00000000:3B:00.0", out, sizeof out), 0);
    cr_assert_str_eq(out, "0000:3b:00.0");
    cr_assert_eq(dg_gpu_pci_normalize("0001:c1:1f.7", out, sizeof out), 0);
    cr_assert_str_eq(out, "0001:c1:1f.7");
    const char *bad[] = {"", "3b:00.0", "0000:3b:00", "0000:3b:00.0x", "0000:3b:20.0",
                         "0000:3b:00.8", "zz:3b:00.0", "10000:00:00.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(dg_gpu_pci_normalize(bad[i], out, sizeof out), -1, "'%s'", bad[i]);
        cr_assert_str_eq(out, "");
    }
    cr_assert_eq(dg_gpu_pci_normalize(NULL, out, sizeof out), -1);
    cr_assert_eq(dg_gpu_pci_normalize("0000:3b:00.0", out, 12), -1, "no room for the NUL");
}

/* The first PCI function sysfs lists, and its two files read by hand. */
static int first_pci_function(char *id, size_t cap, char *numa, char *cpus)
{
    DIR *d = opendir("/sys/bus/pci/devices");
    struct dirent *de;
    int found = -1;
    while (d && found && (de = readdir(d)))
        if (de->d_name[0] != '.') {
            snprintf(id, cap, "%.*s", (int)cap - 1, de->d_name);
            found = 0;
        }
    if (d)
        closedir(d);
    char path[160];
    const char *files[] = {"numa_node", "local_cpulist"};
    char *dst[] = {numa, cpus};
    for (int i = 0; i < 2 && found == 0; i++) {
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", id, files[i]);
        FILE *f = fopen(path, "r");
        dst[i][0] = '\0';
        if (f && fgets(dst[i], 64, f))
            dst[i][strcspn(dst[i], "\n")] = '\0';
        if (f)
            fclose(f);
    }
    return found;
}

Test(gpu_pci, locality_is_what_sysfs_says)
{
    char id[64], numa[64], cpus[64], got[64];
    int32_t node;
    if (first_pci_function(id, sizeof id, numa, cpus) != 0)
        cr_skip_test("this machine shows no PCI functions in /sys/bus/pci/devices");
    dg_gpu_pci_locality(id, &node, got, sizeof got);
    int want = -1;
    sscanf(numa, "%d", &want);
    cr_assert_eq(node, want < 0 ? -1 : want, "%s: numa_node '%s'", id, numa);
    cr_assert_str_eq(got, cpus, "%s", id);
}

Test(gpu_pci, unknown_functions_have_no_locality)
{
    char cpus[64] = "x";
    int32_t node = 5;
    dg_gpu_pci_locality("ffff:ff:1f.7", &node, cpus, sizeof cpus);
    cr_assert_eq(node, -1);
    cr_assert_str_eq(cpus, "");
    dg_gpu_pci_locality("../../../etc", &node, cpus, sizeof cpus);
    cr_assert_eq(node, -1);
    cr_assert_str_eq(cpus, "");
}
