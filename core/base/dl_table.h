/* Tables of routines from libraries loaded at run time instead of linked
 * (OpenBLAS and LAPACKE: core/linalg/la_blas_lib.h; cuBLAS and cuSOLVER:
 * core/linalg/cuda/la_cuda_lib.h; the HIP runtime: devices/hip/hip_lib.h;
 * PMIx: transport/pmix_lib.h). Each loader fills its table once per process
 * with pthread_once and keeps the first failure's words; these calls are
 * the parts they share. */
#ifndef DG_BASE_DL_TABLE_H
#define DG_BASE_DL_TABLE_H

#include <pthread.h>
#include <stddef.h>

/* One routine of a table: its name, and its field's offset in the table
 * struct. A loader lists its table with its X-macro of names, one row each:
 *   #define ROW(name) DG_DL_SYM(my_table_t, name)
 *   static const dg_dl_sym_t syms[] = {MY_SYMS(ROW)}; */
typedef struct dg_dl_sym {
    const char *name;
    size_t field;
} dg_dl_sym_t;

#define DG_DL_SYM(type, name) {#name, offsetof(type, name)},
#define DG_DL_NSYMS(syms) (sizeof(syms) / sizeof((syms)[0]))

/* Looks each of the n routines of syms up in the handle h of library lib
 * and stores it in its field of table (the struct whose offsets they are;
 * fields are function pointers, and dlsym's object pointer has the same
 * representation, POSIX says). Stops at the first one missing: 0, or -1
 * with "<lib> has no <name> (<dlerror>): <hint>" in why. */
int dg_dl_find_all(void *h, const char *lib, const dg_dl_sym_t *syms, size_t n, void *table,
                   const char *hint, char *why, size_t cap);

/* Runs load once per process (pthread_once) and returns its outcome: 0 when
 * it left error empty, else -1 with error copied into why (when why and
 * cap are given). */
int dg_dl_once(pthread_once_t *once, void (*load)(void), const char *error, char *why,
               size_t cap);

#endif
