/* Bootstrap without a launcher: a singleton never touches PMIx; with
 * launcher variables but no PMIx server it fails loudly, naming the PMIx
 * error and version, instead of running as one of N silent singletons. */
#include <criterion/criterion.h>
#include <pmix.h>
#include <stdlib.h>
#include <string.h>

#include "transport/bootstrap.h"
#include "transport/bootstrap_gds.h"

static void no_launcher(void)
{
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_RANK");
}

Test(bootstrap, singleton_without_launcher_variables, .init = no_launcher)
{
    dg_boot_t b;
    cr_assert_eq(dg_boot_init(&b), DAGGER_OK);
    cr_assert_eq(b.rank, 0);
    cr_assert_eq(b.size, 1);
    cr_assert_eq(b.local_rank, 0);
    cr_assert_eq(b.local_size, 1);
    cr_assert_eq(b.singleton, 1);
    cr_assert_null(b.pmix, "a singleton must not initialise PMIx");
    cr_assert_gt(strlen(b.hostname), 0);
    const char msg[] = "hello";
    void *all;
    size_t off[2];
    cr_assert_eq(dg_boot_allgather(&b, msg, sizeof(msg), NULL, NULL, &all, off), DAGGER_OK);
    cr_assert_eq(off[0], 0);
    cr_assert_eq(off[1], sizeof(msg));
    cr_assert_str_eq(all, msg);
    free(all);
    cr_assert_eq(dg_boot_allgather(&b, NULL, 0, NULL, NULL, &all, off), DAGGER_OK);
    cr_assert_eq(off[1], 0);
    free(all);
    dg_boot_finalize(&b);
    dg_boot_finalize(&b); /* twice is harmless */
}

static void check_loud_failure(void)
{
    dg_boot_t b;
    dagger_status_t st = dg_boot_init(&b);
    cr_assert_eq(st, DAGGER_ERR_BOOTSTRAP, "got %s", dagger_strerror(st));
    const char *d = dagger_error_detail();
    cr_assert(strstr(d, "PMIx_Init failed"), "detail: %s", d);
    cr_assert(strstr(d, PMIx_Get_version()), "detail lacks the PMIx version: %s", d);
    cr_assert(strstr(d, "unset PMIX_NAMESPACE"), "detail does not say what to do: %s", d);
    cr_assert_eq(b.size, 0, "a failed bootstrap must not look like a singleton");
    dg_boot_finalize(&b);
}

Test(bootstrap, launcher_variables_without_server_fail_loudly, .init = no_launcher)
{
    setenv("PMIX_NAMESPACE", "dagger-test-no-such-job", 1);
    setenv("PMIX_RANK", "0", 1);
    check_loud_failure();
}

Test(bootstrap, rank_variable_alone_is_a_launcher_too, .init = no_launcher)
{
    setenv("PMIX_RANK", "3", 1);
    check_loud_failure();
}

Test(bootstrap, arguments_are_checked)
{
    cr_assert_eq(dg_boot_init(NULL), DAGGER_ERR_INVALID_ARG);
    dg_boot_t b = {.size = 1, .singleton = 1};
    void *all;
    cr_assert_eq(dg_boot_allgather(&b, NULL, 4, NULL, NULL, &all, (size_t[2]){0}), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(dg_boot_watch(NULL, NULL, NULL), DAGGER_ERR_INVALID_ARG);
}

/* The PMIx data store choice (bootstrap_gds.h): hash unless the user chose. */
Test(bootstrap, gds_is_hash_unless_the_user_chose)
{
    cr_assert_str_eq(dg_boot_gds_choice(NULL), "hash");
    cr_assert_str_eq(dg_boot_gds_choice("ds21"), "ds21");
    cr_assert_str_eq(dg_boot_gds_choice(""), "");
    unsetenv("PMIX_MCA_gds");
    dg_boot_gds_select();
    cr_assert_str_eq(getenv("PMIX_MCA_gds"), "hash");
    setenv("PMIX_MCA_gds", "ds21,ds12", 1);
    dg_boot_gds_select();
    cr_assert_str_eq(getenv("PMIX_MCA_gds"), "ds21,ds12", "the user's choice was overwritten");
}
