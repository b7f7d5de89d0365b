/* The array and stencil suites of the Dagger.jl benchmarks (shared/seeds/
 * 001): at N = 256, 1024, 4096 with blocks 128 and 512, each operation on an
 * N x N f64 array is timed next to a plain serial C loop doing the same
 * work, and the bandwidth it reaches is compared with the STREAM triad
 * bandwidth measured in the same run with the same number of threads per
 * rank (all ranks at once). Budget (issue 6): element-wise operations at
 * N = 4096 reach at least 70% of STREAM.
 *
 * Run as 1 rank x 2 threads:  DAGGER_NUM_THREADS=2 bench_array_suite [file] [sizes]
 *        2 ranks x 1 thread:  DAGGER_NUM_THREADS=1 dagger-run -n 2 bench_array_suite ...
 * file defaults to /tmp/bench_array_suite.txt; sizes is a list like 256,1024.
 * For tools/bench/run-suite: a third argument lists the blocks (default
 * 128,512), BENCH_REPS sets the repetitions (1..16), BENCH_FILTER keeps only
 * the rows whose full name contains one of its ';'-separated parts, and
 * every row also writes its per-repetition dagger times to the file as
 * "#samples <row> <s> <s>...". */
#include <dagger.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench {
    dagger_runtime_t *rt;
    int rank, nranks, threads;
    FILE *out;
    double stream_gbs;
    dagger_codelet_t sin_cl;
} bench_t;

static void must(dagger_status_t st, const char *what)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "bench_array_suite: %s: %s: %s\n", what, dagger_strerror(st),
                dagger_error_detail());
        exit(1);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* An empty region: its end agrees on a status across ranks, so it is a barrier. */
static void barrier(bench_t *b)
{
    dagger_region_t *r;
    must(dagger_region_begin(b->rt, NULL, &r), "barrier");
    must(dagger_region_end(r), "barrier");
}

/* ------------------------------------------------------------ STREAM triad */

typedef struct triad {
    double *a, *b, *c;
    size_t lo, hi;
    int init;
} triad_t;

static void *triad_thread(void *p)
{
    triad_t *t = p;
    if (t->init)
        for (size_t i = t->lo; i < t->hi; i++) {
            t->b[i] = 1.0;
            t->c[i] = 2.0;
            t->a[i] = 0.0;
        }
    else
        for (size_t i = t->lo; i < t->hi; i++)
            t->a[i] = t->b[i] + 3.0 * t->c[i];
    return NULL;
}

/* One pass of nt threads over their parts; the wall time of the pass. Each
 * repetition starts all threads together, so the time is that of the
 * threads running at once (timing each thread's own repetitions would
 * overstate the bandwidth whenever the threads do not overlap). */
static double triad_pass(double *a, double *x, double *y, size_t n, int nt, int init)
{
    triad_t t[64];
    pthread_t th[64];
    double t0 = now();
    for (int i = 0; i < nt; i++) {
        t[i] = (triad_t){a, x, y, n * (size_t)i / (size_t)nt, n * (size_t)(i + 1) / (size_t)nt, init};
        pthread_create(&th[i], NULL, triad_thread, &t[i]);
    }
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    return now() - t0;
}

/* Triad bandwidth of this rank's threads, all ranks running at once; the sum
 * over ranks, the same on every rank (gathered through a 1-element-per-rank
 * array). */
