/* The topology's load (actors/topology.c): hwloc's XML, OpenCL and GL
 * plugins stay unloaded unless the program set HWLOC_PLUGINS_BLACKLIST
 * itself, the variable is gone again afterwards, and a value the program set
 * is left as it was. Criterion runs each test in a process of its own, so
 * each sees hwloc's first topology of its process (when hwloc reads the
 * variable). */
#include <criterion/criterion.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actors/topology.h"

#ifndef DG_HWLOC_PLUGIN_DIR
#define DG_HWLOC_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/hwloc"
#endif

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    return info->dlpi_name && strstr(info->dlpi_name, data) ? 1 : 0;
}

/* Whether a shared object whose path contains name is loaded. */
static int loaded(const char *name)
{
    return dl_iterate_phdr(find_cb, (void *)name);
}

/* Whether hwloc has its XML plugin installed here (libhwloc-plugins). */
static int xml_plugin_installed(void)
{
    return access(DG_HWLOC_PLUGIN_DIR "/hwloc_xml_libxml.so", R_OK) == 0;
}

Test(topology, skips_unused_plugins_and_restores_the_environment)
{
    unsetenv("HWLOC_PLUGINS_BLACKLIST");
    dg_topo_t t;
    cr_assert_eq(dg_topo_init(&t, 0, 1), DAGGER_OK);
    cr_assert_geq(t.ncores, 1);
    cr_assert_null(getenv("HWLOC_PLUGINS_BLACKLIST"), "the variable is removed after the load");
    cr_assert_not(loaded("hwloc_xml_libxml"), "the XML plugin was loaded");
    cr_assert_not(loaded("hwloc_opencl"), "the OpenCL plugin was loaded");
    cr_assert_not(loaded("hwloc_gl"), "the GL plugin was loaded");
    dg_topo_cleanup(&t);
}

Test(topology, a_program_setting_keeps_its_plugins)
{
    setenv("HWLOC_PLUGINS_BLACKLIST", "", 1); /* empty: load every plugin */
    dg_topo_t t;
    cr_assert_eq(dg_topo_init(&t, 0, 1), DAGGER_OK);
    const char *v = getenv("HWLOC_PLUGINS_BLACKLIST");
    cr_assert(v && !strcmp(v, ""), "the program's value is left as it was");
    if (xml_plugin_installed())
        cr_assert(loaded("hwloc_xml_libxml"), "hwloc did not load its XML plugin "
                  "although the program asked for every plugin");
    else
        cr_log_warn("no hwloc XML plugin in " DG_HWLOC_PLUGIN_DIR ": its load not checked");
    dg_topo_cleanup(&t);
}

Test(topology, a_program_list_is_used_as_it_is)
{
    setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci", 1);
    dg_topo_t t;
    cr_assert_eq(dg_topo_init(&t, 0, 1), DAGGER_OK);
    const char *v = getenv("HWLOC_PLUGINS_BLACKLIST");
    cr_assert(v && !strcmp(v, "hwloc_pci"));
    cr_assert_not(loaded("hwloc_pci"), "the program's own list was not used");
    dg_topo_cleanup(&t);
}
