/* The HIP runtime is loaded on first use, not linked
 * (devices/hip/hip_lib.h): a process that links Dagger-C has neither
 * libamdhip64 nor the backend's module mapped after dagger_init and
 * dagger_finalize on a machine without the AMD GPU driver, and discovery
 * says why there are no HIP devices. Forced, the loader finds the module
 * and every routine of its table. No GPU is needed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dagger/runtime.h>

/* The table's fields by name (the redirections would rename them). */
#define DG_HIP_LIB_NO_REDIRECT 1
#include "devices/discover.h"
#include "devices/hip/hip_lib.h"
#include "proc_maps.h"

static void skip_with_driver(void)
{
    if (access("/dev/kfd", F_OK) == 0)
        cr_skip_test("this machine has /dev/kfd: discovery loads the HIP runtime here");
}

Test(hip_lib, not_mapped_after_init_and_finalize_without_a_driver)
{
    skip_with_driver();
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert(!proc_maps_has("libamdhip64"), "libamdhip64 is mapped without an AMD GPU driver");
    cr_assert(!proc_maps_has(DG_HIP_MODULE), "%s is mapped without an AMD GPU driver",
              DG_HIP_MODULE);
}

Test(hip_lib, discovery_says_the_driver_is_missing)
{
    skip_with_driver();
    dg_dev_table_t t;
    cr_assert_eq(dg_dev_discover(0, &t), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert(strstr(t.summary, "HIP: none (no driver: /dev/kfd"), "summary: '%s'", t.summary);
    char why[256] = "";
    cr_assert_eq(dg_hip_lib_load(why, sizeof(why)), -1);
    cr_assert(strstr(why, "/dev/kfd"), "why: '%s'", why);
    cr_assert(!proc_maps_has("libamdhip64"));
}

Test(hip_lib, forced_load_finds_the_module_and_every_routine)
{
    dg_hip_lib_t t;
    memset(&t, 0, sizeof(t));
    char path[4096] = "", why[512] = "";
    cr_assert_eq(dg_hip_lib_open(&t, path, sizeof(path), why, sizeof(why)), 0, "%s", why);
    cr_assert(strstr(path, "/" DG_HIP_MODULE), "module path '%s'", path);
    cr_assert(proc_maps_has(DG_HIP_MODULE) && proc_maps_has("libamdhip64"),
              "%s loaded without libamdhip64?", path);
#define DG_HIP_CHECK(name) cr_assert_not_null(t.name, "%s not found", #name);
    DG_HIP_SYMS(DG_HIP_CHECK)
#undef DG_HIP_CHECK
    /* A call through the table reaches the runtime (no device needed). */
    const char *ok = t.hipGetErrorString(hipSuccess);
    const char *bad = t.hipGetErrorString(hipErrorInvalidValue);
    cr_assert(ok && bad && ok[0] && strcmp(ok, bad), "hipGetErrorString: '%s', '%s'", ok, bad);
    int n = -1;
    hipError_t err = t.hipGetDeviceCount(&n);
    if (access("/dev/kfd", F_OK) != 0)
        cr_assert_neq(err, hipSuccess, "hipGetDeviceCount without a driver: %d devices", n);
}
