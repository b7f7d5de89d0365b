/* The PMIx client's connection to its server without Nagle's algorithm.
 *
 * OpenPMIx 4.2's client reaches its server over TCP on the loopback where
 * the server's URI names a TCP endpoint (Open MPI 4.1's mpirun, measured
 * here; prterun's server publishes the same kind) and never sets
 * TCP_NODELAY. A request that it writes as a
 * header and a body, and that waits for the answer (PMIx_Commit, PMIx_Get
 * under the hash store, PMIx_Finalize), then stalls once the connection is
 * past TCP's quick acknowledgements: the body waits for the acknowledgement
 * of the header, which the server delays by up to 40 ms because it has
 * nothing to send until the body arrives. Measured on 1 and 2 ranks under
 * mpirun: the Commit of dg_boot_retract at finalize took 37-43 ms with
 * Nagle, 0.3-1 ms without (docs/transport.md, "Bootstrap").
 *
 * The connection is PMIx's own, opened inside PMIx_Init, so it is found by
 * its peer: every socket of the process whose peer is a TCP endpoint of the
 * server's URI (bootstrap_uri.h). A server reached by a Unix socket (Slurm's
 * plugin may be) needs nothing. */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/base/log.h"
#include "transport/bootstrap_pmix.h"
#include "transport/bootstrap_uri.h"

#define DG_BOOT_URI_MAX_EPS 8

extern char **environ;

/* The server's endpoints from every PMIX_SERVER_URI* variable. */
static int server_endpoints(struct sockaddr_storage *eps, int cap)
{
    int n = 0;
    for (char **e = environ; e && *e && n < cap; e++) {
        if (strncmp(*e, "PMIX_SERVER_URI", 15))
            continue;
        const char *value = strchr(*e, '=');
        if (!value)
            continue;
        int got = dg_boot_uri_tcp(value + 1, eps + n, cap - n);
        n += got < cap - n ? got : cap - n;
    }
    return n;
}

static int same_endpoint(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port &&
           !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
}

/* 1 when fd is a TCP socket connected to one of eps. */
static int is_server_socket(int fd, const struct sockaddr_storage *eps, int neps)
{
    int type = 0;
    socklen_t len = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM)
        return 0;
    struct sockaddr_storage peer;
    len = sizeof(peer);
    if (getpeername(fd, (struct sockaddr *)&peer, &len) ||
        (peer.ss_family != AF_INET && peer.ss_family != AF_INET6))
        return 0;
    for (int i = 0; i < neps; i++)
        if (same_endpoint(&peer, &eps[i]))
            return 1;
    return 0;
}

int dg_boot_nodelay(void)
{
    struct sockaddr_storage eps[DG_BOOT_URI_MAX_EPS];
    int neps = server_endpoints(eps, DG_BOOT_URI_MAX_EPS);
    if (!neps)
        return 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int set = 0;
    for (struct dirent *de; (de = readdir(d));) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end || end == de->d_name || fd == dirfd(d) || !is_server_socket((int)fd, eps, neps))
            continue;
        int one = 1;
        if (setsockopt((int)fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0)
            set++;
        else
            dg_log(DG_LOG_DEBUG, "TCP_NODELAY on the PMIx server's socket %ld: %s", fd,
                   strerror(errno));
    }
    closedir(d);
    return set;
}
