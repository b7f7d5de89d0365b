/* Published start-up values (see bootstrap_value.h). */
#include "transport/bootstrap_value.h"

int dg_boot_value_decode(const void *bytes, size_t size, const void **payload, size_t *len)
{
    *payload = NULL;
    *len = 0;
    if (!size)
        return 0;
    const unsigned char *b = bytes;
    if (!b || b[0] != DG_BOOT_VALUE_LIVE)
        return -1;
    *payload = b + 1;
    *len = size - 1;
    return 1;
}
