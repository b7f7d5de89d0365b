/* Parsing a PMIx server URI into TCP endpoints (see bootstrap_uri.h). */
#include "transport/bootstrap_uri.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* A decimal port from 1 to 65535 filling [s, end); 0 otherwise. */
static unsigned parse_port(const char *s, const char *end)
{
    if (s == end || end - s > 5)
        return 0;
    unsigned v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10 + (unsigned)(*s - '0');
    }
    return v <= 65535 ? v : 0;
}

/* One ';'-separated part, [s, end): 1 with *ep filled for a TCP endpoint. */
static int parse_part(const char *s, const char *end, struct sockaddr_storage *ep)
{
    char addr[INET6_ADDRSTRLEN + 1];
    const char *host, *host_end, *colon;
    int family;
    size_t n = (size_t)(end - s);
    if (n > 7 && !strncmp(s, "tcp6://", 7)) {
        family = AF_INET6;
        host = s + 7;
        if (host == end || *host != '[')
            return 0;
        host++;
        host_end = memchr(host, ']', (size_t)(end - host));
        if (!host_end || host_end + 1 == end || host_end[1] != ':')
            return 0;
        colon = host_end + 1;
    } else if ((n > 7 && !strncmp(s, "tcp4://", 7)) || (n > 6 && !strncmp(s, "tcp://", 6))) {
        family = AF_INET;
        host = s + (s[3] == '4' ? 7 : 6);
        colon = memchr(host, ':', (size_t)(end - host));
        if (!colon)
            return 0;
        host_end = colon;
    } else {
        return 0;
    }
    if (host_end == host || (size_t)(host_end - host) >= sizeof(addr))
        return 0;
    memcpy(addr, host, (size_t)(host_end - host));
    addr[host_end - host] = '\0';
    unsigned port = parse_port(colon + 1, end);
    if (!port)
        return 0;
    memset(ep, 0, sizeof(*ep));
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)ep;
        in->sin_family = AF_INET;
        in->sin_port = htons((unsigned short)port);
        return inet_pton(AF_INET, addr, &in->sin_addr) == 1;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ep;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((unsigned short)port);
    return inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1;
}

int dg_boot_uri_tcp(const char *uri, struct sockaddr_storage *out, int cap)
{
    int found = 0;
    for (const char *s = uri; s && *s;) {
        const char *end = strchr(s, ';');
        if (!end)
            end = s + strlen(s);
        struct sockaddr_storage ep;
        if (parse_part(s, end, &ep)) {
            if (found < cap)
                out[found] = ep;
            found++;
        }
        s = *end ? end + 1 : end;
    }
    return found;
}