static double stream_triad(bench_t *b, size_t n)
{
    double *a = malloc(n * 8), *x = malloc(n * 8), *y = malloc(n * 8);
    int nt = b->threads < 64 ? b->threads : 64;
    triad_pass(a, x, y, n, nt, 1); /* first touch by the threads that use the pages */
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        barrier(b);
        double dt = triad_pass(a, x, y, n, nt, 0);
        best = dt < best ? dt : best;
    }
    free(a);
    free(x);
    free(y);
    double mine = 3.0 * 8.0 * (double)n / best / 1e9;
    int table[64];
    for (int r = 0; r < b->nranks && r < 64; r++)
        table[r] = r;
    dagger_dist_t dist = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = (size_t)b->nranks};
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {(size_t)b->nranks},
                             .block = {1}, .dist = &dist};
    dagger_array_t *arr;
    must(dagger_array_zeros(b->rt, &d, &arr), "stream gather");
    double *p;
    must(dagger_chunk_data(b->rt, dagger_array_block(arr, (size_t)b->rank).chunk, (void **)&p, NULL),
         "stream gather");
    *p = mine;
    double all[64], sum = 0;
    must(dagger_array_collect(arr, all), "stream gather");
    for (int r = 0; r < b->nranks; r++)
        sum += all[r];
    dagger_array_destroy(arr);
    return sum;
}

/* ------------------------------------------------------------ operations */

typedef struct suite {
    bench_t *b;
    size_t n, blk;
    dagger_array_t *x, *y, *z;          /* N x N f64 */
    dagger_stencil_t *st[8];
    double *sx, *sy;                    /* serial copies (rank 0) */
} suite_t;

typedef struct op {
    const char *suite, *name;
    double bytes_per_elem;              /* memory traffic counted for bandwidth; 0 = none */
    void (*dagger)(suite_t *s);
    void (*serial)(suite_t *s);
    int stencil;                        /* index into s->st, or -1 */
} op_t;

static void d_alloc(suite_t *s)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {s->n, s->n},
                             .block = {s->blk, s->blk}};
    dagger_array_t *a;
    must(dagger_array_rand(s->b->rt, &d, 1, &a), "rand");
    dagger_array_destroy(a);
}

static void d_bcast(suite_t *s)
{
    must(dagger_array_scalar(NULL, DAGGER_OP_ADD, s->y, s->x, 1.0), "x .+ 1");
}

static void d_add(suite_t *s)
{
    must(dagger_array_add(NULL, s->y, s->x, s->x), "x + x");
}

static void d_map(suite_t *s)
{
    must(dagger_array_map(NULL, s->b->sin_cl, s->y, 1, &s->x, NULL, 0), "sin");
}

static void d_transpose(suite_t *s)
{
    must(dagger_array_transpose(NULL, s->y, s->x), "transpose");
}

static void d_reduce(suite_t *s, dagger_op_t op)
{
    dagger_future_t f;
    double v;
    must(dagger_array_reduce(NULL, op, s->x, &f), "reduce");
    must(dagger_fetch(s->b->rt, f, &v, sizeof(v), NULL), "fetch");
}

static void d_sum(suite_t *s)
{
    d_reduce(s, DAGGER_OP_ADD);
}

static void d_norm(suite_t *s)
{
    d_reduce(s, DAGGER_OP_NORM2);
}

static int g_stencil; /* which prepared sweep d_stencil runs */

static void d_stencil(suite_t *s)
{
    must(dagger_stencil_run(NULL, s->st[g_stencil]), "stencil");
}

static dagger_stencil_expr_t neighbours(dagger_array_t *out, dagger_array_t *in,
                                        dagger_boundary_kind_t bc);

/* The seeds' allocating case: a new array each time (made, swept, freed). */
static void d_stencil_alloc(suite_t *s)
{
    dagger_stencil_expr_t e = neighbours(NULL, s->x, DAGGER_BC_WRAP);
    dagger_array_t *y;
    must(dagger_stencil_apply_new(s->b->rt, &e, &y), "stencil (allocating)");
    dagger_array_destroy(y);
}

/* z = y + stencil(x), fused into the sweep. */
static void d_stencil_binop(suite_t *s)
{
    dagger_stencil_expr_t e = neighbours(NULL, s->x, DAGGER_BC_WRAP);
    must(dagger_stencil_apply_binop(s->b->rt, DAGGER_OP_ADD, s->z, s->y, &e), "y + stencil");
}

/* ---- serial references (rank 0, one thread, plain loops) ---- */

