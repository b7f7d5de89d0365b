/* The trace reader on damaged input (each case was found by fuzzing,
 * tests/fuzz): it fails with the file and the problem, in bounded time and
 * memory, instead of overflowing, looping or allocating for garbage. */
#include <criterion/criterion.h>
#include <string.h>

#include "model.h"

#define JOB 0x5eedull

static tr_trace_t tr;

static int parse_meta(const char *text)
{
    char *copy = strdup(text);
    tr_load_begin(&tr, "t");
    int rc = tr_parse_meta(&tr, "t/job.meta", copy, strlen(copy));
    free(copy);
    return rc;
}

/* One rank whose header is h (meta made to agree), then one TASK event. */
static int load_rank(dg_trf_header_t h, uint64_t task, uint64_t t0)
{
    char meta[256];
    snprintf(meta, sizeof(meta), "dagger-trace-job 1\njob_id %llx\nnranks 1\nrank 0 workers %u "
             "spaces 0 offset_ns %lld uncert_ns 0 pid 1 host t\n", JOB, h.nworkers,
             (long long)h.clock_offset_ns);
    cr_assert_eq(parse_meta(meta), 0, "%s", tr.error);
    dg_trf_task_t ev = {.h = {DG_TRE_TASK, sizeof(ev), 0}, .t0 = t0, .t1 = t0, .task = task};
    dg_trf_block_t b = {.magic = DG_TRF_BLOCK_MAGIC, .bytes = sizeof(ev),
                        .checksum = dg_trf_checksum(&ev, sizeof(ev))};
    size_t size = sizeof(h) + sizeof(b) + sizeof(ev);
    unsigned char *data = malloc(size + 1);
    memcpy(data, &h, sizeof(h));
    memcpy(data + sizeof(h), &b, sizeof(b));
    memcpy(data + sizeof(h) + sizeof(b), &ev, sizeof(ev));
    int rc = tr_take_rank(&tr, 0, tr.ranks[0].path, data, size);
    return rc ? rc : tr_load_events(&tr);
}

static dg_trf_header_t header(void)
{
    dg_trf_header_t h = {.version = DG_TRF_VERSION, .header_bytes = sizeof(h),
                         .byte_order = DG_TRF_BYTE_ORDER, .nranks = 1, .nworkers = 2,
                         .job_id = JOB, .start_ns = 1000};
    memcpy(h.magic, DG_TRF_MAGIC, sizeof(DG_TRF_MAGIC));
    return h;
}

static void fini(void)
{
    tr_free(&tr);
}

TestSuite(reader, .fini = fini);

Test(reader, a_good_rank_file_loads)
{
    cr_assert_eq(load_rank(header(), 1, 2000), 0, "%s", tr.error);
    cr_assert_eq(tr.ran, 1);
}

Test(reader, more_ranks_than_the_meta_file_can_list)
{
    cr_assert_eq(parse_meta("dagger-trace-job 1\njob_id 1\nnranks 1048576\n"), -1);
    cr_assert(strstr(tr.error, "cannot list that many"), "%s", tr.error);
    cr_assert_null(tr.ranks, "nothing allocated for the ranks");
}

Test(reader, absurd_worker_count)
{
    dg_trf_header_t h = header();
    h.nworkers = 0x8d010000u;
    cr_assert_eq(load_rank(h, 1, 2000), -1);
    cr_assert(strstr(tr.error, "workers"), "%s", tr.error);
}

Test(reader, clock_offset_that_would_overflow)
{
    dg_trf_header_t h = header();
    h.clock_offset_ns = INT64_MIN / 2;
    cr_assert_eq(load_rank(h, 1, 2000), -1);
    cr_assert(strstr(tr.error, "clock offset"), "%s", tr.error);
}

Test(reader, event_time_that_would_overflow)
{
    cr_assert_eq(load_rank(header(), 1, UINT64_MAX - 5), -1);
    cr_assert(strstr(tr.error, "has the time"), "%s", tr.error);
}

Test(reader, task_id_the_file_cannot_hold)
{
    cr_assert_eq(load_rank(header(), 1ull << 62, 2000), -1);
    cr_assert(strstr(tr.error, "names task"), "%s", tr.error);
}

/* job.meta's CPUs: read when a rank line has them, 0 (unknown) when it ends
 * at the host, as traces written before they were kept do; anything else
 * after the host is not CPUs either. */
Test(reader, cpus_of_a_rank_line_are_optional)
{
    cr_assert_eq(parse_meta("dagger-trace-job 1\njob_id 1\nnranks 2\n"
                            "rank 0 workers 3 spaces 1 offset_ns 0 uncert_ns 0 pid 1 host a "
                            "cpus 2 online 16\n"
                            "rank 1 workers 3 spaces 1 offset_ns 0 uncert_ns 0 pid 2 host b\n"),
                 0, "%s", tr.error);
    cr_assert_eq(tr.ranks[0].meta_cpus, 2);
    cr_assert_eq(tr.ranks[0].meta_online, 16);
    cr_assert_eq(tr.ranks[1].meta_cpus, 0);
    cr_assert_eq(tr.ranks[1].meta_online, 0);
    tr_free(&tr);
    cr_assert_eq(parse_meta("dagger-trace-job 1\njob_id 1\nnranks 1\n"
                            "rank 0 workers 3 spaces 1 offset_ns 0 uncert_ns 0 pid 1 host a "
                            "cpus x online 4\n"),
                 0, "%s", tr.error);
    cr_assert_eq(tr.ranks[0].meta_cpus, 0);
    cr_assert_eq(tr.ranks[0].meta_online, 0);
}
