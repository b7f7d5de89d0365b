/* End-to-end empty-task throughput in a region (one rank), next to StarPU's
 * measured in the same run when StarPU is available.
 *
 *   bench_region_throughput [tasks] [results-file]
 *
 * Cases, each the best of 3 regions:
 *   noarg     tasks without arguments (pure submission + scheduling cost)
 *   distinct  each task reads its own chunk (no dependencies between tasks)
 *   chains    64 chunks, each task InOut on one of them (64 dependency chains)
 * StarPU runs the same shapes with starpu_task_insert (STARPU_R / STARPU_RW on
 * registered vectors, no data for noarg), with as many CPU workers. */
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DG_HAVE_STARPU
#include <starpu.h>
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { CASE_NOARG, CASE_DISTINCT, CASE_CHAINS, NCASES };
static const char *case_names[NCASES] = {"noarg", "distinct", "chains"};
#define NCHAINS 64

static int empty_task(dagger_task_t *t)
{
    (void)t;
    return DAGGER_OK;
}

static double dagger_rate(int which, long n, int *threads)
{
    dagger_runtime_t *rt;
    if (dagger_init(NULL, NULL, NULL, &rt) != DAGGER_OK) {
        fprintf(stderr, "dagger_init: %s\n", dagger_error_detail());
        exit(1);
    }
    *threads = dagger_num_threads(rt);
    dagger_codelet_t cl;
    dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "empty", .cpu = empty_task}, &cl);
    long nch = which == CASE_DISTINCT ? n : which == CASE_CHAINS ? NCHAINS : 0;
    dagger_view_t *v = malloc(sizeof(*v) * (size_t)(nch ? nch : 1));
    for (long i = 0; i < nch; i++) {
        dagger_chunk_t c;
        dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {8}, .owner = 0};
        dagger_chunk_create(rt, &d, &c);
        v[i] = dagger_view(rt, c);
    }
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        dagger_region_t *r;
        dagger_region_begin(rt, NULL, &r);
        double t0 = now();
        for (long i = 0; i < n; i++) {
            dagger_arg_t a = which == CASE_DISTINCT ? DAGGER_IN(v[i])
                                                     : DAGGER_INOUT(v[nch ? i % nch : 0]);
            dagger_submit(r, cl, which == CASE_NOARG ? 0 : 1, &a, NULL, NULL, NULL);
        }
        dagger_status_t st = dagger_region_end(r);
        double rate = (double)n / (now() - t0);
        if (st != DAGGER_OK)
            fprintf(stderr, "region: %s\n", dagger_error_detail());
        best = rate > best ? rate : best;
    }
    free(v);
    dagger_finalize(rt);
    return best;
}

#ifdef DG_HAVE_STARPU
static void starpu_empty(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
}

static double starpu_rate(int which, long n, int threads)
{
    static struct starpu_codelet cl0 = {.cpu_funcs = {starpu_empty}, .nbuffers = 0};
    static struct starpu_codelet clr = {.cpu_funcs = {starpu_empty}, .nbuffers = 1,
                                        .modes = {STARPU_R}};
    static struct starpu_codelet clrw = {.cpu_funcs = {starpu_empty}, .nbuffers = 1,
                                         .modes = {STARPU_RW}};
    char ncpu[16];
    snprintf(ncpu, sizeof(ncpu), "%d", threads);
    setenv("STARPU_NCPU", ncpu, 1);
    setenv("STARPU_NCUDA", "0", 1);
    setenv("STARPU_NOPENCL", "0", 1);
    setenv("STARPU_SILENT", "1", 1);
    if (starpu_init(NULL) != 0) {
        fprintf(stderr, "starpu_init failed\n");
        return 0;
    }
    long nh = which == CASE_DISTINCT ? n : which == CASE_CHAINS ? NCHAINS : 0;
    starpu_data_handle_t *h = malloc(sizeof(*h) * (size_t)(nh ? nh : 1));
    double *mem = calloc((size_t)(nh ? nh : 1) * 8, sizeof(double));
    for (long i = 0; i < nh; i++)
        starpu_vector_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&mem[i * 8], 8, sizeof(double));
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        for (long i = 0; i < n; i++) {
            if (which == CASE_NOARG)
                starpu_task_insert(&cl0, 0);
            else if (which == CASE_DISTINCT)
                starpu_task_insert(&clr, STARPU_R, h[i], 0);
            else
                starpu_task_insert(&clrw, STARPU_RW, h[i % nh], 0);
        }
        starpu_task_wait_for_all();
        double rate = (double)n / (now() - t0);
        best = rate > best ? rate : best;
    }
    for (long i = 0; i < nh; i++)
        starpu_data_unregister(h[i]);
    free(h);
    free(mem);
    starpu_shutdown();
    return best;
}
#endif

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    const char *out = argc > 2 ? argv[2] : "/tmp/bench_region_throughput.txt";
    FILE *f = fopen(out, "w");
    printf("%-9s %14s %14s %8s\n", "case", "dagger tasks/s", "starpu tasks/s", "ratio");
    for (int c = 0; c < NCASES; c++) {
        int threads = 0;
        double d = dagger_rate(c, n, &threads);
        double s = 0;
#ifdef DG_HAVE_STARPU
        s = starpu_rate(c, n, threads);
#endif
        char ratio[32] = "n/a";
        if (s > 0)
            snprintf(ratio, sizeof(ratio), "%.2fx", d / s);
        printf("%-9s %14.0f %14.0f %8s   (%ld tasks, %d worker threads)\n", case_names[c], d, s,
               ratio, n, threads);
        if (f)
            fprintf(f, "%s dagger=%.0f starpu=%.0f ratio=%s tasks=%ld threads=%d\n", case_names[c],
                    d, s, ratio, n, threads);
    }
    if (f)
        fclose(f);
    printf("results written to %s\n", out);
    return 0;
}
