/* The differential test of the executor (diff_fixture.h) on 1..4 ranks
 * under the launcher: every rank plans the program for all ranks, runs its
 * own op stream on its real executor, whose SEND and RECV ops go over the
 * real transport to the other ranks (early and late arrivals, packed
 * multi-span views), and compares the chunks it owns and the futures it
 * holds with the reference executor's run of all ranks' streams. One
 * program per test (the launcher's bootstrap starts once per process). */
#include "diff_fixture.h"
#include "multirank/mr_tag.h"

static void run_one(uint64_t seed)
{
    g_running = 1;
    mr_tag_test();
    dagger_params_t prm = {.num_threads = 2, .no_bind = 1};
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, &prm, &rt), DAGGER_OK, "%s", dagger_error_detail());
    run_program(seed, rt);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "%s", dagger_error_detail());
    g_running = 0;
}

#define DIFF_TEST(n)                                                           \
    Test(mr_exec_diff, program_##n, .fini = report, .timeout = 240)            \
    {                                                                          \
        run_one(n);                                                            \
    }
DIFF_TEST(1)
DIFF_TEST(2)
DIFF_TEST(3)
DIFF_TEST(4)
DIFF_TEST(5)
DIFF_TEST(6)
DIFF_TEST(7)
DIFF_TEST(8)
