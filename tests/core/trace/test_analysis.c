/* Derived measures on hand-made trace models (no files, no runtime):
 * tr_occupancy, the tasks a rank ran at once while its submitting thread
 * submitted and while it waited at region ends; tr_submit_share, a rank's
 * regions against their submission; tr_codelet_times, the spread of each
 * codelet's run times. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "analysis.h"

static tr_trace_t tr;
static tr_rank_t ranks[2];
static tr_task_t tasks[8];

/* Rank 0 over 0..100 ns, waiting at a region's end over 60..100: tasks
 * 0-30 and 10-50 while it submits (none running 50-60), 60-100 and 70-80
 * while it waits. Rank 1 runs 20-40 and never waits. */
static void model(void)
{
    memset(&tr, 0, sizeof(tr));
    memset(tasks, 0, sizeof(tasks));
    tr.nranks = 2;
    tr.ranks = ranks;
    for (int r = 0; r < 2; r++) {
        tr_rank_init(&ranks[r]);
        ranks[r].hdr.nworkers = 2;
    }
    tr.t_begin = 0;
    tr.t_end = 100;
    tr.tasks = tasks;
    tr.ntasks = 7;
    const int64_t runs[6][3] = {{0, 0, 30}, {0, 10, 50}, {0, 60, 100}, {0, 70, 80},
                                {1, 20, 40}, {0, 150, 160}};
    for (int i = 0; i < 6; i++)
        tasks[i + 1] = (tr_task_t){.id = (uint64_t)i + 1, .rank = (int32_t)runs[i][0],
                                   .t0 = runs[i][1], .t1 = runs[i][2], .ran = 1};
    *(tr_span_t *)tr_vec_push(&ranks[0].phases) =
        (tr_span_t){.t0 = 60, .t1 = 100, .kind = DG_TRP_REGION_WAIT};
    *(tr_span_t *)tr_vec_push(&ranks[0].phases) =
        (tr_span_t){.t0 = 55, .t1 = 60, .kind = DG_TRP_REGION_PLAN_END};
}

static void fini(void)
{
    for (int r = 0; r < 2; r++)
        tr_vec_free(&ranks[r].phases);
}

TestSuite(analysis, .init = model, .fini = fini);

Test(analysis, occupancy_while_submitting_and_while_waiting)
{
    tr_occupancy_t o;
    tr_occupancy(&tr, 0, &o);
    cr_assert_float_eq(o.ns[0], 60, 1e-9);
    cr_assert_float_eq(o.task_ns[0], 70, 1e-9, "30 + 40 ns of tasks while submitting");
    cr_assert_float_eq(o.none_ns[0], 10, 1e-9, "none running from 50 to 60");
    cr_assert_float_eq(o.ns[1], 40, 1e-9);
    cr_assert_float_eq(o.task_ns[1], 50, 1e-9, "40 + 10 ns while waiting");
    cr_assert_float_eq(o.none_ns[1], 0, 1e-9);
}

/* Another rank's tasks, and time outside the traced work, do not count. */
Test(analysis, occupancy_counts_only_the_rank_and_the_traced_time)
{
    tr_occupancy_t o;
    tr_occupancy(&tr, 1, &o);
    cr_assert_float_eq(o.ns[0], 100, 1e-9);
    cr_assert_float_eq(o.task_ns[0], 20, 1e-9);
    cr_assert_float_eq(o.none_ns[0], 80, 1e-9);
    cr_assert_float_eq(o.ns[1], 0, 1e-9, "rank 1 never waited");
    tr_occupancy(&tr, 2, &o);
    cr_assert_float_eq(o.ns[0] + o.ns[1], 0, 1e-9, "no such rank");
}

/* Rank 0's tasks in two regions: region 1 begins at 0 and waits from 60
 * to 100 (tasks 0-30, 10-50, 60-100 and 70-80, of which two end by 60),
 * region 2 begins at 100 and waits from 110 to 200 (task 150-160, after its
 * wait began); region 3 has a begin and a wait and no task on rank 0. */
static void regions(void)
{
    for (int i = 1; i <= 4; i++)
        tasks[i].region = 1;
    tasks[6].region = 2;
    tasks[5].region = 3; /* rank 1's */
    TR_AT(&ranks[0].phases, tr_span_t, 0)->a = 1; /* the model's wait, 60-100 */
    const tr_span_t more[] = {{.t0 = 0, .t1 = 1, .kind = DG_TRP_REGION_BEGIN, .a = 1},
                              {.t0 = 100, .t1 = 101, .kind = DG_TRP_REGION_BEGIN, .a = 2},
                              {.t0 = 110, .t1 = 200, .kind = DG_TRP_REGION_WAIT, .a = 2},
                              {.t0 = 200, .t1 = 201, .kind = DG_TRP_REGION_BEGIN, .a = 3},
                              {.t0 = 202, .t1 = 210, .kind = DG_TRP_REGION_WAIT, .a = 3}};
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
        *(tr_span_t *)tr_vec_push(&ranks[0].phases) = more[i];
}

