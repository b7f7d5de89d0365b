/* PMIx is loaded where a launcher started the process, not linked
 * (transport/pmix_lib.h): a singleton's dagger_init + dagger_finalize leave
 * it unmapped, and then the loader finds every routine the bootstrap calls.
 * (Every multi-rank test runs the loaded path: their ranks bootstrap through
 * it.) This test's executable links libdagger and Criterion, not PMIx. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdlib.h>

/* The table's fields by name (the redirections would rename them). */
#define DG_PMIX_LIB_NO_REDIRECT 1
#include "proc_maps.h"
#include "transport/pmix_lib.h"

Test(pmix_lib, a_singleton_maps_no_pmix_then_every_routine_is_found)
{
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_RANK");
    cr_assert(!proc_maps_has("libpmix"), "PMIx is mapped before dagger_init: is the test linked "
              "with it?");
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    cr_assert(!proc_maps_has("libpmix"), "a singleton mapped PMIx, which it never calls");

    char why[1024] = "";
    cr_assert_eq(dg_pmix_load(why, sizeof(why)), 0, "%s", why);
    cr_assert(proc_maps_has("libpmix"));
#define DG_PMIX_CHECK(name) cr_assert_not_null(dg_pmix.name, "%s not found", #name);
    DG_PMIX_SYMS(DG_PMIX_CHECK)
#undef DG_PMIX_CHECK
    cr_assert_str_neq(dg_pmix.PMIx_Get_version(), "", "a call through the table reaches PMIx");
}
