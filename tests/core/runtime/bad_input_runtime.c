/* Bad-input probes of dagger/runtime.h, dagger/status.h, dagger/types.h and
 * dagger/version.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tests/core/runtime/bad_input.h"

void bi_probe_dagger_init(void)
{
    E(DAGGER_ERR_INVALID_ARG, dagger_init(NULL, NULL, NULL, NULL));
    dagger_params_t neg = {.num_threads = -1};
    dagger_runtime_t *rt = (dagger_runtime_t *)BI.foreign;
    E(DAGGER_ERR_INVALID_ARG, dagger_init(NULL, NULL, &neg, &rt));
    cr_expect_null(rt, "a failed dagger_init leaves *rt NULL");
    /* Wrong state: a second runtime while one is live. */
    rt = (dagger_runtime_t *)BI.foreign;
    E(DAGGER_ERR_STATE, dagger_init(NULL, NULL, NULL, &rt));
    cr_expect_null(rt);
    cr_assert_eq(dagger_finalize(BI.rt), DAGGER_OK);
    BI.rt = NULL;
    setenv("DAGGER_NUM_THREADS", "lots", 1);
    rt = (dagger_runtime_t *)BI.foreign;
    E(DAGGER_ERR_CONFIG, dagger_init(NULL, NULL, NULL, &rt));
    cr_expect_null(rt);
    unsetenv("DAGGER_NUM_THREADS");
    /* A slice the kernel would clamp (0.1-100 ms). */
    setenv("DAGGER_SCHED_SLICE_US", "50", 1);
    rt = (dagger_runtime_t *)BI.foreign;
    E(DAGGER_ERR_CONFIG, dagger_init(NULL, NULL, NULL, &rt));
    cr_expect(strstr(dagger_error_detail(), "DAGGER_SCHED_SLICE_US=50") != NULL, "%s",
              dagger_error_detail());
    cr_expect_null(rt);
    unsetenv("DAGGER_SCHED_SLICE_US");
    E(DAGGER_OK, dagger_init(NULL, NULL, NULL, &BI.rt));
}

void bi_probe_dagger_finalize(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_finalize(NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_finalize(BI.dead));
    E(DAGGER_ERR_BAD_HANDLE, dagger_finalize((dagger_runtime_t *)BI.foreign));
    E(DAGGER_ERR_BAD_HANDLE, dagger_finalize((dagger_runtime_t *)BI.a));
    E(DAGGER_OK, dagger_finalize(BI.rt));
    E(DAGGER_ERR_BAD_HANDLE, dagger_finalize(BI.rt));
    BI.rt = NULL;
}

static void expect_bad_rt_int(int (*fn)(const dagger_runtime_t *), const char *name)
{
    cr_expect_eq(fn(NULL), -1, "%s(NULL)", name);
    cr_expect_eq(fn(BI.dead), -1, "%s(finalized)", name);
    cr_expect_eq(fn((dagger_runtime_t *)BI.foreign), -1, "%s(foreign)", name);
    cr_expect_geq(fn(BI.rt), 0, "%s(live)", name);
}

void bi_probe_dagger_rank(void)
{
    expect_bad_rt_int(dagger_rank, "dagger_rank");
}

void bi_probe_dagger_nranks(void)
{
    expect_bad_rt_int(dagger_nranks, "dagger_nranks");
}

void bi_probe_dagger_num_threads(void)
{
    expect_bad_rt_int(dagger_num_threads, "dagger_num_threads");
}

void bi_probe_dagger_strerror(void)
{
    for (int s = 1; s >= -1000; s--) {
        const char *m = dagger_strerror((dagger_status_t)s);
        cr_assert(m && m[0], "dagger_strerror(%d) is NULL or empty", s);
    }
    cr_expect(dagger_strerror((dagger_status_t)0x7fffffff) != NULL);
    cr_expect(strstr(dagger_strerror(DAGGER_ERR_SCOPE), "DAGGER_ERR_SCOPE"));
}

static void *detail_on_new_thread(void *out)
{
    *(const char **)out = dagger_error_detail();
    return NULL;
}

void bi_probe_dagger_error_detail(void)
{
    const char *fresh = NULL;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, detail_on_new_thread, &fresh), 0);
    pthread_join(th, NULL);
    cr_expect(fresh && !fresh[0], "a thread with no failing call has an empty detail");
    dagger_chunk_free(BI.rt, BI.c_gone);
    cr_expect(strstr(dagger_error_detail(), "dagger_chunk_free"), "%s", dagger_error_detail());
}

void bi_probe_dagger_dtype_size(void)
{
    cr_expect_eq(dagger_dtype_size((dagger_dtype_t)0), 0);
    cr_expect_eq(dagger_dtype_size((dagger_dtype_t)99), 0);
    cr_expect_eq(dagger_dtype_size((dagger_dtype_t)-1), 0);
    cr_expect_eq(dagger_dtype_size(DAGGER_F64), 8);
}

/* Every pointer may be NULL; the parts agree with the number and with the
 * headers this test was compiled against (the same build). */
void bi_probe_dagger_version(void)
{
    cr_expect_eq(dagger_version(NULL, NULL, NULL), DAGGER_VERSION);
    int major = -1, minor = -1, patch = -1;
    cr_expect_eq(dagger_version(&major, NULL, NULL), DAGGER_VERSION);
    cr_expect_eq(major, DAGGER_VERSION_MAJOR);
    cr_expect_eq(dagger_version(NULL, &minor, &patch), DAGGER_VERSION);
    cr_expect_eq(minor, DAGGER_VERSION_MINOR);
    cr_expect_eq(patch, DAGGER_VERSION_PATCH);
    cr_expect_eq(major * 10000 + minor * 100 + patch, DAGGER_VERSION);
    cr_expect(minor < 100 && patch < 100, "the DAGGER_VERSION number needs minor, patch < 100");
}
