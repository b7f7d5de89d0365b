/* Differential test of the executor: random programs (1-D and 2-D chunks of
 * three element types, sub-views with every modifier, reads, writes and
 * updates, values, futures returned and read back, priorities, explicit
 * dependencies, several regions, chunks freed on the way) are planned by the
 * planner (one rank, the tests/planner fixture); the op stream it emits runs
 * through the reference executor (tests/support/plan_sim.c) and through the
 * real executor of a live one-rank runtime (its workers, ready queues,
 * lock-free edges, memory-space actor and buffer table), and every chunk and
 * future must end byte-identical in both.
 *
 * One rank has no SEND and RECV: mr_exec_diff.c runs the same programs on
 * 1..4 ranks under the launcher. Not covered: device ops. The fixture is
 * diff_fixture.h. DG_EXEC_DIFF_SEED=S runs one program,
 * DG_EXEC_DIFF_PROGRAMS=N runs N programs; a failing seed is printed. */
#include "diff_fixture.h"

/* Programs per run: fewer under the sanitizers (each program starts a runtime). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DIFF_DEFAULT 30
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DIFF_DEFAULT 30
#endif
#endif
#ifndef DIFF_DEFAULT
#define DIFF_DEFAULT 150
#endif

/* One runtime per program: chunk ids and op numbers start again at 1. */
static void run_seed(uint64_t seed)
{
    dagger_params_t prm = {.num_threads = 2, .no_bind = 1};
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, &prm, &rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_num_threads(rt), 2);
    run_program(seed, rt);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "%s", dagger_error_detail());
}

Test(exec_diff, planned_streams_agree_with_the_reference_executor, .fini = report, .timeout = 600)
{
    g_running = 1;
    const char *one = getenv("DG_EXEC_DIFF_SEED");
    const char *env = getenv("DG_EXEC_DIFF_PROGRAMS");
    uint64_t first = one ? strtoull(one, NULL, 0) : 1;
    uint64_t n = one ? 1 : env ? strtoull(env, NULL, 0) : DIFF_DEFAULT;
    for (uint64_t s = first; s < first + n; s++)
        run_seed(s);
    g_running = 0;
}
