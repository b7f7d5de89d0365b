/* Which PMIx data store (GDS component) the rank's PMIx client uses.
 *
 * PMIx 4.2's shared-memory stores hang under Criterion's process-per-test
 * pattern: ds21 gives each local process a lock slot (one per local rank)
 * that a client never gives back, so from a rank's second process on the
 * client silently falls back to ds12, one process-shared rwlock (writer
 * preferred, not robust) that a client dying while it reads leaves held:
 * the server's next write waits for ever and every later reader blocks in
 * PMIx_Init (pmix_ds12_lock_rd_get). See docs/transport.md, Known flake.
 * The hash store has no shared lock: values come from the server by
 * message. The user's own PMIX_MCA_gds always wins. */
#ifndef DG_BOOTSTRAP_GDS_H
#define DG_BOOTSTRAP_GDS_H

#define DG_BOOT_GDS_DEFAULT "hash"

/* The GDS the client will be told to use: the user's value when set
 * (even empty: PMIx's own choice), else DG_BOOT_GDS_DEFAULT. */
const char *dg_boot_gds_choice(const char *user_value);

/* Sets PMIX_MCA_gds for PMIx_Init when the user has not (before PMIx_Init,
 * while the process has one thread: setenv is not thread-safe). */
void dg_boot_gds_select(void);

#endif
