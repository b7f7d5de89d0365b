/* Task slots (core/exec/exec.c, take_slot): a rank runs at most as many long
 * tasks at once as it has workers, counting the submitting thread, which
 * runs ready tasks while it waits at region end. Without the cap, one
 * worker and the waiting thread ran two 1 ms tasks side by side about half
 * of the time (2 ranks x 1 worker on 2 cores: four BLAS tiles time-sliced
 * on two cores). */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int inside, overlapped, ran;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* About 1 ms of work; counts the runs that started beside another. */
static int busy(dagger_task_t *t)
{
    (void)t;
    if (atomic_fetch_add(&inside, 1) > 0)
        atomic_fetch_add(&overlapped, 1);
    double end = now() + 1e-3;
    volatile double x = 0;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            x += i;
    atomic_fetch_sub(&inside, 1);
    atomic_fetch_add(&ran, 1);
    return x >= 0 ? DAGGER_OK : dagger_task_fail(t, "the busy loop's sum is negative");
}

/* n rounds of a fan-out: a task on c[0], then two that read it and each
 * write a chunk of their own; both become ready when the first ends, one
 * for the worker and one for the waiting thread. */
static void run_fans(dagger_runtime_t *rt, dagger_codelet_t cl, const dagger_chunk_t *c, int n)
{
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(dagger_spawn(r, cl, DAGGER_INOUT(dagger_view(rt, c[0])), DAGGER_END),
                     DAGGER_OK, "%s", dagger_error_detail());
        for (int k = 1; k <= 2; k++)
            cr_assert_eq(dagger_spawn(r, cl, DAGGER_IN(dagger_view(rt, c[0])),
                                      DAGGER_OUT(dagger_view(rt, c[k])), DAGGER_END),
                         DAGGER_OK, "%s", dagger_error_detail());
    }
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
}

Test(task_slots, one_worker_and_the_waiting_thread_run_one_long_task_at_a_time)
{
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, &(dagger_params_t){.num_threads = 1}, &rt), DAGGER_OK,
                 "%s", dagger_error_detail());
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "busy", .cpu = busy},
                                         &cl),
                 DAGGER_OK);
    dagger_chunk_t c[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(dagger_chunk_create(rt, &(dagger_chunk_desc_t){.dtype = DAGGER_F64,
                                                 .ndims = 1, .dims = {1}, .owner = 0}, &c[i]),
                     DAGGER_OK);
    run_fans(rt, cl, c, 2); /* the runtime learns that busy runs long */
    atomic_store(&overlapped, 0);
    atomic_store(&ran, 0);
    run_fans(rt, cl, c, 20);
    cr_assert_eq(atomic_load(&ran), 60);
    /* Without the cap about one run in three starts beside another (each
     * fan's second reader, whenever the waiting thread is awake). */
    cr_assert_eq(atomic_load(&overlapped), 0, "%d of 60 long tasks started beside another",
                 atomic_load(&overlapped));
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}
