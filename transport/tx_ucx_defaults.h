/* The UCX settings the runtime changes from UCX's own defaults, each only
 * where the user set none of the variables that would choose it. Header
 * only: tools/bench/startup_floor applies the same, so that the start-up
 * floor is what the runtime could reach (docs/transport.md, Settings).
 *
 * The shared-memory transports' first pool of receive buffers: UCX's mm
 * transports (posix, sysv) each allocate their receive buffers in chunks of
 * RX_BUFS_GROW (512 in UCX 1.13) of 8 KiB and write a header into each one
 * when the interface opens, so every process faulted in about 1024 pages
 * of shared memory at start-up, and a page fault costs 10-20 us on a
 * paravirtualised machine: 4-5 ms of each rank's start-up. The runtime
 * copies an eager message out of its buffer in the receive callback (only
 * rendezvous descriptors are kept), so a FIFO's 64 buffers and a few more
 * are what it uses; the pool still grows on demand, by this many. Not
 * set where the transport list opens no mm transport (UCX_TLS=tcp): UCX
 * would warn that nothing took it. */
#ifndef DG_TX_UCX_DEFAULTS_H
#define DG_TX_UCX_DEFAULTS_H

#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define DG_TX_MM_RX_BUFS_GROW "128"

/* 1 when the user chose the mm transports' pool growth through any of the
 * variables UCX reads for it. */
static inline int dg_tx_mm_rx_grow_user_set(void)
{
    static const char *const vars[] = {"UCX_MM_RX_BUFS_GROW", "UCX_POSIX_RX_BUFS_GROW",
                                       "UCX_SYSV_RX_BUFS_GROW", "UCX_XPMEM_RX_BUFS_GROW"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

/* 1 when the comma-separated list tls holds name as a whole item. */
static inline int dg_tx_tls_has(const char *tls, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = tls; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* 1 when a UCX transport list (UCX_TLS's syntax; NULL or empty: UCX's
 * default, all) lets UCX open one of the mm transports (posix, sysv,
 * xpmem), whose setting MM_RX_BUFS_GROW is: a setting that no opened
 * interface takes makes UCX warn "invalid configuration" at worker
 * creation. A list that excludes posix and sysv counts as excluding them
 * all (xpmem needs a kernel module that few machines have). */
static inline int dg_tx_tls_opens_mm(const char *tls)
{
    static const char *const groups[] = {"all", "sm", "shm", "mm"};
    if (!tls || !*tls)
        return 1;
    int negated = tls[0] == '^';
    const char *list = tls + negated;
    int group = 0;
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
        group |= dg_tx_tls_has(list, groups[i]);
    int posix = dg_tx_tls_has(list, "posix"), sysv = dg_tx_tls_has(list, "sysv");
    if (negated)
        return !group && !(posix && sysv);
    return group || posix || sysv || dg_tx_tls_has(list, "xpmem");
}

/* Applies the runtime's defaults to a configuration read by
 * ucp_config_read, for the transport list tls (as UCX_TLS; NULL: the
 * environment's UCX_TLS, or UCX's default); returns how many it applied. A
 * setting UCX refuses is left at UCX's default (start-up goes on). A
 * UCX_TLS in UCX's configuration file is not seen here. */
static inline int dg_tx_ucx_defaults(ucp_config_t *config, const char *tls)
{
    int applied = 0;
    if (!tls)
        tls = getenv("UCX_TLS");
    if (!dg_tx_mm_rx_grow_user_set() && dg_tx_tls_opens_mm(tls) &&
        ucp_config_modify(config, "MM_RX_BUFS_GROW", DG_TX_MM_RX_BUFS_GROW) == UCS_OK)
        applied++;
    return applied;
}

#endif
