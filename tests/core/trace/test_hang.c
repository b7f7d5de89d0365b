/* dagger-trace hang on hand-made multi-rank dumps: a wait chain across
 * ranks down to a running task, a message the sender never planned, and a
 * wait cycle (which a correct runtime never makes, so only a hand-made
 * trace can show the tool names it). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "model.h"
#include "tmpdir.h"

#define JOB 0x1234abcdull
#define TAG(region, i) (((uint64_t)(region) << 32) | (i))

typedef struct fake {
    FILE *f;
    _Alignas(8) unsigned char buf[1 << 16];
    size_t used;
} fake_t;

static char dir[64];

static void new_dir(int nranks)
{
    cr_assert(tmpdir_make(dir, "dg-hang-test"));
    char path[128];
    snprintf(path, sizeof(path), "%s/job.meta", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "dagger-trace-job 1\njob_id %llx\nnranks %d\n", JOB, nranks);
    for (int r = 0; r < nranks; r++)
        fprintf(f, "rank %d workers 2 spaces 1 offset_ns 0 uncert_ns 0 pid 1 host test\n", r);
    fclose(f);
}

static fake_t *fake_open(int rank, int nranks)
{
    fake_t *fk = calloc(1, sizeof(*fk));
    char path[128];
    snprintf(path, sizeof(path), "%s/rank-%d.dgt", dir, rank);
    fk->f = fopen(path, "wb");
    dg_trf_header_t h = {.version = DG_TRF_VERSION, .header_bytes = sizeof(h),
                         .byte_order = DG_TRF_BYTE_ORDER, .rank = rank, .nranks = nranks,
                         .nworkers = 2, .nspaces = 1, .job_id = JOB, .start_ns = 1000};
    memcpy(h.magic, DG_TRF_MAGIC, sizeof(DG_TRF_MAGIC));
    fwrite(&h, sizeof(h), 1, fk->f);
    return fk;
}

static void *ev(fake_t *fk, dg_trf_type_t type, uint32_t aux, size_t size)
{
    dg_trf_ev_t *e = (dg_trf_ev_t *)(fk->buf + fk->used);
    memset(e, 0, size);
    *e = (dg_trf_ev_t){(uint16_t)type, (uint16_t)size, aux};
    fk->used += size;
    return e;
}

static void hang_begin(fake_t *fk)
{
    dg_trf_hang_t *h = ev(fk, DG_TRE_HANG, DG_TRH_BEGIN, sizeof(*h) + 8);
    h->t = 5000000;
    memcpy(h + 1, "test", 5);
}

static void op(fake_t *fk, uint64_t seq, dg_trf_op_kind_t kind, int pending, uint64_t tag,
               int peer, uint64_t task, uint32_t codelet)
{
    dg_trf_hang_t *h = ev(fk, DG_TRE_HANG, DG_TRH_OP, sizeof(*h));
    *h = (dg_trf_hang_t){h->h, 5000000, 0, seq, tag, 0, 64, task, peer, (uint32_t)kind, pending,
                         codelet};
}

static void waits(fake_t *fk, uint64_t waiter, uint64_t for_op)
{
    dg_trf_hang_t *h = ev(fk, DG_TRE_HANG, DG_TRH_WAITER, sizeof(*h));
    h->seq = waiter;
    h->task = for_op;
}

static void fake_close(fake_t *fk, int dumped)
{
    if (dumped)
        ev(fk, DG_TRE_HANG, DG_TRH_END, sizeof(dg_trf_hang_t));
    dg_trf_block_t b = {DG_TRF_BLOCK_MAGIC, (uint32_t)fk->used, 0, -1,
                        dg_trf_checksum(fk->buf, fk->used)};
    fwrite(&b, sizeof(b), 1, fk->f);
    fwrite(fk->buf, fk->used, 1, fk->f);
    fclose(fk->f);
    free(fk);
}

static char *run_hang(int *rc)
{
    tr_trace_t tr;
    cr_assert_eq(tr_load(&tr, dir), 0, "%s", tr.error);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    *rc = tr_cmd_hang(&tr, out);
    fclose(out);
    tr_free(&tr);
    tmpdir_remove(dir);
    return text;
}

/* Rank 1's task 2 needs data rank 0 sends only after its task 1, which runs. */
static void rank1_waits_for_tag(void)
{
    fake_t *r1 = fake_open(1, 2);
    hang_begin(r1);
    op(r1, 5, DG_TRF_OP_RECV, 0, TAG(1, 0), 0, 0, 0);
    op(r1, 6, DG_TRF_OP_LAUNCH, 1, 0, 0, 2, 7);
    waits(r1, 6, 5);
    fake_close(r1, 1);
}

