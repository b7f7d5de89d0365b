/* Shared pieces of the bad-input test (test_bad_input.c): the fixture every
 * probe gets (live, destroyed and foreign handles of each kind) and the
 * expectation macros. A probe is one function per public function; the table
 * at the end of test_bad_input.c lists them, one row each. */
#ifndef DG_TEST_BAD_INPUT_H
#define DG_TEST_BAD_INPUT_H

#include <criterion/criterion.h>
#include <dagger.h>

typedef struct bi_fixture {
    dagger_runtime_t *rt;      /* live, singleton, 2 workers */
    dagger_runtime_t *dead;    /* a finalized runtime (or a foreign pointer if its memory was reused) */
    void *foreign;             /* points at bytes that were never a handle */
    dagger_chunk_t c, c_gone;  /* a live 4x4 f64 chunk; a freed one */
    dagger_codelet_t cl;       /* "bi.touch": one INOUT f64 view */
    dagger_codelet_t cl_ret;   /* "bi.ret": no arguments, returns 8 bytes */
    dagger_codelet_t cl_never; /* never registered */
    dagger_future_t f, f_gone; /* a live future of cl_ret; a freed one */
    dagger_region_t *r_gone;   /* an ended region */
    dagger_array_t *a, *b;     /* 4x4 f64 in 2x2 blocks */
    dagger_array_t *ai;        /* 4x4 i32 in 2x2 blocks */
    dagger_array_t *a_gone;    /* destroyed */
    dagger_array_t *v;         /* 1-D f64 of 4 */
    dagger_stencil_t *s, *s_gone;
    dagger_msg_type_t mt;      /* "bi.ping", FIXED 8 bytes */
    dagger_actor_addr_t act, act_gone; /* a live actor handling mt; a joined one */
} bi_fixture_t;

extern bi_fixture_t BI;

/* status must be want; for an error, the detail must say something. */
void bi_expect(const char *what, dagger_status_t got, dagger_status_t want);
#define E(want, call) bi_expect(#call, (call), (want))

/* A name longer than any the library accepts (199 characters). */
const char *bi_long_name(void);

/* A task implementation that does nothing. */
int bi_noop(dagger_task_t *t);

/* Runs body with a region open on BI.rt (the region is r). */
dagger_region_t *bi_open(void);
void bi_close(dagger_region_t *r);

/* The probes, one per row of bad_input_rows.h. */
#define BI_ROW(name) void bi_probe_##name(void);
#include "tests/core/runtime/bad_input_rows.h"
#undef BI_ROW

#endif
