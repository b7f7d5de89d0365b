/* A GPU runtime is loaded on first use, not linked (devices/cuda/cuda_lib.h,
 * devices/hip/hip_lib.h): a process that links Dagger-C has neither the
 * vendor's runtime nor our module mapped after dagger_init and
 * dagger_finalize on a machine without the vendor's driver, and discovery
 * says why there are no devices of that kind. Forced, the loader finds the
 * module, every routine of its table and (CUDA) every launcher that the upper
 * layers look up in it. No GPU is needed. One source, one binary per backend:
 * DG_TEST_CUDA or DG_TEST_HIP picks the backend's names below. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dagger/runtime.h>

#include "devices/discover.h"
#include "proc_maps.h"

/* The tables' fields by name (the redirections would rename them). */
#if defined(DG_TEST_CUDA)
#define DG_CUDA_LIB_NO_REDIRECT 1
#define DG_ST_CUDA_NO_REDIRECT 1
#include "core/array/cuda/st_cuda.h"
#include "devices/cuda/cuda_lib.h"
#ifdef DAGGER_HAVE_CUDA_LINALG
#define DG_LA_CUDA_LIB_NO_REDIRECT 1
#include "core/linalg/cuda/la_cuda_lib.h"
#endif

#define MODULE DG_CUDA_MODULE
#define RUNTIME "libcudart"
#define RT(name) cuda##name /* the runtime's names: cudaSuccess, cudaGetDeviceCount */
#define RT_PREFIX "cuda"
#define DRIVER "an NVIDIA driver"
#define NO_DRIVER_SUMMARY "CUDA: none (no driver: /dev/nvidiactl"
#define NO_DRIVER_FILE "/dev/nvidiactl"
typedef dg_cuda_lib_t lib_t;

static int have_driver(void)
{
    return access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0 ||
           access("/dev/dxg", F_OK) == 0;
}

static int lib_load(char *why, size_t cap)
{
    return dg_cuda_lib_load(why, cap);
}

/* The module's handle, or NULL with why. */
static void *lib_open(lib_t *t, char *path, size_t pcap, char *why, size_t wcap)
{
    void *h = NULL;
    return dg_cuda_lib_open(t, &h, path, pcap, why, wcap) == 0 ? h : NULL;
}

/* Every routine of the table, and the launchers the upper layers find in
 * the module themselves. */
static void check_found(const lib_t *t, void *h, const char *path)
{
#define DG_LIB_CHECK(name) cr_assert_not_null(t->name, "%s not found", #name);
    DG_CUDA_SYMS(DG_LIB_CHECK)
#undef DG_LIB_CHECK
#define DG_LIB_FIND(name) cr_assert_not_null(dlsym(h, #name), "%s not in %s", #name, path);
    DG_ST_CUDA_SYMS(DG_LIB_FIND)
#ifdef DAGGER_HAVE_CUDA_LINALG
    DG_LA_CUDA_KERNEL_SYMS(DG_LIB_FIND)
#endif
#undef DG_LIB_FIND
}

#elif defined(DG_TEST_HIP)
#define DG_HIP_LIB_NO_REDIRECT 1
#include "devices/hip/hip_lib.h"

#define MODULE DG_HIP_MODULE
#define RUNTIME "libamdhip64"
#define RT(name) hip##name
#define RT_PREFIX "hip"
#define DRIVER "/dev/kfd"
#define NO_DRIVER_SUMMARY "HIP: none (no driver: /dev/kfd"
#define NO_DRIVER_FILE "/dev/kfd"
typedef dg_hip_lib_t lib_t;

static int have_driver(void)
{
    return access("/dev/kfd", F_OK) == 0;
}

static int lib_load(char *why, size_t cap)
{
    return dg_hip_lib_load(why, cap);
}

/* The HIP loader keeps no handle: the module's own dlopen handle stands in
 * for "found" (a second dlopen of a loaded library only counts it). */
static void *lib_open(lib_t *t, char *path, size_t pcap, char *why, size_t wcap)
{
    if (dg_hip_lib_open(t, path, pcap, why, wcap) != 0)
        return NULL;
    return dlopen(path, RTLD_NOW | RTLD_NOLOAD);
}

static void check_found(const lib_t *t, void *h, const char *path)
{
    (void)h;
    (void)path;
#define DG_LIB_CHECK(name) cr_assert_not_null(t->name, "%s not found", #name);
    DG_HIP_SYMS(DG_LIB_CHECK)
#undef DG_LIB_CHECK
}

#else
#error "define DG_TEST_CUDA or DG_TEST_HIP"
#endif

/* A call through the table reaches the runtime (no device needed). */
static void check_calls(const lib_t *t)
{
    const char *ok = t->RT(GetErrorString)(RT(Success));
    const char *bad = t->RT(GetErrorString)(RT(ErrorInvalidValue));
    cr_assert(ok && bad && ok[0] && strcmp(ok, bad), RT_PREFIX "GetErrorString: '%s', '%s'", ok,
              bad);
    int n = -1;
    RT(Error_t) err = t->RT(GetDeviceCount)(&n);
    if (!have_driver())
        cr_assert_neq(err, RT(Success), RT_PREFIX "GetDeviceCount without a driver: %d devices", n);
}

static void skip_with_driver(void)
{
    if (have_driver())
        cr_skip_test("this machine has %s: discovery loads %s here", DRIVER, RUNTIME);
}

Test(gpu_lib, not_mapped_after_init_and_finalize_without_a_driver)
{
    skip_with_driver();
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert(!proc_maps_has(RUNTIME), "%s is mapped without %s", RUNTIME, DRIVER);
    cr_assert(!proc_maps_has(MODULE), "%s is mapped without %s", MODULE, DRIVER);
}

Test(gpu_lib, discovery_says_the_driver_is_missing)
{
    skip_with_driver();
    dg_dev_table_t t;
    cr_assert_eq(dg_dev_discover(0, &t), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert(strstr(t.summary, NO_DRIVER_SUMMARY), "summary: '%s'", t.summary);
    char why[256] = "";
    cr_assert_eq(lib_load(why, sizeof(why)), -1);
    cr_assert(strstr(why, NO_DRIVER_FILE), "why: '%s'", why);
    cr_assert(!proc_maps_has(RUNTIME));
    cr_assert(!proc_maps_has(MODULE));
}

Test(gpu_lib, forced_load_finds_the_module_and_every_routine)
{
    lib_t t;
    memset(&t, 0, sizeof(t));
    char path[4096] = "", why[512] = "";
    void *h = lib_open(&t, path, sizeof(path), why, sizeof(why));
    cr_assert_not_null(h, "%s", why);
    cr_assert(strstr(path, "/" MODULE), "module path '%s'", path);
    cr_assert(proc_maps_has(MODULE) && proc_maps_has(RUNTIME), "%s loaded without %s?", path,
              RUNTIME);
    check_found(&t, h, path);
    check_calls(&t);
}