Test(hang, chain_across_ranks_to_a_running_task)
{
    new_dir(2);
    fake_t *r0 = fake_open(0, 2);
    dg_trf_name_t *n = ev(r0, DG_TRE_CODELET, 9, sizeof(*n));
    snprintf(n->name, sizeof(n->name), "slow");
    hang_begin(r0);
    op(r0, 2, DG_TRF_OP_LAUNCH, 0, 0, 0, 1, 9);
    op(r0, 3, DG_TRF_OP_SEND, 1, TAG(1, 0), 1, 0, 0);
    waits(r0, 3, 2);
    dg_trf_hang_t *run = ev(r0, DG_TRE_HANG, DG_TRH_RUNNING, sizeof(*run));
    run->t = 5000000;
    run->t0 = 2000000;
    run->peer = 1;
    run->task = 1;
    run->codelet = 9;
    fake_close(r0, 1);
    rank1_waits_for_tag();
    int rc;
    char *text = run_hang(&rc);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(text, "rank 1 task 2 (?, op 6)\n      -> rank 1 recv tag 1:0 from rank 0 (op 5)\n"
                           "      -> rank 0 send tag 1:0 to rank 1 (op 3)\n"
                           "      -> rank 0 task 1 (slow, op 2)\n"),
              "the chain crosses from rank 1 to rank 0:\n%s", text);
    cr_assert(strstr(text, "rank 0 task 1 (slow, op 2): running on worker 1 for 3.00 ms"),
              "the root is the running task:\n%s", text);
    free(text);
}

Test(hang, message_never_planned)
{
    new_dir(2);
    fake_t *r0 = fake_open(0, 2);
    dg_trf_plan_t *p = ev(r0, DG_TRE_PLAN, 0, sizeof(*p));
    p->task = 1;
    p->t0 = p->t1 = 2000;
    fake_close(r0, 0);
    rank1_waits_for_tag();
    int rc;
    char *text = run_hang(&rc);
    cr_assert(strstr(text, "rank 0: no hang dump; its trace shows no region"), "%s", text);
    cr_assert(strstr(text, "rank 0 never planned a send of tag 1:0 to rank 1 (it recorded no hang "
                           "dump: its trace may end early); it planned tasks up to 1"),
              "the root is the unplanned message:\n%s", text);
    free(text);
}

Test(hang, wait_cycle)
{
    new_dir(2);
    fake_t *r0 = fake_open(0, 2), *r1 = fake_open(1, 2);
    hang_begin(r0);
    op(r0, 1, DG_TRF_OP_SEND, 0, TAG(1, 0), 1, 0, 0);   /* waits for rank 1's receive */
    op(r0, 2, DG_TRF_OP_SEND, 1, TAG(1, 1), 1, 0, 0);
    waits(r0, 2, 1);
    hang_begin(r1);
    op(r1, 1, DG_TRF_OP_RECV, 1, TAG(1, 0), 0, 0, 0);
    op(r1, 2, DG_TRF_OP_RECV, 0, TAG(1, 1), 0, 0, 0);   /* waits for rank 0's send */
    waits(r1, 1, 2);
    fake_close(r0, 1);
    fake_close(r1, 1);
    int rc;
    char *text = run_hang(&rc);
    cr_assert(strstr(text, "WAIT CYCLE"), "the cycle is named:\n%s", text);
    cr_assert(strstr(text, "the wait cycle above"), "and given as the reason:\n%s", text);
    cr_assert(strstr(text, "rank 0 send tag 1:0 to rank 1 (op 1)") &&
              strstr(text, "rank 1 recv tag 1:1 from rank 0 (op 2)"), "%s", text);
    free(text);
}

Test(hang, nothing_to_say_without_dumps)
{
    new_dir(1);
    fake_t *r0 = fake_open(0, 1);
    ev(r0, DG_TRE_END, 0, sizeof(dg_trf_end_t));
    fake_close(r0, 0);
    int rc;
    char *text = run_hang(&rc);
    cr_assert_eq(rc, 1);
    cr_assert(strstr(text, "DAGGER_HANG_TIMEOUT"), "%s", text);
    free(text);
}
