/* The CUDA backend's pack/unpack kernel (devices/gpu/gpu_pack_kernel.inc),
 * built into the module libdagger-cuda.so (cuda_lib.h), which exports the
 * launchers: default visibility on the first declaration, which the
 * definition keeps under -fvisibility=hidden. */
#include <cuda_runtime.h>

#pragma GCC visibility push(default)
#include "devices/gpu/gpu_pack.h"
#pragma GCC visibility pop

#define GPU_LAUNCH_NAME dg_cuda_pack_launch
#define GPU_STREAM_T cudaStream_t
#define GPU_GET_LAST_ERROR cudaGetLastError
#include "devices/gpu/gpu_pack_kernel.inc"
