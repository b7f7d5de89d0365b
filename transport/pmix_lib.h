/* PMIx, loaded by a process that a launcher started instead of linked.
 * Linked, libpmix and what it pulls in (libevent, munge) cost every process
 * that links libdagger their mapping and relocations (libpmix has about
 * 4400 relative relocations), 0.5-0.7 ms of a singleton's start-up, though
 * a singleton never calls PMIx (docs/benchmarks.md, "PMIx only under a
 * launcher"). bootstrap.c loads it before PMIx_Init; every routine the
 * bootstrap calls, directly or through pmix.h's macros, is a field of one
 * table filled by dlsym, and its name is redirected to the field below, so
 * bootstrap*.c call PMIx by its own names. A routine used without a row
 * here is an undefined reference when a program links libdagger (libpmix is
 * no longer linked): add the row. */
#ifndef DG_TX_PMIX_LIB_H
#define DG_TX_PMIX_LIB_H

#include <pmix.h>
#include <stddef.h>

#define DG_PMIX_SYMS(X)                                                                    \
    X(PMIx_Init) X(PMIx_Finalize) X(PMIx_Get) X(PMIx_Get_nb) X(PMIx_Put) X(PMIx_Commit)     \
    X(PMIx_Error_string) X(PMIx_Get_version) X(PMIx_Register_event_handler)               \
    X(PMIx_Deregister_event_handler) X(PMIx_Info_load) X(PMIx_Value_destruct)

typedef struct dg_pmix_lib {
#define DG_PMIX_FIELD(name) __typeof__(&name) name;
    DG_PMIX_SYMS(DG_PMIX_FIELD)
#undef DG_PMIX_FIELD
} dg_pmix_lib_t;

/* Filled by dg_pmix_load; read only after it returned 0. */
extern dg_pmix_lib_t dg_pmix;

/* Loads libpmix and fills dg_pmix, once per process (later calls return the
 * first call's result): by its soname first (LD_LIBRARY_PATH and the
 * loader's paths), then from the directory the build found it in. 0, or -1
 * with why (the paths tried and dlerror's words, or the missing routine). */
int dg_pmix_load(char *why, size_t cap);

#ifndef DG_PMIX_LIB_NO_REDIRECT
#define PMIx_Init (dg_pmix.PMIx_Init)
#define PMIx_Finalize (dg_pmix.PMIx_Finalize)
#define PMIx_Get (dg_pmix.PMIx_Get)
#define PMIx_Get_nb (dg_pmix.PMIx_Get_nb)
#define PMIx_Put (dg_pmix.PMIx_Put)
#define PMIx_Commit (dg_pmix.PMIx_Commit)
#define PMIx_Error_string (dg_pmix.PMIx_Error_string)
#define PMIx_Get_version (dg_pmix.PMIx_Get_version)
#define PMIx_Register_event_handler (dg_pmix.PMIx_Register_event_handler)
#define PMIx_Deregister_event_handler (dg_pmix.PMIx_Deregister_event_handler)
#define PMIx_Info_load (dg_pmix.PMIx_Info_load)
#define PMIx_Value_destruct (dg_pmix.PMIx_Value_destruct)
#endif

#endif
