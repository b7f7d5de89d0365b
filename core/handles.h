/* A registry of live top-level handles, so that a stale or doubly destroyed
 * handle is reported as DAGGER_ERR_BAD_HANDLE instead of being dereferenced. */
#ifndef DG_HANDLES_H
#define DG_HANDLES_H

/* Returns 0 on success, -1 when the registry is full. */
int dg_handle_add(const void *h);
void dg_handle_remove(const void *h);
/* 1 if h is a registered live handle (lock-free; safe on any pointer value). */
int dg_handle_live(const void *h);

#endif
