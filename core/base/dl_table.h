/* Tables of routines from libraries loaded at run time instead of linked
 * (OpenBLAS and LAPACKE: core/linalg/la_blas_lib.h; cuBLAS and cuSOLVER:
 * core/linalg/cuda/la_cuda_lib.h; the HIP runtime: devices/hip/hip_lib.h).
 * Each loader fills its table once per process with pthread_once and keeps
 * the first failure's words; these two calls are the parts they share. */
#ifndef DG_BASE_DL_TABLE_H
#define DG_BASE_DL_TABLE_H

#include <pthread.h>
#include <stddef.h>

/* Looks name up in the handle h of library lib and stores the routine in
 * *field, a function pointer (dlsym's object pointer has the same
 * representation, POSIX says). 0, or -1 with "<lib> has no <name>
 * (<dlerror>): <hint>" in why. */
int dg_dl_find(void *h, const char *lib, const char *name, void *field, const char *hint,
               char *why, size_t cap);

/* Runs load once per process (pthread_once) and returns its outcome: 0 when
 * it left error empty, else -1 with error copied into why (when why and
 * cap are given). */
int dg_dl_once(pthread_once_t *once, void (*load)(void), const char *error, char *why,
               size_t cap);

#endif
