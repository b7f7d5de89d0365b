/* A registry of live top-level handles, so that a stale or doubly destroyed
 * handle is reported as DAGGER_ERR_BAD_HANDLE instead of being dereferenced.
 * Each entry has a kind, so that a live handle of one kind passed where
 * another is expected (a runtime given as a region) is rejected too. */
#ifndef DG_HANDLES_H
#define DG_HANDLES_H

typedef enum dg_handle_kind {
    DG_HANDLE_RUNTIME = 0,
    DG_HANDLE_REGION = 1
} dg_handle_kind_t;

/* Returns 0 on success, -1 when the registry is full. h must be 8-aligned. */
int dg_handle_add_kind(const void *h, dg_handle_kind_t kind);
/* 1 if h is a registered live handle of this kind (lock-free; safe on any
 * pointer value). */
int dg_handle_live_kind(const void *h, dg_handle_kind_t kind);
void dg_handle_remove(const void *h);
/* Number of live handles of a kind. */
int dg_handle_count(dg_handle_kind_t kind);

/* Runtime handles (the common case). */
static inline int dg_handle_add(const void *h)
{
    return dg_handle_add_kind(h, DG_HANDLE_RUNTIME);
}
static inline int dg_handle_live(const void *h)
{
    return dg_handle_live_kind(h, DG_HANDLE_RUNTIME);
}

#endif
