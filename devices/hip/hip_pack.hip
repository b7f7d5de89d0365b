/* The HIP backend's pack/unpack kernel (devices/gpu/gpu_pack_kernel.inc). */
#include <hip/hip_runtime.h>

#define GPU_LAUNCH_NAME dg_hip_pack_launch
#define GPU_STREAM_T hipStream_t
#define GPU_GET_LAST_ERROR hipGetLastError
#include "devices/gpu/gpu_pack_kernel.inc"
