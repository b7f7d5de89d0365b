/* The TCP endpoints of a PMIx server, read from the URI its launcher puts in
 * the environment (PMIX_SERVER_URI41 and its older spellings):
 * "<nspace>.<rank>;tcp4://127.0.0.1:45559;tcp6://[::1]:45560". Pure, so the
 * fuzz harness (tests/fuzz) links it alone. */
#ifndef DG_BOOTSTRAP_URI_H
#define DG_BOOTSTRAP_URI_H

#include <sys/socket.h>

/* Writes up to cap of the URI's TCP endpoints (tcp4:// and tcp:// with a
 * dotted IPv4 address, tcp6:// with a bracketed IPv6 one, each with a port
 * from 1 to 65535) to out, in the URI's order, and returns how many there
 * are (which may exceed cap). Other parts (the server's name, a Unix socket,
 * an unknown scheme, a malformed address) are skipped: 0 means the server
 * is reached some other way, or not through this URI. */
int dg_boot_uri_tcp(const char *uri, struct sockaddr_storage *out, int cap);

#endif
