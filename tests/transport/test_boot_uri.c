/* The TCP endpoints of a PMIx server URI (transport/bootstrap_uri.c): the
 * forms Open MPI's, PRRTE's and Slurm's servers publish, and text that is
 * not an endpoint, which is skipped, never half read. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <string.h>

#include "transport/bootstrap_uri.h"

/* ep is family's endpoint at address addr (as inet_ntop prints it), port. */
static void expect_ep(const struct sockaddr_storage *ep, int family, const char *addr,
                      unsigned port)
{
    const struct sockaddr_in *in = (const void *)ep;
    const struct sockaddr_in6 *in6 = (const void *)ep;
    char text[INET6_ADDRSTRLEN];
    cr_assert_eq(ep->ss_family, family);
    const void *bytes = family == AF_INET ? (const void *)&in->sin_addr
                                          : (const void *)&in6->sin6_addr;
    cr_assert_str_eq(inet_ntop(family, bytes, text, sizeof(text)), addr);
    cr_assert_eq(ntohs(family == AF_INET ? in->sin_port : in6->sin6_port), port);
}

Test(boot_uri, open_mpi_form)
{
    struct sockaddr_storage eps[4];
    cr_assert_eq(dg_boot_uri_tcp("1739128832.0;tcp4://127.0.0.1:45559", eps, 4), 1);
    expect_ep(&eps[0], AF_INET, "127.0.0.1", 45559);
}

Test(boot_uri, several_endpoints_in_order)
{
    struct sockaddr_storage eps[4];
    cr_assert_eq(dg_boot_uri_tcp("prterun-host-123@0.0;tcp4://10.1.2.3:7;tcp6://[fd00::2]:39067;"
                                 "tcp://192.0.2.2:65535", eps, 4), 3);
    expect_ep(&eps[0], AF_INET, "10.1.2.3", 7);
    expect_ep(&eps[1], AF_INET6, "fd00::2", 39067);
    expect_ep(&eps[2], AF_INET, "192.0.2.2", 65535);
}

Test(boot_uri, counts_past_the_capacity_and_writes_only_that_many)
{
    struct sockaddr_storage eps[2];
    memset(eps, 0xab, sizeof(eps));
    cr_assert_eq(dg_boot_uri_tcp("a;tcp4://1.2.3.4:1;tcp4://1.2.3.5:2;tcp4://1.2.3.6:3", eps, 1),
                 3);
    expect_ep(&eps[0], AF_INET, "1.2.3.4", 1);
    unsigned char untouched[sizeof(eps[1])];
    memset(untouched, 0xab, sizeof(untouched));
    cr_assert(!memcmp(&eps[1], untouched, sizeof(untouched)));
    cr_assert_eq(dg_boot_uri_tcp("tcp4://1.2.3.4:1", NULL, 0), 1);
}

Test(boot_uri, what_is_not_a_tcp_endpoint_is_skipped)
{
    struct sockaddr_storage eps[4];
    const char *none[] = {
        "",
        ";;;",
        "1739128832.0",
        "1739128832.0;usock:///tmp/pmix.sock",
        "x;tcp4://127.0.0.1",        /* no port */
        "x;tcp4://127.0.0.1:",       /* empty port */
        "x;tcp4://127.0.0.1:0",      /* port 0 */
        "x;tcp4://127.0.0.1:65536",  /* past 16 bits */
        "x;tcp4://127.0.0.1:123456", /* too many digits */
        "x;tcp4://127.0.0.1:12a",    /* not a number */
        "x;tcp4://127.0.0.1:-1",
        "x;tcp4://:45559",           /* no host */
        "x;tcp4://localhost:45559",  /* a name, not an address */
        "x;tcp4://127.0.0.256:45559",
        "x;tcp4://::1:45559",        /* IPv6 under tcp4 */
        "x;tcp6://::1:45559",        /* no brackets */
        "x;tcp6://[::1]45559",       /* no colon after the bracket */
        "x;tcp6://[::1:45559",       /* no closing bracket */
        "x;tcp6://[]:45559",
        "x;tcp6://[127.0.0.1]:45559",
        "x;tcp6://[0123456789012345678901234567890123456789012345678901234567]:1",
        "x;TCP4://127.0.0.1:45559",  /* schemes are lower case */
        "x;tcp4:/127.0.0.1:45559",
        "x;udp://127.0.0.1:45559",
    };
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
        cr_assert_eq(dg_boot_uri_tcp(none[i], eps, 4), 0, "read an endpoint from \"%s\"", none[i]);
    cr_assert_eq(dg_boot_uri_tcp(NULL, eps, 4), 0);
}

Test(boot_uri, a_bad_part_does_not_hide_the_good_ones)
{
    struct sockaddr_storage eps[4];
    cr_assert_eq(dg_boot_uri_tcp("x;tcp4://1.2.3.4:99999;tcp6://[::1]:80;junk", eps, 4), 1);
    expect_ep(&eps[0], AF_INET6, "::1", 80);
}
