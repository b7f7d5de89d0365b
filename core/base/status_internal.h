/* Internal error helpers: set the per-thread detail and return the code. */
#ifndef DG_STATUS_INTERNAL_H
#define DG_STATUS_INTERNAL_H

#include <dagger/status.h>

/* Records a detail message for this thread and returns status, so that a
 * failing path reads: return dg_error(DAGGER_ERR_INVALID_ARG, "%s: ...", __func__). */
dagger_status_t dg_error(dagger_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* This thread's detail message (what dagger_error_detail returns). */
const char *dg_error_text(void);
/* "DAGGER_ERR_X: what it means" for a code of dagger_status_t, NULL for any
 * other value (what dagger_strerror says). */
const char *dg_status_text(dagger_status_t status);

/* Argument check for public entry points: returns the error from the caller. */
#define DG_CHECK_ARG(cond, ...)                                        \
    do {                                                               \
        if (__builtin_expect(!(cond), 0))                              \
            return dg_error(DAGGER_ERR_INVALID_ARG, __VA_ARGS__);      \
    } while (0)

#endif
