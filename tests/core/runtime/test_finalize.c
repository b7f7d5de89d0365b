/* dagger_finalize: what happens to a region the program left open. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int ran;

static int count(dagger_task_t *t)
{
    (void)t;
    atomic_fetch_add(&ran, 1);
    return DAGGER_OK;
}

Test(finalize, an_open_region_is_ended_and_reported)
{
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "count", .cpu = count},
                                         &cl), DAGGER_OK);
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(dagger_spawn(r, cl, DAGGER_END), DAGGER_OK);
    dagger_status_t st = dagger_finalize(rt);
    cr_assert_eq(st, DAGGER_ERR_STATE, "got %s", dagger_strerror(st));
    const char *why = dagger_error_detail();
    cr_assert(strstr(why, "region 1 was still open") && strstr(why, "dagger_region_end"),
              "detail: %s", why);
    cr_assert_eq(atomic_load(&ran), 3, "the open region's tasks ran before the runtime went down");
}

Test(finalize, without_an_open_region_is_ok)
{
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "%s", dagger_error_detail());
}
