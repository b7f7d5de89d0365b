/* The UCX settings the runtime changes from UCX's own defaults, each only
 * where the user set none of the variables that would choose it. Header
 * only: tools/bench/startup_floor applies the same, so that the start-up
 * floor is what the runtime could reach (docs/transport.md, Settings).
 *
 * The shared-memory transports' first pool of receive buffers: UCX's mm
 * transports (posix, sysv) each allocate their receive buffers in chunks of
 * RX_BUFS_GROW (512 in UCX 1.13) of 8 KiB and write a header into each one
 * when the interface opens, so every process faulted in about 1024 pages
 * of shared memory at start-up, and a page fault costs 15-20 us on a
 * paravirtualised machine: 4-5 ms of each rank's start-up. The runtime
 * copies an eager message out of its buffer in the receive callback (only
 * rendezvous descriptors are kept), so a FIFO's 64 buffers and a few more
 * are what it uses; the pool still grows on demand, by this many. */
#ifndef DG_TX_UCX_DEFAULTS_H
#define DG_TX_UCX_DEFAULTS_H

#include <stdlib.h>
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

/* Applies the runtime's defaults to a configuration read by
 * ucp_config_read; returns how many it applied. A setting UCX refuses is
 * left at UCX's default (start-up goes on). */
static inline int dg_tx_ucx_defaults(ucp_config_t *config)
{
    int applied = 0;
    if (!dg_tx_mm_rx_grow_user_set() &&
        ucp_config_modify(config, "MM_RX_BUFS_GROW", DG_TX_MM_RX_BUFS_GROW) == UCS_OK)
        applied++;
    return applied;
}

#endif
