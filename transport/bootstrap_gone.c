/* A rank of this host that died before it published its start-up data.
 *
 * The others wait for that data in the exchange (bootstrap_exchange.c), and
 * the process checks of tx_liveness.c cannot help yet: the pid is in the
 * data. Open MPI's mpirun ends the job itself, and Slurm's PMIx plugin does
 * once the rank had connected to it; but a rank killed before PMIx_Init
 * under srun without --kill-on-bad-exit left the others waiting for the
 * exchange's timeout (DG_BOOT_TIMEOUT_S). So look for the rank's process
 * instead: any process of this host whose environment names our PMIx
 * namespace and that rank (launchers set PMIX_NAMESPACE and PMIX_RANK for
 * their clients; a test runner's per-test processes inherit them). Seen
 * once and then absent, it is gone; never seen, it is gone after
 * DG_BOOT_GONE_S, a grace for a launcher that has not started every local
 * rank yet. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/common.h"
#include "transport/bootstrap_pmix.h"

#define DG_BOOT_GONE_S 2.0
#define DG_BOOT_GONE_LOOK_S 0.25

/* Whether rank is in PMIX_LOCAL_PEERS ("0,1,5"); 0 when that is unknown. */
static int is_local(const struct dg_boot_pmix *px, int rank)
{
    pmix_proc_t job;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&job, px->me.nspace, PMIX_RANK_WILDCARD);
    int found = 0;
    if (PMIx_Get(&job, PMIX_LOCAL_PEERS, NULL, 0, &val) == PMIX_SUCCESS && val &&
        val->type == PMIX_STRING && val->data.string) {
        for (const char *p = val->data.string; *p && !found;) {
            char *end;
            long r = strtol(p, &end, 10);
            if (end == p)
                break;
            found = r == rank;
            p = *end == ',' ? end + 1 : end;
        }
    }
    if (val)
        PMIX_VALUE_RELEASE(val);
    return found;
}

/* One NUL-terminated entry of an environment: notes our namespace and the
 * rank. Entries longer than the buffer are not ours (cut, they never match). */
static void environ_entry(const char *e, const char *ns_entry, int *in_ns, long *rank)
{
    *in_ns |= !strcmp(e, ns_entry);
    if (!strncmp(e, "PMIX_RANK=", 10))
        *rank = strtol(e + 10, NULL, 10);
}

int dg_boot_environ_rank(const char *pid, const char *ns_entry)
{
    char path[64], buf[4096], entry[512];
    snprintf(path, sizeof(path), "/proc/%s/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int in_ns = 0;
    long rank = -1;
    size_t used = 0; /* bytes of the current entry in entry[] */
    /* Read in pieces: an environment can be far larger than any buffer here. */
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\0') {
                entry[used < sizeof(entry) ? used : sizeof(entry) - 1] = '\0';
                if (used < sizeof(entry))
                    environ_entry(entry, ns_entry, &in_ns, &rank);
                used = 0;
            } else if (used < sizeof(entry)) {
                entry[used++] = buf[i];
            }
        }
    close(fd);
    return in_ns && rank >= 0 && rank <= 0x7fffffff ? (int)rank : -1;
}

/* Whether a process of rank runs on this host (a zombie's environment
 * reads empty: it does not count). */
static int rank_runs_here(const struct dg_boot_pmix *px, int rank)
{
    char ns[PMIX_MAX_NSLEN + 32];
    snprintf(ns, sizeof(ns), "PMIX_NAMESPACE=%s", px->me.nspace);
    DIR *d = opendir("/proc");
    if (!d)
        return 1; /* cannot tell: assume it runs */
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));)
        found = e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
                dg_boot_environ_rank(e->d_name, ns) == rank;
    closedir(d);
    return found;
}

int dg_boot_gone_check(dg_boot_t *boot, int rank, dg_boot_gone_t *g, double now)
{
    struct dg_boot_pmix *px = boot->pmix;
    if (!px || rank == boot->rank)
        return 0;
    if (g->rank != rank)
        *g = (dg_boot_gone_t){.rank = rank, .local = -1};
    if (now < g->next_look)
        return 0;
    g->next_look = now + DG_BOOT_GONE_LOOK_S;
    if (g->local < 0)
        g->local = is_local(px, rank);
    if (!g->local)
        return 0;
    if (rank_runs_here(px, rank)) {
        g->seen = 1;
        g->absent_since = 0;
        return 0;
    }
    if (g->absent_since == 0)
        g->absent_since = now;
    return g->seen || now - g->absent_since >= DG_BOOT_GONE_S;
}
