/* A PMIx server URI from the launcher's environment
 * (transport/bootstrap_uri.c, read by bootstrap_nodelay.c): any text gives
 * endpoints that print back to a URI that reads the same. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "fuzz.h"
#include "transport/bootstrap_uri.h"

#define CAP 4

/* Appends ep as a URI part to text (room for CAP parts). */
static void print_part(char *text, size_t cap, const struct sockaddr_storage *ep)
{
    char addr[INET6_ADDRSTRLEN];
    size_t used = strlen(text);
    if (ep->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)ep;
        DG_FUZZ_CHECK(inet_ntop(AF_INET, &in->sin_addr, addr, sizeof(addr)));
        DG_FUZZ_CHECK(ntohs(in->sin_port) != 0);
        snprintf(text + used, cap - used, ";tcp4://%s:%u", addr, (unsigned)ntohs(in->sin_port));
    } else {
        DG_FUZZ_CHECK(ep->ss_family == AF_INET6);
        const struct sockaddr_in6 *in6 = (const void *)ep;
        DG_FUZZ_CHECK(inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof(addr)));
        DG_FUZZ_CHECK(ntohs(in6->sin6_port) != 0);
        snprintf(text + used, cap - used, ";tcp6://[%s]:%u", addr, (unsigned)ntohs(in6->sin6_port));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *uri = malloc(size + 1);
    memcpy(uri, data, size);
    uri[size] = '\0';
    struct sockaddr_storage eps[CAP], one[1];
    int n = dg_boot_uri_tcp(uri, eps, CAP);
    DG_FUZZ_CHECK(n >= 0 && (size_t)n <= size / 10);
    DG_FUZZ_CHECK(dg_boot_uri_tcp(uri, one, 1) == n);
    DG_FUZZ_CHECK(n == 0 || !memcmp(&one[0], &eps[0], sizeof(one[0])));
    free(uri);
    char text[CAP * 64] = "server";
    for (int i = 0; i < n && i < CAP; i++)
        print_part(text, sizeof(text), &eps[i]);
    struct sockaddr_storage again[CAP];
    int m = dg_boot_uri_tcp(text, again, CAP);
    DG_FUZZ_CHECK(m == (n < CAP ? n : CAP));
    for (int i = 0; i < m; i++)
        DG_FUZZ_CHECK(!memcmp(&again[i], &eps[i], sizeof(eps[i])));
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    static const char *const seeds[] = {
        "1739128832.0;tcp4://127.0.0.1:45559",
        "prterun-host-123@0.0;tcp4://10.1.2.3:7;tcp6://[fd00::2]:39067;tcp://192.0.2.2:65535",
        "1739128832.0;usock:///tmp/pmix.sock",
    };
    static const char *const names[] = {"open_mpi", "prrte", "unix_socket"};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
        emit(names[i], seeds[i], strlen(seeds[i]));
}
