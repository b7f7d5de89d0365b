/* Which device memory UCX can move (dg_tx_device_memory): asked of the UCP
 * context, never guessed from the build or the environment. */
#include <stdio.h>

#include "transport/tx_internal.h"

int dg_tx_device_memory(dg_tx_t *tx, int kind, char *why, size_t cap)
{
    ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
    ucs_status_t s = tx ? ucp_context_query(tx->ucp, &attr) : UCS_ERR_INVALID_PARAM;
    if (s != UCS_OK) {
        if (why)
            snprintf(why, cap, "ucp_context_query: %s", tx ? ucs_status_string(s) : "no transport");
        return 0;
    }
    uint64_t bit = kind == DG_TX_MEM_CUDA ? UCS_BIT(UCS_MEMORY_TYPE_CUDA)
                                          : UCS_BIT(UCS_MEMORY_TYPE_ROCM);
    int yes = (attr.memory_types & bit) != 0;
    if (why)
        snprintf(why, cap, "UCX memory types 0x%llx %s %s memory", (unsigned long long)attr.memory_types,
                 yes ? "include" : "do not include", kind == DG_TX_MEM_CUDA ? "CUDA" : "ROCm");
    return yes;
}
