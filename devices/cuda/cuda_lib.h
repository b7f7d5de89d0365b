/* The CUDA runtime (libcudart) and the CUDA kernels of ours, loaded by the
 * first discovery instead of linked. Linked, libcudart cost every process
 * that links libdagger its loading, relocations and the kernels'
 * registration (its constructors), GPU or not: 1.6-3.4 ms of a singleton's
 * dagger_init + dagger_finalize on these machines, which put it over its
 * 1.2x of the start-up floor (issue 17; docs/benchmarks.md). Every kernel
 * file of ours (this backend's pack kernel, core/linalg/cuda's and
 * core/array/cuda's) registers its code with libcudart when it is loaded,
 * so they are built into a module of their own, libdagger-cuda.so, which
 * links libcudart and exports only the kernels' launchers (the top-level
 * CMakeLists.txt). Loading the module brings the runtime with it; every
 * runtime routine that libdagger calls is a field of one table filled by
 * dlsym on the module's handle, and the routine's name is redirected to its
 * field below, so the C code calls the runtime by its own names. The upper
 * layers find their own launchers in the module (dg_cuda_lib_module). A
 * routine used without a row here is an undefined reference when a program
 * links libdagger (libcudart is no longer linked): add the row and its
 * redirection. The same pattern as the HIP backend (devices/hip/hip_lib.h). */
#ifndef DG_CUDA_LIB_H
#define DG_CUDA_LIB_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "devices/gpu/gpu_pack.h"

#define DG_CUDA_SYMS(X)                                                                    \
    X(cudaGetLastError) X(cudaGetErrorString) X(cudaGetDeviceCount)                         \
    X(cudaGetDeviceProperties) X(cudaDeviceGetPCIBusId) X(cudaSetDevice) X(cudaGetDevice)   \
    X(cudaStreamCreateWithPriority) X(cudaDeviceGetStreamPriorityRange)                     \
    X(cudaStreamSynchronize) X(cudaStreamDestroy) X(cudaStreamWaitEvent)                    \
    X(cudaLaunchHostFunc) X(cudaEventCreateWithFlags) X(cudaEventDestroy) X(cudaEventRecord) \
    X(cudaEventQuery) X(cudaMalloc) X(cudaFree) X(cudaMallocAsync) X(cudaFreeAsync)         \
    X(cudaHostAlloc) X(cudaFreeHost) X(cudaMemcpyAsync) X(cudaMemcpy2DAsync)                \
    X(cudaMemsetAsync) X(cudaIpcGetMemHandle) X(cudaIpcOpenMemHandle)                       \
    X(cudaIpcCloseMemHandle) X(cudaDeviceCanAccessPeer) X(cudaDeviceEnablePeerAccess)       \
    X(dg_cuda_pack_launch)

typedef struct dg_cuda_lib {
#define DG_CUDA_FIELD(name) __typeof__(&name) name;
    DG_CUDA_SYMS(DG_CUDA_FIELD)
#undef DG_CUDA_FIELD
} dg_cuda_lib_t;

/* Filled by dg_cuda_lib_load; read only after it returned 0. */
extern dg_cuda_lib_t dg_cuda_rt;

/* Loads the module and fills dg_cuda_rt, once per process (later calls
 * return the first call's result). First a cheap check that an NVIDIA
 * driver can exist at all (/dev/nvidiactl, /proc/driver/nvidia, or WSL's
 * /dev/dxg), so that machines without one load nothing. 0, or -1 with why
 * ("no driver: ...", or the module or routine that could not be loaded and
 * dlerror's words). */
int dg_cuda_lib_load(char *why, size_t cap);

/* The loading itself, without the driver check (dg_cuda_lib_load calls
 * it; tests call it directly on machines without a driver): finds the
 * module (next to the object that holds this code, then the install libdir,
 * then the build directory), opens it and fills *t. Writes the module's
 * path to path (may be NULL) and its handle to *handle (may be NULL). 0, or
 * -1 with why. */
int dg_cuda_lib_open(dg_cuda_lib_t *t, void **handle, char *path, size_t path_cap, char *why,
                     size_t cap);

/* The loaded module's handle, for the upper layers' own launchers (dlsym
 * on it): NULL until dg_cuda_lib_load has returned 0. */
void *dg_cuda_lib_module(void);

#ifndef DG_CUDA_LIB_NO_REDIRECT
#define cudaGetLastError (dg_cuda_rt.cudaGetLastError)
#define cudaGetErrorString (dg_cuda_rt.cudaGetErrorString)
#define cudaGetDeviceCount (dg_cuda_rt.cudaGetDeviceCount)
#define cudaGetDeviceProperties (dg_cuda_rt.cudaGetDeviceProperties)
#define cudaDeviceGetPCIBusId (dg_cuda_rt.cudaDeviceGetPCIBusId)
#define cudaSetDevice (dg_cuda_rt.cudaSetDevice)
#define cudaGetDevice (dg_cuda_rt.cudaGetDevice)
#define cudaStreamCreateWithPriority (dg_cuda_rt.cudaStreamCreateWithPriority)
#define cudaDeviceGetStreamPriorityRange (dg_cuda_rt.cudaDeviceGetStreamPriorityRange)
#define cudaStreamSynchronize (dg_cuda_rt.cudaStreamSynchronize)
#define cudaStreamDestroy (dg_cuda_rt.cudaStreamDestroy)
#define cudaStreamWaitEvent (dg_cuda_rt.cudaStreamWaitEvent)
#define cudaLaunchHostFunc (dg_cuda_rt.cudaLaunchHostFunc)
#define cudaEventCreateWithFlags (dg_cuda_rt.cudaEventCreateWithFlags)
#define cudaEventDestroy (dg_cuda_rt.cudaEventDestroy)
#define cudaEventRecord (dg_cuda_rt.cudaEventRecord)
#define cudaEventQuery (dg_cuda_rt.cudaEventQuery)
#define cudaMalloc (dg_cuda_rt.cudaMalloc)
#define cudaFree (dg_cuda_rt.cudaFree)
#define cudaMallocAsync (dg_cuda_rt.cudaMallocAsync)
#define cudaFreeAsync (dg_cuda_rt.cudaFreeAsync)
#define cudaHostAlloc (dg_cuda_rt.cudaHostAlloc)
#define cudaFreeHost (dg_cuda_rt.cudaFreeHost)
#define cudaMemcpyAsync (dg_cuda_rt.cudaMemcpyAsync)
#define cudaMemcpy2DAsync (dg_cuda_rt.cudaMemcpy2DAsync)
#define cudaMemsetAsync (dg_cuda_rt.cudaMemsetAsync)
#define cudaIpcGetMemHandle (dg_cuda_rt.cudaIpcGetMemHandle)
#define cudaIpcOpenMemHandle (dg_cuda_rt.cudaIpcOpenMemHandle)
#define cudaIpcCloseMemHandle (dg_cuda_rt.cudaIpcCloseMemHandle)
#define cudaDeviceCanAccessPeer (dg_cuda_rt.cudaDeviceCanAccessPeer)
#define cudaDeviceEnablePeerAccess (dg_cuda_rt.cudaDeviceEnablePeerAccess)
#define dg_cuda_pack_launch (dg_cuda_rt.dg_cuda_pack_launch)
#endif

#endif
