/* The values dg_boot_allgather publishes under PMIx keys: a leading
 * DG_BOOT_VALUE_LIVE byte, then the caller's bytes. An empty value is a
 * tombstone (dg_boot_retract): that rank's next process has not published
 * yet. Pure, so the fuzz harness (tests/fuzz) links it alone. */
#ifndef DG_BOOTSTRAP_VALUE_H
#define DG_BOOTSTRAP_VALUE_H

#include <stddef.h>

#define DG_BOOT_VALUE_LIVE 1

/* 1 and the caller's bytes (pointing into bytes) for a live value, 0 for a
 * tombstone, -1 for bytes that no Dagger-C rank publishes. */
int dg_boot_value_decode(const void *bytes, size_t size, const void **payload, size_t *len);

#endif
