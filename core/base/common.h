/* Small internal helpers used by every layer: branch hints, assertions,
 * checked allocation and container_of. */
#ifndef DG_COMMON_H
#define DG_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DG_LIKELY(x)   __builtin_expect(!!(x), 1)
#define DG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define DG_UNUSED(x)   ((void)(x))
#define DG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define DG_CACHE_LINE 64 /* bytes: what fields written by different threads are kept apart by */
#define DG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DG_MAX(a, b) ((a) > (b) ? (a) : (b))
#define DG_CONTAINER_OF(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof(type, member)))
#define DG_CACHELINE 64

/* Internal invariants: checked in debug and sanitizer builds, free otherwise.
 * They guard against our bugs, never against user input (which gets a status). */
#ifdef DG_DEBUG
#define DG_ASSERT(cond)                                                        \
    do {                                                                       \
        if (DG_UNLIKELY(!(cond))) {                                            \
            fprintf(stderr, "dagger: internal assertion '%s' failed at %s:%d\n", \
                    #cond, __FILE__, __LINE__);                                \
            abort();                                                           \
        }                                                                      \
    } while (0)
#else
#define DG_ASSERT(cond) ((void)0)
#endif

#endif
