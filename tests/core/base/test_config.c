/* The DAGGER_* settings table: defaults, parsing, bad values, unknown names. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/config.h"

Test(config, defaults_when_unset)
{
    unsetenv("DAGGER_NUM_THREADS");
    unsetenv("DAGGER_EAGER_LIMIT");
    unsetenv("DAGGER_HUGE_PAGES");
    dg_config_t cfg;
    cr_assert_eq(dg_config_load(&cfg, NULL), DAGGER_OK);
    cr_assert_eq(cfg.huge_pages, 1);
    cr_assert_eq(cfg.num_threads, 0);
    cr_assert_eq(cfg.eager_limit, 8192);
    cr_assert_eq(cfg.bind_threads, 1);
    cr_assert_str_eq(cfg.trace_dir, "");
}

Test(config, values_parse)
{
    setenv("DAGGER_NUM_THREADS", "3", 1);
    setenv("DAGGER_EAGER_LIMIT", "16k", 1);
    setenv("DAGGER_BIND_THREADS", "off", 1);
    setenv("DAGGER_HANG_TIMEOUT", "2.5", 1);
    dg_config_t cfg;
    cr_assert_eq(dg_config_load(&cfg, NULL), DAGGER_OK);
    cr_assert_eq(cfg.num_threads, 3);
    cr_assert_eq(cfg.eager_limit, 16384);
    cr_assert_eq(cfg.bind_threads, 0);
    cr_assert_float_eq(cfg.hang_timeout, 2.5, 1e-12);
}

Test(config, bad_value_names_the_variable)
{
    setenv("DAGGER_NUM_THREADS", "many", 1);
    dg_config_t cfg;
    cr_assert_eq(dg_config_load(&cfg, NULL), DAGGER_ERR_CONFIG);
    cr_assert(strstr(dagger_error_detail(), "DAGGER_NUM_THREADS") != NULL);
    setenv("DAGGER_NUM_THREADS", "2", 1);
    setenv("DAGGER_EAGER_LIMIT", "-5", 1);
    cr_assert_eq(dg_config_load(&cfg, NULL), DAGGER_ERR_CONFIG);
    cr_assert(strstr(dagger_error_detail(), "DAGGER_EAGER_LIMIT") != NULL);
}

Test(config, unknown_settings_are_reported)
{
    setenv("DAGGER_NUM_THREDS", "2", 1);
    const char *unknown = NULL;
    dg_config_t cfg;
    cr_assert_eq(dg_config_load(&cfg, &unknown), DAGGER_OK);
    cr_assert_not_null(unknown);
    cr_assert(strstr(unknown, "DAGGER_NUM_THREDS") != NULL);
}

/* DAGGER_LAUNCHER is tools/dagger-run's (which forwards every DAGGER_*
 * variable to the ranks): no rank calls it unknown. */
Test(config, the_tools_names_are_not_unknown)
{
    setenv("DAGGER_LAUNCHER", "mpirun", 1);
    const char *unknown = NULL;
    dg_config_t cfg;
    cr_assert_eq(dg_config_load(&cfg, &unknown), DAGGER_OK);
    cr_assert(!unknown || !strstr(unknown, "DAGGER_LAUNCHER"), "%s", unknown);
}
