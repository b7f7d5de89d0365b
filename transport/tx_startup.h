/* The record each rank contributes to the start-up exchange: build id,
 * process identity, host name, UCX worker address and the caller's
 * inventory bytes. Encoded with wire.h, so ranks built by different
 * compilers read each other. */
#ifndef DG_TX_STARTUP_H
#define DG_TX_STARTUP_H

#include <stddef.h>
#include <stdint.h>

#include "transport/tx_proc.h"

#define DG_TX_RECORD_MAGIC 0x31584744u /* "DGX1" */

typedef struct dg_tx_record {
    uint64_t build_id;
    dg_proc_id_t proc;
    const char *hostname;   /* NUL-terminated */
    const void *address;    /* UCX worker address */
    size_t address_len;
    const void *inventory;
    size_t inventory_len;
} dg_tx_record_t;

/* Bytes dg_tx_record_encode writes for rec. */
size_t dg_tx_record_size(const dg_tx_record_t *rec);
/* Writes rec into buf (dg_tx_record_size bytes). */
void dg_tx_record_encode(const dg_tx_record_t *rec, void *buf);
/* Reads a record; its pointers point into buf. Returns 0, or -1 when the
 * bytes are not a complete record (wrong magic, truncated, host name not
 * terminated or with a NUL inside). */
int dg_tx_record_decode(const void *buf, size_t len, dg_tx_record_t *rec);

/* The hello of the connection handshake (chan_ctrl.c): the sender's
 * process identity, so a receiver can tell a stale record of that rank. */
#define DG_TX_HELLO_LEN 12
void dg_tx_hello_encode(const dg_proc_id_t *me, void *buf);
/* 0, or -1 when the bytes are not a hello (wrong length). */
int dg_tx_hello_decode(const void *buf, size_t len, dg_proc_id_t *from);

#endif
