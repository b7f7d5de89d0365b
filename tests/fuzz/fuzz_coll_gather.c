/* The result of an allgather as it arrives from rank 0 (transport/
 * coll_wire.c: per rank a u64 length, then its bytes). The first input
 * byte is the job size (1..16), the rest the result. */
#include <string.h>

#include "fuzz.h"
#include "transport/coll_wire.h"
#include "transport/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int nranks = 1 + data[0] % 16;
    size_t lens[16];
    void *all = NULL;
    if (dg_coll_unpack_gathered(data + 1, size - 1, nranks, &all, lens) != DAGGER_OK) {
        DG_FUZZ_CHECK(all == NULL);
        return 0;
    }
    size_t total = 0;
    for (int r = 0; r < nranks; r++)
        total += lens[r];
    DG_FUZZ_CHECK(total + 8 * (size_t)nranks == size - 1);
    /* Every part in rank order, as dagger_allgather's caller reads them. */
    unsigned sum = 0;
    for (size_t i = 0; i < total; i++)
        sum += ((const unsigned char *)all)[i];
    (void)sum;
    free(all);
    return 0;
}

/* What rank 0 sends down: the parts of every rank, in rank order. */
static size_t gathered(unsigned char *buf, size_t cap, int nranks, const char *const *parts)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, cap);
    dg_wire_put_u8(&c, (uint8_t)(nranks - 1));
    for (int r = 0; r < nranks; r++) {
        dg_wire_put_u64(&c, strlen(parts[r]));
        dg_wire_put_bytes(&c, parts[r], strlen(parts[r]));
    }
    return cap - c.left;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    unsigned char buf[256];
    static const char *const three[] = {"rank0", "", "rank two"};
    emit("three_ranks", buf, gathered(buf, sizeof(buf), 3, three));
    static const char *const one[] = {"only"};
    emit("one_rank", buf, gathered(buf, sizeof(buf), 1, one));
}