static void s_alloc(suite_t *s)
{
    size_t m = s->n * s->n;
    double *a = malloc(m * 8);
    for (size_t i = 0; i < m; i++)
        a[i] = dagger_rand_uniform(1, i);
    s->sy[0] = a[m - 1];
    free(a);
}

static void s_bcast(suite_t *s)
{
    for (size_t i = 0; i < s->n * s->n; i++)
        s->sy[i] = s->sx[i] + 1.0;
}

static void s_add(suite_t *s)
{
    for (size_t i = 0; i < s->n * s->n; i++)
        s->sy[i] = s->sx[i] + s->sx[i];
}

static void s_map(suite_t *s)
{
    for (size_t i = 0; i < s->n * s->n; i++)
        s->sy[i] = sin(s->sx[i]);
}

static void s_transpose(suite_t *s)
{
    for (size_t j = 0; j < s->n; j++)
        for (size_t i = 0; i < s->n; i++)
            s->sy[j + i * s->n] = s->sx[i + j * s->n];
}

static void s_sum(suite_t *s)
{
    double a = 0;
    for (size_t i = 0; i < s->n * s->n; i++)
        a += s->sx[i];
    s->sy[0] = a;
}

static void s_norm(suite_t *s)
{
    double a = 0;
    for (size_t i = 0; i < s->n * s->n; i++)
        a += s->sx[i] * s->sx[i];
    s->sy[0] = sqrt(a);
}

/* Index along one dimension under a boundary condition (-1: pad). */
static long resolve(long g, long n, dagger_boundary_kind_t bc)
{
    if (g >= 0 && g < n)
        return g;
    switch (bc) {
    case DAGGER_BC_WRAP: return (g + n) % n;
    case DAGGER_BC_CLAMP: return g < 0 ? 0 : n - 1;
    case DAGGER_BC_REFLECT_SYMMETRIC: return g < 0 ? -g - 1 : 2 * n - 1 - g;
    default: return -1;
    }
}

static dagger_boundary_kind_t g_bc;

/* Edges through resolve(), the interior without it. */
static double edge_sum(const double *x, long n, long i, long j)
{
    double acc = 0;
    for (long dj = -1; dj <= 1; dj++)
        for (long di = -1; di <= 1; di++) {
            long p = resolve(i + di, n, g_bc), q = resolve(j + dj, n, g_bc);
            acc += p < 0 || q < 0 ? 0.0 : x[p + q * n];
        }
    return acc;
}

static void s_neighbours(suite_t *s)
{
    long n = (long)s->n;
    const double *x = s->sx;
    for (long j = 0; j < n; j++)
        for (long i = 0; i < n; i++) {
            if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
                s->sy[i + j * n] = edge_sum(x, n, i, j);
                continue;
            }
            const double *c = x + i + j * n;
            s->sy[i + j * n] = c[-n - 1] + c[-n] + c[-n + 1] + c[-1] + c[0] + c[1] +
                               c[n - 1] + c[n] + c[n + 1];
        }
}

static void s_update(suite_t *s)
{
    for (size_t i = 0; i < s->n * s->n; i++)
        s->sy[i] += 1.0;
}

static void s_assign(suite_t *s)
{
    for (size_t i = 0; i < s->n * s->n; i++)
        s->sy[i] = 1.0;
}

static void s_multi(suite_t *s)
{
    g_bc = DAGGER_BC_WRAP;
    s_neighbours(s); /* y = neighbour sum of x */
    for (size_t i = 0; i < s->n * s->n; i++)
        s->sx[i] = (s->sx[i] + s->sy[i]) * 0.5;
}

static void s_wrap(suite_t *s) { g_bc = DAGGER_BC_WRAP; s_neighbours(s); }

/* The serial loops of the new cases: the interior dominates, so the Wrap
 * loop stands in for AntiReflect's; allocation and the fused add are
 * counted where they happen. */
static void s_wrap_alloc(suite_t *s)
{
    double *keep = s->sy;
    s->sy = malloc(s->n * s->n * 8);
    s_wrap(s);
    free(s->sy);
    s->sy = keep;
}

