/* The hello of the connection handshake (transport/tx_record.c, read by
 * chan_ctrl.c). */
#include <string.h>

#include "fuzz.h"
#include "transport/tx_startup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_proc_id_t from;
    if (dg_tx_hello_decode(data, size, &from))
        return 0;
    unsigned char back[DG_TX_HELLO_LEN];
    dg_tx_hello_encode(&from, back);
    DG_FUZZ_CHECK(size == DG_TX_HELLO_LEN && !memcmp(back, data, size));
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    unsigned char buf[DG_TX_HELLO_LEN];
    dg_tx_hello_encode(&(dg_proc_id_t){4711, 987654321}, buf);
    emit("hello", buf, sizeof(buf));
}
