/* RMA between ranks (1..4 ranks, shared memory and tcp): every rank
 * registers a buffer and publishes its remote key with an allgather; each
 * puts a pattern into its right neighbour's buffer and gets its left
 * neighbour's, small and large (above the eager limit), and checks every
 * byte. A put's completion means the bytes are at the target. */
#include <stdint.h>

#include "tx_test.h"

DGT_SUITE(rma);

enum { REGION = 1 << 20, SMALL = 64, LARGE = 512 << 10 };

static unsigned char byte_of(int owner, size_t i)
{
    return (unsigned char)(owner * 29 + i * 13 + (i >> 10));
}

typedef struct published {
    uint64_t addr;
    uint32_t key_len;
    unsigned char key[256];
} published_t;

static void on_done(void *arg, dagger_status_t st)
{
    volatile long *count = arg;
    if (st == DAGGER_OK)
        __atomic_add_fetch(count, 1, __ATOMIC_RELEASE);
    else
        __atomic_add_fetch(count, 1000000, __ATOMIC_RELEASE);
}

static void put_and_get(const char *tls)
{
    dgt_env_t *e = &dgt_env;
    dgt_up(e, tls);
    unsigned char *region = calloc(1, REGION), *local = malloc(REGION);
    cr_assert(region && local);
    dg_tx_mem_t *mem;
    DGT_OK(dg_tx_mem_map(e->tx, region, REGION, &mem));
    published_t mine = {.addr = (uint64_t)(uintptr_t)region};
    void *packed;
    size_t packed_len;
    DGT_OK(dg_tx_mem_pack(e->tx, mem, &packed, &packed_len));
    cr_assert_leq(packed_len, sizeof(mine.key));
    memcpy(mine.key, packed, packed_len);
    mine.key_len = (uint32_t)packed_len;
    free(packed);
    void *all;
    size_t lens[8];
    DGT_OK(dg_coll_allgather(e->tx, &mine, sizeof(mine), &all, lens));
    int right = (e->rank + 1) % e->size, left = (e->rank + e->size - 1) % e->size;
    published_t theirs[2];
    memcpy(&theirs[0], (char *)all + right * sizeof(published_t), sizeof(published_t));
    memcpy(&theirs[1], (char *)all + left * sizeof(published_t), sizeof(published_t));
    free(all);
    dg_tx_rkey_t *rkey_right, *rkey_left;
    DGT_OK(dg_tx_rkey_unpack(e->tx, right, theirs[0].key, &rkey_right));
    DGT_OK(dg_tx_rkey_unpack(e->tx, left, theirs[1].key, &rkey_left));

    /* Put: a small block at offset 0 and a large one at offset SMALL of the
     * right neighbour's region. */
    for (size_t i = 0; i < REGION; i++)
        local[i] = byte_of(e->rank, i);
    volatile long done = 0;
    DGT_OK(dg_tx_put(e->tx, right, local, SMALL, theirs[0].addr, rkey_right, on_done, (void *)&done));
    DGT_OK(dg_tx_put(e->tx, right, local + SMALL, LARGE, theirs[0].addr + SMALL, rkey_right, on_done,
                     (void *)&done));
    dgt_wait_count(e->tx, &done, 2);
    cr_assert_eq(done, 2, "a put failed");
    DGT_OK(dg_coll_barrier(e->tx)); /* every put towards me is complete */
    for (size_t i = 0; i < SMALL + LARGE; i++)
        cr_assert_eq(region[i], byte_of(left, i), "put from rank %d, byte %zu", left, i);

    /* Get: the left neighbour's region now holds its own left neighbour's
     * pattern; read it back whole. */
    memset(local, 0, REGION);
    done = 0;
    DGT_OK(dg_tx_get(e->tx, left, local, SMALL + LARGE, theirs[1].addr, rkey_left, on_done,
                     (void *)&done));
    dgt_wait_count(e->tx, &done, 1);
    cr_assert_eq(done, 1, "the get failed");
    int left2 = (left + e->size - 1) % e->size;
    for (size_t i = 0; i < SMALL + LARGE; i++)
        cr_assert_eq(local[i], byte_of(left2, i), "get from rank %d, byte %zu", left, i);

    DGT_OK(dg_coll_barrier(e->tx)); /* nobody reads my region any more */
    dg_tx_rkey_destroy(rkey_right);
    dg_tx_rkey_destroy(rkey_left);
    dg_tx_mem_unmap(e->tx, mem);
    free(region);
    free(local);
    dgt_down(e);
}
DGT_BOTH_TRANSPORTS(rma, put_and_get, put_and_get)

/* A key unpacked for one rank is refused for another. */
Test(rma, key_of_another_rank_is_refused)
{
    dgt_env_t *e = &dgt_env;
    dgt_up(e, NULL);
    unsigned char buf[64];
    dg_tx_mem_t *mem;
    DGT_OK(dg_tx_mem_map(e->tx, buf, sizeof(buf), &mem));
    void *packed;
    size_t len;
    DGT_OK(dg_tx_mem_pack(e->tx, mem, &packed, &len));
    dg_tx_rkey_t *key;
    DGT_OK(dg_tx_rkey_unpack(e->tx, e->rank, packed, &key));
    if (e->size > 1) {
        int other = (e->rank + 1) % e->size;
        cr_assert_eq(dg_tx_put(e->tx, other, buf, 8, (uint64_t)(uintptr_t)buf, key, NULL, NULL),
                     DAGGER_ERR_INVALID_ARG);
    }
    cr_assert_eq(dg_tx_get(e->tx, e->size, buf, 8, 0, key, NULL, NULL), DAGGER_ERR_INVALID_ARG);
    dg_tx_rkey_destroy(key);
    free(packed);
    dg_tx_mem_unmap(e->tx, mem);
    dgt_down(e);
}

DGT_SINGLETON_RERUN(rma)
