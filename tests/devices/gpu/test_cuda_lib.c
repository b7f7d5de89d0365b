/* The CUDA runtime is loaded on first use, not linked
 * (devices/cuda/cuda_lib.h): a process that links Dagger-C has neither
 * libcudart nor the kernels' module mapped after dagger_init and
 * dagger_finalize on a machine without the NVIDIA driver, and discovery
 * says why there are no CUDA devices. Forced, the loader finds the module,
 * every routine of its table and every launcher that the upper layers look
 * up in it. No GPU is needed. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dagger/runtime.h>

/* The tables' fields by name (the redirections would rename them). */
#define DG_CUDA_LIB_NO_REDIRECT 1
#define DG_ST_CUDA_NO_REDIRECT 1
#include "core/array/cuda/st_cuda.h"
#include "devices/cuda/cuda_lib.h"
#include "devices/discover.h"
#ifdef DAGGER_HAVE_CUDA_LINALG
#define DG_LA_CUDA_LIB_NO_REDIRECT 1
#include "core/linalg/cuda/la_cuda_lib.h"
#endif
#include "proc_maps.h"

static int have_driver(void)
{
    return access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0 ||
           access("/dev/dxg", F_OK) == 0;
}

static void skip_with_driver(void)
{
    if (have_driver())
        cr_skip_test("this machine has an NVIDIA driver: discovery loads the CUDA runtime here");
}

Test(cuda_lib, not_mapped_after_init_and_finalize_without_a_driver)
{
    skip_with_driver();
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert(!proc_maps_has("libcudart"), "libcudart is mapped without an NVIDIA driver");
    cr_assert(!proc_maps_has(DG_CUDA_MODULE), "%s is mapped without an NVIDIA driver",
              DG_CUDA_MODULE);
}

Test(cuda_lib, discovery_says_the_driver_is_missing)
{
    skip_with_driver();
    dg_dev_table_t t;
    cr_assert_eq(dg_dev_discover(0, &t), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert(strstr(t.summary, "CUDA: none (no driver: /dev/nvidiactl"), "summary: '%s'",
              t.summary);
    char why[256] = "";
    cr_assert_eq(dg_cuda_lib_load(why, sizeof(why)), -1);
    cr_assert(strstr(why, "/dev/nvidiactl"), "why: '%s'", why);
    cr_assert_null(dg_cuda_lib_module());
    cr_assert(!proc_maps_has("libcudart"));
}

Test(cuda_lib, forced_load_finds_the_module_and_every_routine)
{
    dg_cuda_lib_t t;
    memset(&t, 0, sizeof(t));
    void *h = NULL;
    char path[4096] = "", why[512] = "";
    cr_assert_eq(dg_cuda_lib_open(&t, &h, path, sizeof(path), why, sizeof(why)), 0, "%s", why);
    cr_assert_not_null(h);
    cr_assert(strstr(path, "/" DG_CUDA_MODULE), "module path '%s'", path);
    cr_assert(proc_maps_has(DG_CUDA_MODULE) && proc_maps_has("libcudart"),
              "%s loaded without libcudart?", path);
#define DG_CUDA_CHECK(name) cr_assert_not_null(t.name, "%s not found", #name);
    DG_CUDA_SYMS(DG_CUDA_CHECK)
#undef DG_CUDA_CHECK
    /* the launchers the upper layers find in the module themselves */
#define DG_CUDA_FIND(name) cr_assert_not_null(dlsym(h, #name), "%s not in %s", #name, path);
    DG_ST_CUDA_SYMS(DG_CUDA_FIND)
#ifdef DAGGER_HAVE_CUDA_LINALG
    DG_LA_CUDA_KERNEL_SYMS(DG_CUDA_FIND)
#endif
#undef DG_CUDA_FIND
    /* A call through the table reaches the runtime (no device needed). */
    const char *ok = t.cudaGetErrorString(cudaSuccess);
    const char *bad = t.cudaGetErrorString(cudaErrorInvalidValue);
    cr_assert(ok && bad && ok[0] && strcmp(ok, bad), "cudaGetErrorString: '%s', '%s'", ok, bad);
    int n = -1;
    cudaError_t err = t.cudaGetDeviceCount(&n);
    if (!have_driver())
        cr_assert_neq(err, cudaSuccess, "cudaGetDeviceCount without a driver: %d devices", n);
}
