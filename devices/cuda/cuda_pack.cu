/* The CUDA backend's pack/unpack kernel (devices/gpu/gpu_pack_kernel.inc). */
#include <cuda_runtime.h>

#define GPU_LAUNCH_NAME dg_cuda_pack_launch
#define GPU_STREAM_T cudaStream_t
#define GPU_GET_LAST_ERROR cudaGetLastError
#include "devices/gpu/gpu_pack_kernel.inc"
