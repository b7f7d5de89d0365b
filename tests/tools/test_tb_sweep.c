/* Task Bench's METG sweep (tools/bench/taskbench_core.c) on made-up wall
 * times: the crossing of 50 % efficiency, and the peak as the highest rate
 * of the sweep rather than the first point's alone. */
#include <criterion/criterion.h>
#include <math.h>

#include "tools/bench/taskbench_core.h"

/* Wall time of one run: the work at a rate of `rate` work units per second,
 * plus a fixed cost per task; at iter == slow_iter the rate is halved (a slow
 * spell of the machine). */
typedef struct {
    double rate, per_task;
    long slow_iter;
    long noisy_iter; /* its first two runs take 3 times as long (a descheduling) */
    long fast_iter;  /* runs at twice the rate (a fast spell of the machine) */
    int noisy_runs;
} fake_t;

static int fake_run(void *ctx, const tb_graph_t *g, double *wall)
{
    fake_t *f = ctx;
    double tasks = (double)tb_tasks(g);
    double rate = g->iter == f->slow_iter ? f->rate / 2
                : g->iter == f->fast_iter ? f->rate * 2
                                          : f->rate;
    *wall = tasks * tb_task_work(g) / rate + tasks * f->per_task;
    if (g->iter == f->noisy_iter && f->noisy_runs++ < 2)
        *wall *= 3;
    return 0;
}

static tb_opts_t opts(void)
{
    char *argv[] = {"t", "-type", "stencil_1d", "-width", "4", "-steps", "100", "-sweep",
                    "-max-iter", "65536", "-reps", "1"};
    tb_opts_t o;
    cr_assert_eq(tb_parse(12, argv, &o), 0);
    return o;
}

/* With a fixed cost c per task and one core, efficiency is k / (k + c) for a
 * task of k seconds of work: 50 % where k = c, a granularity of 2c. */
Test(tb_sweep, the_crossing_is_twice_the_fixed_cost)
{
    tb_opts_t o = opts();
    fake_t f = {.rate = 1e10, .per_task = 2e-6, .slow_iter = -1, .noisy_iter = -1, .fast_iter = -1};
    tb_metg_t m;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &m), 0);
    cr_expect_eq(m.bounded, 0);
    cr_expect(fabs(m.metg_us - 4.0) < 0.4, "METG %.3f us, want about 4", m.metg_us);
}

/* The largest tasks ran in a slow spell: the peak is the faster rate seen
 * after it, so the crossing stays where the fixed cost puts it. */
Test(tb_sweep, a_slow_first_point_does_not_lower_the_peak)
{
    tb_opts_t o = opts();
    fake_t f = {.rate = 1e10, .per_task = 2e-6, .slow_iter = 65536, .noisy_iter = -1, .fast_iter = -1};
    tb_metg_t m;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &m), 0);
    cr_expect(m.peak > 0.9e10, "peak %.3g, want the fast rate", m.peak);
    cr_expect(fabs(m.metg_us - 4.0) < 0.4, "METG %.3f us, want about 4", m.metg_us);
}

/* The first iter whose tasks' work is under 4 fixed costs (efficiency under
 * 0.8 but over 0.5): a point a 3x slower run pushes below 0.5. */
static long near_iter(const tb_opts_t *o, const fake_t *f)
{
    tb_graph_t g = o->g;
    for (g.iter = o->max_iter; g.iter > 1; g.iter /= 2)
        if (tb_task_work(&g) / f->rate < 4 * f->per_task)
            return g.iter;
    return 1;
}

/* Two runs at one point were descheduled: with two runs a point (and no
 * second timing of a point below 50 %), the sweep stops there, too early;
 * with -min-time the point runs until its runs add up to that long, and the
 * fastest of them counts. */
