/* The HIP backend's pack/unpack kernel (devices/gpu/gpu_pack_kernel.inc),
 * built into the module libdagger-hip.so (hip_lib.h), whose one export is
 * the launcher: default visibility on its first declaration, which the
 * definition keeps under -fvisibility=hidden. */
#include <hip/hip_runtime.h>

#pragma GCC visibility push(default)
#include "devices/gpu/gpu_pack.h"
#pragma GCC visibility pop

#define GPU_LAUNCH_NAME dg_hip_pack_launch
#define GPU_STREAM_T hipStream_t
#define GPU_GET_LAST_ERROR hipGetLastError
#include "devices/gpu/gpu_pack_kernel.inc"
