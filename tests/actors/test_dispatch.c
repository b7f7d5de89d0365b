/* Worker threads: how many, where they run, and that an idle system sleeps
 * instead of spinning (four ranks on two cores is the normal test setting). */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "act_test.h"

static double process_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Binds every thread of this process, as a launcher does before exec
 * (hwloc reads the process binding as the union over its threads). */
static void bind_process(const cpu_set_t *set)
{
    DIR *d = opendir("/proc/self/task");
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            cr_assert_eq(sched_setaffinity(atoi(e->d_name), sizeof(*set), set), 0);
    closedir(d);
}

typedef struct {
    _Atomic long count;
    cpu_set_t cpus[4];
    _Atomic int seen[4];
} where_t;

static dagger_status_t on_where(dagger_ctx_t *ctx)
{
    where_t *w = dagger_ctx_state(ctx);
    int k = dagger_ctx_worker(ctx);
    if (k >= 0 && k < 4 && !atomic_exchange(&w->seen[k], 1))
        pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), &w->cpus[k]);
    atomic_fetch_add(&w->count, 1);
    return DAGGER_OK;
}

/* One pinned actor per worker reports its worker thread's CPU set. */
static void probe_workers(dg_act_system_t *sys, int n, where_t *w)
{
    uint32_t T = act_test_type(sys, "ds.where", DAGGER_MSG_FIXED, 0);
    for (int k = 0; k < n; k++) {
        dagger_handler_t h[] = {{T, on_where}};
        dagger_actor_desc_t d = {.name = "probe", .state = w, .handlers = h, .nhandlers = 1,
                                 .pin = 1, .worker = k};
        dagger_actor_addr_t a;
        cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_OK);
        cr_assert_eq(dg_act_send(sys, dg_act_self_or_none(sys), a, T, 0, 0, NULL, 0, "t"), DAGGER_OK);
    }
    ACT_WAIT_FOR(&w->count, n);
    dg_act_system_stop_all(sys);
}

Test(dispatch, idle_workers_sleep_instead_of_spinning, .timeout = 30)
{
    dg_act_system_t *sys = act_test_system(2);
    where_t w = {0};
    probe_workers(sys, 2, &w); /* some activity first */
    act_test_sleep_ms(20);     /* longer than the spin phase */
    double cpu0 = process_cpu_seconds(), t0 = act_test_now();
    act_test_sleep_ms(300);
    double cpu = process_cpu_seconds() - cpu0, wall = act_test_now() - t0;
    dg_act_system_destroy(sys);
    cr_assert_lt(cpu, 0.1 * wall, "idle system used %.1f ms of CPU in %.0f ms", 1e3 * cpu, 1e3 * wall);
}

Test(dispatch, thread_count_follows_the_parameter)
{
    for (int n = 1; n <= 3; n++) {
        dg_act_system_t *sys = act_test_system(n);
        cr_assert_eq(dg_act_system_num_workers(sys), n);
        dg_act_system_destroy(sys);
    }
}

Test(dispatch, default_thread_count_is_one_per_core_of_the_binding)
{
    cpu_set_t mine;
    CPU_ZERO(&mine);
    cr_assert_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
    dg_act_system_t *sys = act_test_system(0);
    int n = dg_act_system_num_workers(sys);
    dg_act_system_destroy(sys);
    cr_assert(n >= 1 && n <= CPU_COUNT(&mine), "%d workers for %d allowed CPUs", n, CPU_COUNT(&mine));

    /* A launcher that binds this process to one CPU gets one worker. */
    int cpu = -1;
    for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
        if (CPU_ISSET(c, &mine))
            cpu = c;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    bind_process(&one);
    sys = act_test_system(0);
    n = dg_act_system_num_workers(sys);
    dg_act_system_destroy(sys);
    bind_process(&mine);
    cr_assert_eq(n, 1, "bound to CPU %d only, yet %d workers", cpu, n);
}

Test(dispatch, bound_workers_are_pinned_to_one_core_of_the_binding_each)
{
    cpu_set_t mine;
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof(mine), &mine);
    dg_act_params_t p = {.rank = 0, .nranks = 1, .num_threads = 3, .bind = 1};
    dg_act_system_t *sys;
    cr_assert_eq(dg_act_system_create(&p, &sys), DAGGER_OK, "%s", dagger_error_detail());
    where_t w = {0};
    probe_workers(sys, 3, &w);
    dg_act_system_destroy(sys);
    for (int k = 0; k < 3; k++) {
        cpu_set_t both;
        CPU_AND(&both, &w.cpus[k], &mine);
        cr_assert(CPU_EQUAL(&both, &w.cpus[k]), "worker %d runs outside the process binding", k);
        cr_assert_geq(CPU_COUNT(&w.cpus[k]), 1);
    }
    if (CPU_COUNT(&mine) >= 2) /* no SMT here: a core is one CPU */
        cr_assert_not(CPU_EQUAL(&w.cpus[0], &w.cpus[1]), "workers 0 and 1 share a core");
    if (CPU_COUNT(&mine) == 2)
        cr_assert(CPU_EQUAL(&w.cpus[2], &w.cpus[0]),
                  "round robin: a third worker on a two-core binding shares the first core");
}

Test(dispatch, unbound_workers_keep_the_process_binding)
{
    cpu_set_t mine;
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof(mine), &mine);
    dg_act_system_t *sys = act_test_system(2);
    where_t w = {0};
    probe_workers(sys, 2, &w);
    dg_act_system_destroy(sys);
    cr_assert(CPU_EQUAL(&w.cpus[0], &mine));
    cr_assert(CPU_EQUAL(&w.cpus[1], &mine));
}

Test(dispatch, bad_parameters_are_rejected)
{
    dg_act_system_t *sys;
    dg_act_params_t p = {.rank = 0, .nranks = 1, .num_threads = -1};
    cr_assert_eq(dg_act_system_create(&p, &sys), DAGGER_ERR_INVALID_ARG);
    p = (dg_act_params_t){.rank = 2, .nranks = 2};
    cr_assert_eq(dg_act_system_create(&p, &sys), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(dg_act_system_create(NULL, &sys), DAGGER_ERR_INVALID_ARG);
}
