/* The CUDA device backend: devices/gpu/gpu_backend.inc on the CUDA runtime
 * API (cudart; never the driver library, so a machine without a driver
 * starts and reports no devices), which is loaded by the first discovery
 * and called through a table (cuda_lib.h). The kernel is in cuda_pack.cu,
 * built into the module that the loader opens. */
#include "devices/cuda/cuda_lib.h"

#define GPU(x) cuda##x
#define GPU_PREFIX "cuda"
#define GPU_PROP_T struct cudaDeviceProp
#define GPU_MEMCPY_KIND_T enum cudaMemcpyKind
/* Portable: registered with every device, as device.h asks of staging. */
#define GPU_HOST_ALLOC(p, n) cudaHostAlloc((p), (n), cudaHostAllocPortable)
#define GPU_HOST_FREE(p) cudaFreeHost(p)
#define GPU_ERR_NO_MEMORY cudaErrorMemoryAllocation
#define GPU_ERR_NO_DEVICE cudaErrorNoDevice
#define GPU_ERR_NO_DRIVER cudaErrorInsufficientDriver
#define GPU_LAUNCH_HOST_FN(s, fn, arg) cudaLaunchHostFunc((s), (fn), (arg))
#define GPU_PACK_LAUNCH dg_cuda_pack_launch
#define GPU_RUNTIME_LOAD(why, cap) dg_cuda_lib_load((why), (cap))
#define GPU_BACKEND dg_cuda_backend
#define GPU_NAME "cuda"
#define GPU_LABEL "CUDA GPU"
#define GPU_KIND DG_DEV_CUDA
#include "devices/gpu/gpu_backend.inc"