static void s_wrap_add(suite_t *s)
{
    s_wrap(s);
    for (size_t i = 0; i < s->n * s->n; i++)
        s->sy[i] += s->sx[i];
}
static void s_pad(suite_t *s) { g_bc = DAGGER_BC_PAD; s_neighbours(s); }
static void s_clamp(suite_t *s) { g_bc = DAGGER_BC_CLAMP; s_neighbours(s); }
static void s_reflect(suite_t *s) { g_bc = DAGGER_BC_REFLECT_SYMMETRIC; s_neighbours(s); }

static const op_t ops[] = {
    {"array", "alloc (rand)", 8, d_alloc, s_alloc, -1},
    {"array", "broadcast (X .+ 1)", 16, d_bcast, s_bcast, -1},
    {"array", "add (X + X)", 16, d_add, s_add, -1},
    {"array", "map (sin.(X))", 16, d_map, s_map, -1},
    {"array", "transpose (permutedims)", 16, d_transpose, s_transpose, -1},
    {"array", "reduce (sum)", 8, d_sum, s_sum, -1},
    {"array", "norm", 8, d_norm, s_norm, -1},
    {"stencil", "neighbors (Wrap)", 16, d_stencil, s_wrap, 0},
    {"stencil", "neighbors (Pad)", 16, d_stencil, s_pad, 1},
    {"stencil", "neighbors (Clamp)", 16, d_stencil, s_clamp, 2},
    {"stencil", "neighbors (Reflect)", 16, d_stencil, s_reflect, 3},
    {"stencil", "update (+)", 16, d_stencil, s_update, 4},
    {"stencil", "multi-expr", 24, d_stencil, s_multi, 5},
    {"stencil", "neighbors (AntiReflect)", 16, d_stencil, s_wrap, 6},
    {"stencil", "alloc (neighbors Wrap)", 16, d_stencil_alloc, s_wrap_alloc, -1},
    {"stencil", "Y + stencil (fused)", 24, d_stencil_binop, s_wrap_add, -1},
    {"stencil", "assign (const)", 8, d_stencil, s_assign, 7},
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* ------------------------------------------------------------ the prepared sweeps */

static dagger_stencil_expr_t neighbours(dagger_array_t *out, dagger_array_t *in,
                                        dagger_boundary_kind_t bc)
{
    dagger_stencil_expr_t e = {.out = out, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0] = (dagger_stencil_input_t){.array = in, .dist = {1, 1}, .bc = {{bc, 0}, {bc, 0}}};
    return e;
}

static void prepare_stencils(suite_t *s)
{
    const dagger_boundary_kind_t bcs[4] = {DAGGER_BC_WRAP, DAGGER_BC_PAD, DAGGER_BC_CLAMP,
                                           DAGGER_BC_REFLECT_SYMMETRIC};
    for (int k = 0; k < 4; k++) {
        dagger_stencil_expr_t e = neighbours(s->y, s->x, bcs[k]);
        must(dagger_stencil_create(s->b->rt, 1, &e, &s->st[k]), "stencil");
    }
    dagger_stencil_expr_t up = {.out = s->z, .assign = DAGGER_OP_ADD,
                                .kernel = DAGGER_STENCIL_CONST, .value = 1};
    must(dagger_stencil_create(s->b->rt, 1, &up, &s->st[4]), "update");
    /* z = neighbour sum of x (Wrap); x += z; x *= 0.5 */
    dagger_stencil_expr_t multi[3] = {
        neighbours(s->z, s->x, DAGGER_BC_WRAP),
        {.out = s->x, .assign = DAGGER_OP_ADD, .kernel = DAGGER_STENCIL_COPY, .nin = 1},
        {.out = s->x, .assign = DAGGER_OP_MUL, .kernel = DAGGER_STENCIL_CONST, .value = 0.5},
    };
    multi[1].in[0].array = s->z;
    must(dagger_stencil_create(s->b->rt, 3, multi, &s->st[5]), "multi-expr");
    dagger_stencil_expr_t anti = neighbours(s->y, s->x, DAGGER_BC_ANTIREFLECT_MIRROR);
    must(dagger_stencil_create(s->b->rt, 1, &anti, &s->st[6]), "antireflect");
    dagger_stencil_expr_t set = {.out = s->y, .kernel = DAGGER_STENCIL_CONST, .value = 1};
    must(dagger_stencil_create(s->b->rt, 1, &set, &s->st[7]), "assign");
}

/* ------------------------------------------------------------ timing */

/* The best of the repetitions, as STREAM reports: on a shared machine the
 * other times measure the neighbours. */
static double best(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/* Best wall time over reps (each kept in t), after one warm-up; ranks start
 * together. */
static double time_dagger(suite_t *s, const op_t *o, int reps, double t[16])
{
    g_stencil = o->stencil;
    o->dagger(s);
    for (int r = 0; r < reps; r++) {
        barrier(s->b);
        double t0 = now();
        o->dagger(s);
        t[r] = now() - t0;
    }
    return best(t, reps);
}

static double time_serial(suite_t *s, const op_t *o, int reps)
{
    double t[16];
    o->serial(s);
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        o->serial(s);
        t[r] = now() - t0;
    }
    return best(t, reps);
}

static void row_name(const suite_t *s, const op_t *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s/dagger/N=%zu (block %zu)/%s", o->suite, s->n, s->blk, o->name);
}

/* BENCH_FILTER: keep only the rows whose full name contains one of its
 * ';'-separated parts (run-suite passes the exact names it wants). */
static int selected(const suite_t *s, const op_t *o)
{
    const char *f = getenv("BENCH_FILTER");
    char name[160], part[160];
    if (!f || !*f)
        return 1;
    row_name(s, o, name, sizeof(name));
    for (const char *p = f; *p; p += *p == ';') {
        size_t len = strcspn(p, ";");
        snprintf(part, sizeof(part), "%.*s", (int)(len < sizeof(part) ? len : sizeof(part) - 1), p);
        if (len && strstr(name, part))
            return 1;
        p += len;
    }
    return 0;
}

static int bench_reps(size_t n)
{
    const char *e = getenv("BENCH_REPS");
    int r = e ? atoi(e) : 0;
    return r >= 1 && r <= 16 ? r : n >= 4096 ? 5 : 7;
}

static void report_samples(const suite_t *s, const op_t *o, const double *t, int reps)
{
    char name[160];
    row_name(s, o, name, sizeof(name));
    fprintf(s->b->out, "#samples %s", name);
    for (int r = 0; r < reps; r++)
        fprintf(s->b->out, " %.9f", t[r]);
    fprintf(s->b->out, "\n");
}

static void report(suite_t *s, const op_t *o, double td, double ts)
{
    bench_t *b = s->b;
    double gbs = o->bytes_per_elem * (double)(s->n * s->n) / td / 1e9;
    char line[256];
    snprintf(line, sizeof(line),
             "%s/dagger/N=%zu (block %zu)/%-24s %9.3f ms  serial %9.3f ms  serial/dagger %5.2f  "
             "%6.2f GB/s = %3.0f%% of STREAM",
             o->suite, s->n, s->blk, o->name, td * 1e3, ts * 1e3, ts / td, gbs,
             100 * gbs / b->stream_gbs);
    if (b->rank == 0) {
        printf("%s\n", line);
        fprintf(b->out, "%s\n", line);
        fflush(b->out);
        fflush(stdout);
    }
}

static void run_suite(bench_t *b, size_t n, size_t blk, double *serial_ms)
{
    suite_t s = {.b = b, .n = n, .blk = blk};
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {n, n}, .block = {blk, blk}};
    must(dagger_array_rand(b->rt, &d, 1, &s.x), "x");
    must(dagger_array_zeros(b->rt, &d, &s.y), "y");
    must(dagger_array_zeros(b->rt, &d, &s.z), "z");
    prepare_stencils(&s);
    /* STREAM again for every suite: the machine is shared and drifts. */
    b->stream_gbs = stream_triad(b, (size_t)1 << 25);
    if (b->rank == 0) {
        fprintf(b->out, "# N=%zu block %zu: STREAM triad %.2f GB/s (%d rank(s) x %d thread(s), "
                "all at once)\n", n, blk, b->stream_gbs, b->nranks, b->threads);
        printf("STREAM triad: %.2f GB/s (%d rank(s) x %d thread(s))\n", b->stream_gbs, b->nranks,
               b->threads);
    }
    int reps = bench_reps(n);
    if (b->rank == 0 && serial_ms[0] < 0) {
        s.sx = malloc(n * n * 8);
        s.sy = calloc(n * n, 8);
        for (size_t i = 0; i < n * n; i++)
            s.sx[i] = dagger_rand_uniform(1, i);
        for (size_t k = 0; k < NOPS; k++)
            if (selected(&s, &ops[k]))
                serial_ms[k] = time_serial(&s, &ops[k], reps);
        free(s.sx);
        free(s.sy);
    }
    for (size_t k = 0; k < NOPS; k++) {
        double t[16];
        if (!selected(&s, &ops[k]))
            continue;
        report(&s, &ops[k], time_dagger(&s, &ops[k], reps, t), serial_ms[k]);
        if (b->rank == 0)
            report_samples(&s, &ops[k], t, reps);
    }
    for (int k = 0; k < 8; k++)
        dagger_stencil_destroy(s.st[k]);
    dagger_array_destroy(s.x);
    dagger_array_destroy(s.y);
    dagger_array_destroy(s.z);
}

