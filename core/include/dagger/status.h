/* Dagger-C status codes and error reporting.
 *
 * Every public call returns a dagger_status_t: DAGGER_OK (0) on success, a
 * negative code otherwise. dagger_strerror() names the code; dagger_error_detail()
 * returns the calling thread's detail message for the most recent error, which
 * says what to change (for example "dagger_send: payload of 12 bytes for
 * message type 'kv.put' which expects 16"). */
#ifndef DAGGER_STATUS_H
#define DAGGER_STATUS_H

#include <dagger/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dagger_status {
    DAGGER_OK = 0,

    /* General (-1 .. -99) */
    DAGGER_ERR_INVALID_ARG    = -1,  /* a NULL, out-of-range or malformed argument */
    DAGGER_ERR_NO_MEMORY      = -2,  /* an allocation failed */
    DAGGER_ERR_BAD_HANDLE     = -3,  /* a handle that is NULL, destroyed or of the wrong kind */
    DAGGER_ERR_NOT_FOUND      = -4,  /* a name or id that is not registered */
    DAGGER_ERR_EXISTS         = -5,  /* already registered or already created */
    DAGGER_ERR_TIMEOUT        = -6,  /* a wait reached its deadline */
    DAGGER_ERR_UNSUPPORTED    = -7,  /* not available in this build or on this machine */
    DAGGER_ERR_STATE          = -8,  /* the call is not allowed in the object's current state */
    DAGGER_ERR_CONFIG         = -9,  /* a DAGGER_* setting has a value that cannot be used */
    DAGGER_ERR_INTERNAL       = -10, /* a broken internal invariant (a bug: please report) */
    DAGGER_ERR_SYSTEM         = -11, /* an operating-system call failed */
    DAGGER_ERR_OVERFLOW       = -12, /* a size or count too large for the destination */

    /* Actors and messages (-100 .. -199) */
    DAGGER_ERR_ACTOR_STOPPED  = -100, /* the destination actor was stopped */
    DAGGER_ERR_NO_SUCH_ACTOR  = -101, /* no actor has this address */
    DAGGER_ERR_MSG_TYPE       = -102, /* unregistered message type or no handler for it */
    DAGGER_ERR_MSG_SIZE       = -103, /* payload size does not match the registered type */
    DAGGER_ERR_TYPE_CONFLICT  = -104, /* a name hash collision or two different registrations */

    /* Transport and bootstrap (-200 .. -299) */
    DAGGER_ERR_BOOTSTRAP      = -200, /* PMIx bootstrap failed */
    DAGGER_ERR_TRANSPORT      = -201, /* UCX reported an error */
    DAGGER_ERR_PEER_LOST      = -202, /* a peer rank died or disconnected */
    DAGGER_ERR_BUILD_MISMATCH = -203, /* ranks run different builds of the library */

    /* Planning and regions (-300 .. -399) */
    DAGGER_ERR_BAD_VIEW       = -300, /* a view out of bounds or of the wrong shape */
    DAGGER_ERR_DTYPE          = -301, /* an element type that does not match */
    DAGGER_ERR_SCOPE          = -302, /* a scope that no processor satisfies */
    DAGGER_ERR_CYCLE          = -303, /* explicit dependencies form a cycle */
    DAGGER_ERR_TASK_FAILED    = -304, /* a task returned an error */
    DAGGER_ERR_DIVERGENCE     = -305, /* ranks disagree on planning inputs (uniformity check) */
    DAGGER_ERR_HANG           = -306, /* no progress: the rank exits (status 124) after
                                         DAGGER_HANG_TIMEOUT + DAGGER_HANG_EXIT naming it */
    DAGGER_ERR_PROTOCOL       = -307  /* a transfer header that does not match the plan */
} dagger_status_t;

/* The name and one-line meaning of a status code ("DAGGER_ERR_SCOPE: a scope
 * that no processor satisfies"). Never NULL. */
DAGGER_API
const char *dagger_strerror(dagger_status_t status);

/* The calling thread's detail message for the most recent failing call, or ""
 * when there is none. Valid until the next failing call on this thread. */
DAGGER_API
const char *dagger_error_detail(void);

#ifdef __cplusplus
}
#endif
#endif
