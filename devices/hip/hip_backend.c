/* The HIP device backend: devices/gpu/gpu_backend.inc on the HIP runtime
 * API (libamdhip64), which is loaded by the first discovery and called
 * through a table (hip_lib.h). The kernel is in hip_pack.hip, built into
 * the module that the loader opens. */
#include <stdlib.h>

#include "devices/hip/hip_lib.h"

#include "core/base/alloc.h"

/* HIP 5.2 declares hipLaunchHostFunc but its library does not export it:
 * a stream callback carries the call instead (it too runs once the work
 * before it is done, on a runtime thread). */
typedef struct hip_host_call {
    void (*fn)(void *);
    void *arg;
} hip_host_call_t;

static void hip_host_trampoline(hipStream_t stream, hipError_t status, void *p)
{
    hip_host_call_t c = *(hip_host_call_t *)p;
    free(p);
    c.fn(c.arg);
}

static hipError_t hip_launch_host_fn(hipStream_t s, void (*fn)(void *), void *arg)
{
    hip_host_call_t *c = dg_malloc(sizeof *c);
    if (!c)
        return hipErrorOutOfMemory;
    *c = (hip_host_call_t){.fn = fn, .arg = arg};
    hipError_t err = hipStreamAddCallback(s, hip_host_trampoline, c, 0);
    if (err != hipSuccess)
        free(c);
    return err;
}


#define GPU(x) hip##x
#define GPU_PREFIX "hip"
#define GPU_PROP_T hipDeviceProp_t
#define GPU_MEMCPY_KIND_T hipMemcpyKind
/* Portable: registered with every device, as device.h asks of staging. */
#define GPU_HOST_ALLOC(p, n) hipHostMalloc((p), (n), hipHostMallocPortable)
#define GPU_HOST_FREE(p) hipHostFree(p)
#define GPU_ERR_NO_MEMORY hipErrorOutOfMemory
#define GPU_ERR_NO_DEVICE hipErrorNoDevice
#define GPU_ERR_NO_DRIVER hipErrorInsufficientDriver
#define GPU_LAUNCH_HOST_FN(s, fn, arg) hip_launch_host_fn((s), (fn), (arg))
#define GPU_PACK_LAUNCH dg_hip_pack_launch
#define GPU_RUNTIME_LOAD(why, cap) dg_hip_lib_load((why), (cap))
#define GPU_BACKEND dg_hip_backend
#define GPU_NAME "hip"
#define GPU_LABEL "HIP GPU"
#define GPU_KIND DG_DEV_HIP
#include "devices/gpu/gpu_backend.inc"
