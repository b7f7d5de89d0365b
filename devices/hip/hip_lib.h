/* The HIP runtime (libamdhip64) and the HIP pack kernel, loaded by the
 * first discovery instead of linked. Linked, libamdhip64 and what it pulls
 * in (libhsa-runtime64, libhsakmt, libdrm, libelf, libstdc++) cost every
 * process that links libdagger their constructors and relocations, about
 * 22 ms of a singleton dagger_init + dagger_finalize, on machines with and
 * without AMD GPUs (issue 17). The kernel object that hipcc builds
 * registers its code with libamdhip64 when it is loaded, so it is a module
 * of its own, libdagger-hip.so, which links libamdhip64 and exports only
 * dg_hip_pack_launch (devices/hip/CMakeLists.txt). Loading the module
 * brings the runtime with it; every routine the backend calls is a field of
 * one table filled by dlsym on the module's handle, and the routine's name
 * is redirected to its field below, so hip_backend.c and gpu_backend.inc
 * call the runtime by its own names. A routine used without a row here is
 * an undefined reference when a program links libdagger (libamdhip64 is no
 * longer linked): add the row and its redirection. */
#ifndef DG_HIP_LIB_H
#define DG_HIP_LIB_H

#include <stddef.h>

#include <hip/hip_runtime_api.h>

#include "devices/gpu/gpu_pack.h"

#define DG_HIP_SYMS(X)                                                                   \
    X(hipGetLastError) X(hipGetErrorString) X(hipGetDeviceCount)                          \
    X(hipGetDeviceProperties) X(hipDeviceGetPCIBusId) X(hipSetDevice)                     \
    X(hipStreamCreateWithPriority) X(hipDeviceGetStreamPriorityRange)                     \
    X(hipStreamSynchronize) X(hipStreamDestroy) X(hipStreamWaitEvent)                     \
    X(hipStreamAddCallback) X(hipEventCreateWithFlags)                                    \
    X(hipEventDestroy) X(hipEventRecord) X(hipEventQuery) X(hipMalloc) X(hipFree)         \
    X(hipMallocAsync) X(hipFreeAsync) X(hipHostMalloc) X(hipHostFree) X(hipMemcpyAsync)   \
    X(hipMemsetAsync) X(hipIpcGetMemHandle) X(hipIpcOpenMemHandle)                        \
    X(hipIpcCloseMemHandle) X(hipDeviceCanAccessPeer) X(hipDeviceEnablePeerAccess)         \
    X(dg_hip_pack_launch)

typedef struct dg_hip_lib {
#define DG_HIP_FIELD(name) __typeof__(&name) name;
    DG_HIP_SYMS(DG_HIP_FIELD)
#undef DG_HIP_FIELD
} dg_hip_lib_t;

/* Filled by dg_hip_lib_load; read only after it returned 0. */
extern dg_hip_lib_t dg_hip_rt;

/* Loads the module and fills dg_hip_rt, once per process (later calls
 * return the first call's result). First a cheap check that an AMD GPU
 * driver can exist at all (/dev/kfd), so that machines without one load
 * nothing. 0, or -1 with why ("no driver: /dev/kfd ...", or the module or
 * routine that could not be loaded and dlerror's words). */
int dg_hip_lib_load(char *why, size_t cap);

/* The loading itself, without the /dev/kfd check (dg_hip_lib_load calls
 * it; tests call it directly on machines without a driver): finds the
 * module (next to the object that holds this code, then the install libdir,
 * then the build directory), opens it and fills *t. Writes the module's
 * path to path (may be NULL). 0, or -1 with why. */
int dg_hip_lib_open(dg_hip_lib_t *t, char *path, size_t path_cap, char *why, size_t cap);

#ifndef DG_HIP_LIB_NO_REDIRECT
#define hipGetLastError (dg_hip_rt.hipGetLastError)
#define hipGetErrorString (dg_hip_rt.hipGetErrorString)
#define hipGetDeviceCount (dg_hip_rt.hipGetDeviceCount)
#define hipGetDeviceProperties (dg_hip_rt.hipGetDeviceProperties)
#define hipDeviceGetPCIBusId (dg_hip_rt.hipDeviceGetPCIBusId)
#define hipSetDevice (dg_hip_rt.hipSetDevice)
#define hipStreamCreateWithPriority (dg_hip_rt.hipStreamCreateWithPriority)
#define hipDeviceGetStreamPriorityRange (dg_hip_rt.hipDeviceGetStreamPriorityRange)
#define hipStreamSynchronize (dg_hip_rt.hipStreamSynchronize)
#define hipStreamDestroy (dg_hip_rt.hipStreamDestroy)
#define hipStreamWaitEvent (dg_hip_rt.hipStreamWaitEvent)
#define hipStreamAddCallback (dg_hip_rt.hipStreamAddCallback)
#define hipEventCreateWithFlags (dg_hip_rt.hipEventCreateWithFlags)
#define hipEventDestroy (dg_hip_rt.hipEventDestroy)
#define hipEventRecord (dg_hip_rt.hipEventRecord)
#define hipEventQuery (dg_hip_rt.hipEventQuery)
#define hipMalloc (dg_hip_rt.hipMalloc)
#define hipFree (dg_hip_rt.hipFree)
#define hipMallocAsync (dg_hip_rt.hipMallocAsync)
#define hipFreeAsync (dg_hip_rt.hipFreeAsync)
#define hipHostMalloc (dg_hip_rt.hipHostMalloc)
#define hipHostFree (dg_hip_rt.hipHostFree)
#define hipMemcpyAsync (dg_hip_rt.hipMemcpyAsync)
#define hipMemsetAsync (dg_hip_rt.hipMemsetAsync)
#define hipIpcGetMemHandle (dg_hip_rt.hipIpcGetMemHandle)
#define hipIpcOpenMemHandle (dg_hip_rt.hipIpcOpenMemHandle)
#define hipIpcCloseMemHandle (dg_hip_rt.hipIpcCloseMemHandle)
#define hipDeviceCanAccessPeer (dg_hip_rt.hipDeviceCanAccessPeer)
#define hipDeviceEnablePeerAccess (dg_hip_rt.hipDeviceEnablePeerAccess)
#define dg_hip_pack_launch (dg_hip_rt.dg_hip_pack_launch)
#endif

#endif