static int sin_tile(dagger_task_t *t)
{
    dagger_slot_t o = dagger_task_arg(t, 0), x = dagger_task_arg(t, 1);
    for (size_t j = 0; j < o.dims[1]; j++) {
        double *po = (double *)o.data + j * o.strides[1];
        const double *px = (const double *)x.data + j * x.strides[1];
        for (size_t i = 0; i < o.dims[0]; i++)
            po[i] = sin(px[i]);
    }
    return DAGGER_OK;
}

int main(int argc, char **argv)
{
    bench_t b = {0};
    must(dagger_init(&argc, &argv, NULL, &b.rt), "init");
    b.rank = dagger_rank(b.rt);
    b.nranks = dagger_nranks(b.rt);
    b.threads = dagger_num_threads(b.rt);
    const char *path = argc > 1 ? argv[1] : "/tmp/bench_array_suite.txt";
    size_t sizes[8] = {256, 1024, 4096}, nsizes = 3;
    if (argc > 2) {
        nsizes = 0;
        for (char *p = argv[2]; *p && nsizes < 8; p += *p == ',')
            sizes[nsizes++] = strtoul(p, &p, 10);
    }
    b.out = b.rank == 0 ? fopen(path, "a") : NULL;
    if (b.rank == 0 && !b.out) {
        fprintf(stderr, "bench_array_suite: cannot open %s\n", path);
        return 1;
    }
    must(dagger_codelet_register(b.rt, &(dagger_codelet_desc_t){.name = "bench.sin", .cpu = sin_tile},
                                 &b.sin_cl), "codelet");
    size_t blocks[8] = {128, 512}, nblocks = 2;
    if (argc > 3) {
        nblocks = 0;
        for (char *p = argv[3]; *p && nblocks < 8; p += *p == ',')
            blocks[nblocks++] = strtoul(p, &p, 10);
    }
    if (b.rank == 0)
        fprintf(b.out, "# bench_array_suite: %d rank(s) x %d thread(s)\n", b.nranks, b.threads);
    for (size_t i = 0; i < nsizes; i++) {
        double serial_ms[NOPS];
        for (size_t k = 0; k < NOPS; k++)
            serial_ms[k] = -1;
        for (size_t j = 0; j < nblocks; j++)
            run_suite(&b, sizes[i], blocks[j], serial_ms);
    }
    if (b.out)
        fclose(b.out);
    return dagger_finalize(b.rt) == DAGGER_OK ? 0 : 1;
}
