/* The thread that creates the actor system (dagger_init's, the one that
 * submits) joins its rank's share of the cores when the ranks of a node run
 * without a launcher's binding (dg_act_system_bind_caller), and gets its own
 * binding back when it destroys the system. Each case runs on a thread of its
 * own, so the test's main thread keeps its binding. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>

#include "actors/system.h"
#include "actors/topology.h"

typedef struct bind_case {
    int local_rank, local_size, bind;
    int bound;                   /* what dg_act_system_bind_caller returned */
    cpu_set_t before, during, after;
    int destroy_elsewhere;       /* 1: another thread destroys the system */
    dg_act_system_t *sys;
} bind_case_t;

static void mine(cpu_set_t *set)
{
    CPU_ZERO(set);
    cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof(*set), set), 0);
}

static void *run_case(void *arg)
{
    bind_case_t *c = arg;
    mine(&c->before);
    dg_act_params_t p = {.rank = c->local_rank, .nranks = c->local_size > 1 ? c->local_size : 1,
                         .num_threads = 1, .local_rank = c->local_rank,
                         .local_size = c->local_size, .bind = c->bind};
    cr_assert_eq(dg_act_system_create(&p, &c->sys), DAGGER_OK, "%s", dagger_error_detail());
    c->bound = dg_act_system_bind_caller(c->sys);
    mine(&c->during);
    if (!c->destroy_elsewhere) {
        dg_act_system_destroy(c->sys);
        c->sys = NULL;
    }
    mine(&c->after);
    return NULL;
}

static void run(bind_case_t *c)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, run_case, c), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
}

/* The PUs of share local_rank of local_size, as the topology deals them. */
static void share_of(int local_rank, int local_size, cpu_set_t *set)
{
    dg_topo_t t;
    cr_assert_eq(dg_topo_init(&t, local_rank, local_size), DAGGER_OK);
    CPU_ZERO(set);
    for (int i = 0; i < t.ncores; i++)
        for (int pu = (int)hwloc_bitmap_first(t.cores[i]); pu >= 0;
             pu = hwloc_bitmap_next(t.cores[i], (unsigned)pu))
            CPU_SET(pu, set);
    int shared = t.shared;
    dg_topo_cleanup(&t);
    if (!shared)
        cr_skip_test("this process is bound (a launcher or taskset): no share to take");
}

/* This thread's CPUs in all, and share local_rank of 2 in share; skips the
 * test where there is no share to take. */
static void need_share(int local_rank, cpu_set_t *all, cpu_set_t *share)
{
    mine(all);
    if (CPU_COUNT(all) < 2)
        cr_skip_test("one CPU: every share is the whole");
    share_of(local_rank, 2, share);
}

Test(bind_caller, a_rank_of_an_unbound_node_pins_its_caller_to_its_share_until_it_destroys)
{
    cpu_set_t all, share;
    need_share(1, &all, &share);
    bind_case_t c = {.local_rank = 1, .local_size = 2, .bind = 1};
    run(&c);
    cr_assert_eq(c.bound, 1);
    cr_assert(CPU_EQUAL(&c.during, &share), "the caller runs on %d CPUs, its share has %d",
              CPU_COUNT(&c.during), CPU_COUNT(&share));
    cr_assert_lt(CPU_COUNT(&c.during), CPU_COUNT(&c.before), "a share is less than the node");
    cr_assert(CPU_EQUAL(&c.after, &c.before), "destroy did not put the caller's binding back");
}

Test(bind_caller, a_process_alone_or_unpinned_keeps_its_caller_as_it_is)
{
    bind_case_t alone = {.local_rank = 0, .local_size = 1, .bind = 1};
    run(&alone);
    cr_assert_eq(alone.bound, 0);
    cr_assert(CPU_EQUAL(&alone.during, &alone.before));
    bind_case_t unpinned = {.local_rank = 1, .local_size = 2, .bind = 0};
    run(&unpinned);
    cr_assert_eq(unpinned.bound, 0);
    cr_assert(CPU_EQUAL(&unpinned.during, &unpinned.before));
}

Test(bind_caller, another_thread_that_destroys_leaves_the_callers_binding_alone)
{
    cpu_set_t all, share;
    need_share(0, &all, &share);
    bind_case_t c = {.local_rank = 0, .local_size = 2, .bind = 1, .destroy_elsewhere = 1};
    run(&c);
    cr_assert_eq(c.bound, 1);
    /* This thread runs on one CPU of its own choosing, unlike the caller's
     * binding before (all of them), which must not land here. */
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &all)) {
            CPU_SET(cpu, &one);
            break;
        }
    cr_assert_eq(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    dg_act_system_destroy(c.sys); /* here, not on the (finished) caller */
    cpu_set_t here;
    mine(&here);
    cr_assert(CPU_EQUAL(&here, &one), "destroying on another thread rebound that thread");
}
