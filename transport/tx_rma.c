/* Memory registration and remote keys for RMA (owner thread). */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "transport/tx_internal.h"

dagger_status_t dg_tx_mem_map(dg_tx_t *tx, void *addr, size_t len, dg_tx_mem_t **out)
{
    DG_CHECK_ARG(tx && addr && len && out, "dg_tx_mem_map: NULL transport, address or output, or "
                 "zero length");
    DG_CHECK_ARG(dg_tx_is_owner(tx), "dg_tx_mem_map: only the owner thread registers memory");
    dg_tx_mem_t *mem = dg_calloc(1, sizeof(*mem));
    if (!mem)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_mem_map: out of memory");
    ucp_mem_map_params_t p = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = addr,
        .length = len,
    };
    ucs_status_t st = ucp_mem_map(tx->ucp, &p, &mem->memh);
    if (st != UCS_OK) {
        free(mem);
        return dg_error(DAGGER_ERR_TRANSPORT, "dg_tx_mem_map: registering %zu bytes at %p: %s", len,
                        addr, ucs_status_string(st));
    }
    mem->addr = addr;
    mem->len = len;
    *out = mem;
    return DAGGER_OK;
}

void dg_tx_mem_unmap(dg_tx_t *tx, dg_tx_mem_t *mem)
{
    if (!tx || !mem)
        return;
    ucp_mem_unmap(tx->ucp, mem->memh);
    free(mem);
}

dagger_status_t dg_tx_mem_pack(dg_tx_t *tx, const dg_tx_mem_t *mem, void **buf, size_t *len)
{
    DG_CHECK_ARG(tx && mem && buf && len, "dg_tx_mem_pack: NULL argument");
    void *packed = NULL;
    size_t n = 0;
    ucs_status_t st = ucp_rkey_pack(tx->ucp, mem->memh, &packed, &n);
    if (st != UCS_OK)
        return dg_error(DAGGER_ERR_TRANSPORT, "dg_tx_mem_pack: %s", ucs_status_string(st));
    *buf = dg_malloc(n ? n : 1);
    if (*buf)
        memcpy(*buf, packed, n);
    ucp_rkey_buffer_release(packed);
    if (!*buf)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_mem_pack: out of memory");
    *len = n;
    return DAGGER_OK;
}

dagger_status_t dg_tx_rkey_unpack(dg_tx_t *tx, int peer, const void *buf, dg_tx_rkey_t **out)
{
    DG_CHECK_ARG(tx && buf && out && peer >= 0 && peer < tx->size,
                 "dg_tx_rkey_unpack: NULL argument or rank %d outside 0..%d", peer,
                 tx ? tx->size - 1 : -1);
    DG_CHECK_ARG(dg_tx_is_owner(tx), "dg_tx_rkey_unpack: only the owner thread unpacks keys");
    dg_tx_rkey_t *k = dg_calloc(1, sizeof(*k));
    if (!k)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_rkey_unpack: out of memory");
    ucs_status_t st = ucp_ep_rkey_unpack(tx->peers[peer].ep, buf, &k->rkey);
    if (st != UCS_OK) {
        free(k);
        return dg_error(DAGGER_ERR_TRANSPORT, "dg_tx_rkey_unpack: key from rank %d: %s", peer,
                        ucs_status_string(st));
    }
    k->peer = peer;
    *out = k;
    return DAGGER_OK;
}

void dg_tx_rkey_destroy(dg_tx_rkey_t *rkey)
{
    if (!rkey)
        return;
    ucp_rkey_destroy(rkey->rkey);
    free(rkey);
}