Test(tb_sweep, min_time_runs_a_short_point_again)
{
    tb_opts_t o = opts();
    o.reps = 2;
    o.retries = 0;
    fake_t f = {.rate = 1e10, .per_task = 2e-6, .slow_iter = -1, .fast_iter = -1};
    f.noisy_iter = near_iter(&o, &f);
    tb_metg_t m;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &m), 0);
    cr_expect(m.metg_us > 6.0, "METG %.3f us: the noisy point did not stop the sweep", m.metg_us);
    f.noisy_runs = 0;
    o.min_time = 0.05; /* the point's runs take 4 ms (12 ms when slow) */
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &m), 0);
    cr_expect(fabs(m.metg_us - 4.0) < 0.4, "METG %.3f us, want about 4", m.metg_us);
}

/* A slow spell as long as a point's runs (its first two runs 3 times as
 * long): the point falls below 50 %, is timed again (-retries, default 1),
 * reaches 50 % then, and the sweep goes on to where the fixed cost puts the
 * crossing. Without the second timing it ends one halving early. */
Test(tb_sweep, a_point_below_half_is_timed_again)
{
    tb_opts_t o = opts();
    o.reps = 2;
    cr_expect_eq(o.retries, 1);
    fake_t f = {.rate = 1e10, .per_task = 2e-6, .slow_iter = -1, .fast_iter = -1};
    f.noisy_iter = near_iter(&o, &f);
    tb_metg_t m;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &m), 0);
    cr_expect(fabs(m.metg_us - 4.0) < 0.4, "METG %.3f us, want about 4", m.metg_us);
    cr_expect_eq(f.noisy_runs, 4, "the noisy point ran %d times, want 2 + 2", f.noisy_runs);
    f.noisy_runs = 0;
    o.retries = 0;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &m), 0);
    cr_expect(m.metg_us > 6.0, "METG %.3f us: the noisy point did not stop the sweep", m.metg_us);
}

/* A point that stays below 50 % ends the sweep after its second timing, at
 * the same crossing as without it. */
Test(tb_sweep, the_second_timing_does_not_move_a_true_crossing)
{
    tb_opts_t o = opts();
    fake_t f = {.rate = 1e10, .per_task = 2e-6, .slow_iter = -1, .noisy_iter = -1, .fast_iter = -1};
    tb_metg_t a, b;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &a), 0);
    o.retries = 0;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &b), 0);
    cr_expect(fabs(a.metg_us - b.metg_us) < 1e-9, "METG %.4f with, %.4f without", a.metg_us,
              b.metg_us);
}

/* Whether tb_parse takes `option value`. */
static int parses(const char *option, const char *value, tb_opts_t *o)
{
    char *argv[] = {"t", (char *)option, (char *)value};
    return tb_parse(3, argv, o) == 0;
}

Test(tb_sweep, min_time_and_retries_are_checked)
{
    tb_opts_t o;
    cr_expect(!parses("-min-time", "-1", &o));
    cr_expect(!parses("-min-time", "0.05x", &o));
    cr_assert(parses("-min-time", "0.05", &o));
    cr_expect(o.min_time == 0.05);
    cr_expect(!parses("-retries", "9", &o));
    cr_expect(!parses("-retries", "-1", &o));
    cr_assert(parses("-retries", "0", &o));
    cr_expect_eq(o.retries, 0);
}

/* One of the first points ran in a fast spell, at twice the rate: the peak
 * is not that point's, so the sweep goes on to where the fixed cost puts the
 * crossing. (With the highest rate as the peak it ends at about 54 us.) */
Test(tb_sweep, one_fast_point_does_not_raise_the_peak)
{
    tb_opts_t o = opts();
    fake_t f = {.rate = 1e10, .per_task = 2e-6, .slow_iter = -1, .noisy_iter = -1,
                .fast_iter = 16384};
    tb_metg_t m;
    cr_assert_eq(tb_sweep(&o, 1, fake_run, &f, NULL, &m), 0);
    cr_expect(m.peak < 1.1e10, "peak %.3g, want the usual rate", m.peak);
    cr_expect(fabs(m.metg_us - 4.0) < 0.4, "METG %.3f us, want about 4", m.metg_us);
}
