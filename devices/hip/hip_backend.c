/* The HIP device backend: devices/gpu/gpu_backend.inc on the HIP runtime
 * API (libamdhip64). The kernel is in hip_pack.hip. */
#include <hip/hip_runtime_api.h>

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
#define GPU_PACK_LAUNCH dg_hip_pack_launch
#define GPU_BACKEND dg_hip_backend
#define GPU_NAME "hip"
#define GPU_LABEL "HIP GPU"
#define GPU_KIND DG_DEV_HIP
#include "devices/gpu/gpu_backend.inc"
