/* The UCX defaults the runtime changes (transport/tx_ucx_defaults.h): only
 * where the user chose nothing, and in a form this UCX accepts (a key it
 * does not know would be dropped with a warning at worker creation). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucs/debug/log_def.h>

#include "transport/tx_ucx_defaults.h"

static const char *const grow_vars[] = {"UCX_MM_RX_BUFS_GROW", "UCX_POSIX_RX_BUFS_GROW",
                                        "UCX_SYSV_RX_BUFS_GROW", "UCX_XPMEM_RX_BUFS_GROW"};

static void unset_grow_vars(void)
{
    for (size_t i = 0; i < sizeof(grow_vars) / sizeof(grow_vars[0]); i++)
        unsetenv(grow_vars[i]);
}

Test(ucx_defaults, any_of_the_variables_is_the_users_choice, .init = unset_grow_vars)
{
    cr_assert_eq(dg_tx_mm_rx_grow_user_set(), 0);
    for (size_t i = 0; i < sizeof(grow_vars) / sizeof(grow_vars[0]); i++) {
        setenv(grow_vars[i], "512", 1);
        cr_assert_eq(dg_tx_mm_rx_grow_user_set(), 1, "%s set", grow_vars[i]);
        unsetenv(grow_vars[i]);
    }
}

Test(ucx_defaults, applied_only_where_the_user_chose_nothing, .init = unset_grow_vars)
{
    ucp_config_t *c;
    cr_assert_eq(ucp_config_read(NULL, NULL, &c), UCS_OK);
    cr_assert_eq(dg_tx_ucx_defaults(c, "all"), 1);
    ucp_config_release(c);
    setenv("UCX_SYSV_RX_BUFS_GROW", "256", 1);
    cr_assert_eq(ucp_config_read(NULL, NULL, &c), UCS_OK);
    cr_assert_eq(dg_tx_ucx_defaults(c, "all"), 0, "the user's UCX_SYSV_RX_BUFS_GROW must win");
    ucp_config_release(c);
}

/* Which transport lists open a shared-memory (mm) interface. */
Test(ucx_defaults, transport_lists_that_open_shared_memory)
{
    const char *opens[] = {NULL, "", "all", "sm", "shm", "posix", "sysv", "tcp,posix", "self,sm",
                           "^sysv", "^tcp", "^posix", "^cma,tcp", "xpmem,tcp"};
    const char *not[] = {"tcp", "self", "tcp,self", "rc,ud", "^sm", "^shm", "^posix,sysv",
                         "^sysv,tcp,posix", "^all", "posixx", "sysvsomething,tcp"};
    for (size_t i = 0; i < sizeof(opens) / sizeof(opens[0]); i++)
        cr_assert_eq(dg_tx_tls_opens_mm(opens[i]), 1, "'%s' opens posix or sysv",
                     opens[i] ? opens[i] : "(null)");
    for (size_t i = 0; i < sizeof(not) / sizeof(not[0]); i++)
        cr_assert_eq(dg_tx_tls_opens_mm(not[i]), 0, "'%s' opens no mm transport", not[i]);
}

/* UCX's warnings while a context and a worker come up. */
static char warnings[4096];

__attribute__((format(printf, 6, 0))) static ucs_log_func_rc_t catch_warning(const char *file, unsigned line, const char *function,
                                       ucs_log_level_t level,
                                       const ucs_log_component_config_t *comp, const char *msg,
                                       va_list ap)
{
    (void)file, (void)line, (void)function, (void)comp;
    if (level <= UCS_LOG_LEVEL_WARN) {
        size_t n = strlen(warnings);
        va_list aq;
        va_copy(aq, ap);
        vsnprintf(warnings + n, sizeof(warnings) - n, msg, aq);
        va_end(aq);
        n = strlen(warnings);
        if (n + 1 < sizeof(warnings))
            strcat(warnings, "\n");
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

/* A context and a worker with the defaults for transport list tls (NULL:
 * UCX's default): UCX's warnings while they come up, in warnings. */
static void bring_up(const char *tls)
{
    ucp_config_t *c;
    cr_assert_eq(ucp_config_read(NULL, NULL, &c), UCS_OK);
    if (tls)
        cr_assert_eq(ucp_config_modify(c, "TLS", tls), UCS_OK);
    (void)dg_tx_ucx_defaults(c, tls);
    warnings[0] = 0;
    ucs_log_push_handler(catch_warning);
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                      .features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP};
    ucp_context_h ctx;
    ucs_status_t st = ucp_init(&p, c, &ctx);
    ucp_config_release(c);
    ucp_worker_h w = NULL;
    if (st == UCS_OK) {
        ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                                  .thread_mode = UCS_THREAD_MODE_SERIALIZED};
        st = ucp_worker_create(ctx, &wp, &w);
    }
    ucs_log_pop_handler();
    cr_assert_eq(st, UCS_OK, "transports %s: %s", tls ? tls : "(default)", ucs_status_string(st));
    ucp_worker_destroy(w);
    ucp_cleanup(ctx);
}

/* The default and shared-memory lists take the setting (UCX knows the key
 * and an opened interface uses it); tcp alone gets none, so UCX has nothing
 * to warn about. */
Test(ucx_defaults, this_ucx_takes_the_setting_without_a_warning, .init = unset_grow_vars)
{
    const char *lists[] = {NULL, "posix,self", "^sysv", "tcp", "tcp,self"};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        bring_up(lists[i]);
        cr_assert_null(strstr(warnings, "RX_BUFS_GROW"), "transports %s: UCX did not take the "
                       "setting: %s", lists[i] ? lists[i] : "(default)", warnings);
    }
}