Test(analysis, submit_share_per_region)
{
    regions();
    tr_submit_share_t s;
    tr_submit_share(&tr, 0, &s);
    cr_assert_eq(s.nregions, 2, "region 3 ran no task here: %llu", (unsigned long long)s.nregions);
    cr_assert_eq(s.tasks, 5);
    cr_assert_eq(s.ended, 2, "0-30 and 10-50 ended before region 1's wait at 60");
    cr_assert_float_eq(s.share, 0.35, 1e-9, "the median of 60/100 and 10/100: %g", s.share);
    /* A third region of share 0.9 (begin 300, wait 390-400, one task that
     * ends at 350): the median is then the middle one. */
    *(tr_span_t *)tr_vec_push(&ranks[0].phases) =
        (tr_span_t){.t0 = 300, .t1 = 301, .kind = DG_TRP_REGION_BEGIN, .a = 4};
    *(tr_span_t *)tr_vec_push(&ranks[0].phases) =
        (tr_span_t){.t0 = 390, .t1 = 400, .kind = DG_TRP_REGION_WAIT, .a = 4};
    static tr_task_t more[9];
    memcpy(more, tasks, sizeof(tasks));
    more[7] = (tr_task_t){.id = 7, .rank = 0, .region = 4, .t0 = 340, .t1 = 350, .ran = 1};
    tr.tasks = more;
    tr.ntasks = 8;
    tr_submit_share(&tr, 0, &s);
    cr_assert_eq(s.nregions, 3);
    cr_assert_eq(s.ended, 3);
    cr_assert_float_eq(s.share, 0.6, 1e-9, "0.1, 0.6, 0.9: %g", s.share);
    tr.tasks = tasks;
    tr.ntasks = 7;
}

/* A rank without region phases, or no such rank: nothing counts. */
Test(analysis, submit_share_without_regions)
{
    regions();
    tr_submit_share_t s;
    tr_submit_share(&tr, 1, &s);
    cr_assert_eq(s.nregions, 0, "rank 1 has no begin or wait");
    cr_assert_eq(s.tasks, 0);
    tr_submit_share(&tr, 5, &s);
    cr_assert_eq(s.nregions + s.tasks + s.ended, 0);
}

/* Codelet 7 (named, legend index 0) ran tasks 1-4 and 6: 30, 40, 40, 10
 * and 10 ns; task 5 (20 ns) has codelet 9, which has no name record. */
static void name_codelets(void)
{
    for (int i = 1; i <= 6; i++)
        tasks[i].codelet = i == 5 ? 9 : 7;
    tr_vec_init(&tr.codelets, sizeof(tr_codelet_t));
    *(tr_codelet_t *)tr_vec_push(&tr.codelets) = (tr_codelet_t){.id = 7, .index = 0, .name = "c7"};
    tr_map_put(&tr.codelet_by_id, 7, 0);
}

static void unname_codelets(void)
{
    tr_vec_free(&tr.codelets);
    tr_map_free(&tr.codelet_by_id);
}

Test(analysis, codelet_times_median_p90_max)
{
    name_codelets();
    tr_cl_times_t s[2];
    tr_codelet_times(&tr, s);
    cr_assert_eq(s[0].count, 5);
    cr_assert_float_eq(s[0].total, 130, 1e-9);
    cr_assert_float_eq(s[0].median, 30, 1e-9, "10 10 30 40 40: the middle one");
    cr_assert_float_eq(s[0].p90, 40, 1e-9, "the 5th of 5 (ceil(4.5))");
    cr_assert_float_eq(s[0].max, 40, 1e-9);
    cr_assert_eq(s[1].count, 1, "the task whose codelet has no name record");
    cr_assert_float_eq(s[1].median, 20, 1e-9);
    cr_assert_float_eq(s[1].p90, 20, 1e-9);
    /* A task that did not run does not count; of an even count, the mean
     * of the middle two. */
    tasks[5].codelet = 7;
    tasks[2].ran = 0;
    tr_codelet_times(&tr, s);
    cr_assert_eq(s[0].count, 5);
    cr_assert_float_eq(s[0].median, 20, 1e-9, "10 10 20 30 40: %g", s[0].median);
    tasks[6].ran = 0;
    tr_codelet_times(&tr, s);
    cr_assert_eq(s[0].count, 4);
    cr_assert_float_eq(s[0].median, 25, 1e-9, "10 20 30 40: %g", s[0].median);
    cr_assert_float_eq(s[0].p90, 40, 1e-9, "the 4th of 4 (ceil(3.6))");
    cr_assert_eq(s[1].count, 0);
    unname_codelets();
}

/* Ten runs of 1..10 ns: the 90th percentile is the 9th. */
Test(analysis, codelet_times_p90_of_ten)
{
    static tr_task_t ten[11];
    for (int i = 1; i <= 10; i++)
        ten[i] = (tr_task_t){.id = (uint64_t)i, .t0 = 100, .t1 = 100 + (11 - i), .ran = 1};
    tr.tasks = ten;
    tr.ntasks = 11;
    tr_cl_times_t s[1];
    tr_codelet_times(&tr, s);
    cr_assert_eq(s[0].count, 10);
    cr_assert_float_eq(s[0].median, 5.5, 1e-9);
    cr_assert_float_eq(s[0].p90, 9, 1e-9, "%g", s[0].p90);
    cr_assert_float_eq(s[0].max, 10, 1e-9);
    cr_assert_float_eq(s[0].total, 55, 1e-9);
}
