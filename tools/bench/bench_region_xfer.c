/* Transfer bandwidth through the whole task path (planner, executor,
 * memory-space actors, transport), between two ranks: each round is a
 * region in which rank 0 touches K chunks of S bytes (a new version) and
 * rank 1 reads them, so every round moves K*S bytes from rank 0 to rank 1.
 * The figure is K*S / (round time), the median of the timed rounds (the
 * region's fixed cost is in it: K is chosen so it stays small).
 *
 *   dagger-run -n 2 bench_region_xfer [results-file] [testdev|cuda|hip]
 *
 * With a device kind, the tasks of every other round run on the ranks'
 * devices of that kind instead of their CPUs (rounds alternate), so the
 * data goes device -> rank 0's host memory -> wire -> rank 1's device (host
 * staged, or direct with DAGGER_GPU_DIRECT=1) plus the copies to and from
 * the devices, beside the host-to-host path in the same run; the ratio is
 * device / host of the medians. For the test device kind run with
 * DAGGER_TEST_DEVICES=1.
 *
 * With a device kind there are three device variants: through IPC handles
 * (the default between ranks of one node, DAGGER_GPU_IPC; the ranks must
 * share a device, or be test devices), host-staged in pieces of
 * DAGGER_GPU_PIPELINE_PIECE (default 4 MiB), and host-staged whole
 * (DAGGER_GPU_PIPELINE_PIECE = 0). The settings are changed between regions
 * on every rank. "pieces/whole" is the ratio of the two staged medians,
 * "ipc/staged" that of IPC to the better staged one. The four variants
 * alternate round by round, with the process's DAGGER_GPU_WAKE. BENCH_WAKE=both
 * runs the three device variants with DAGGER_GPU_WAKE=each and again with
 * armed (seven alternated; "armed/each" per path).
 *
 * Sizes: 1 MiB (K = 16) and 64 MiB (K = 2). Results go to results-file
 * (default /tmp/bench_region_xfer.txt) and stdout. Not a test. */
#include <dagger.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/runtime/runtime.h"
#include "core/runtime/tasks.h"
#include "devices/dev.h"

#define ROUNDS_WARM 3
#define ROUNDS 9
#define MAXK 16
#define NPATH 4 /* host; device through IPC, staged in pieces, staged whole */
#define NVAR (2 * NPATH - 1) /* with BENCH_WAKE=both: the device paths again, armed */

/* The device path of this rank's transfers from the next region on
 * (settings read at init; changed here between regions, on every rank):
 * variant 1 through IPC handles, 2 staged in pieces, 3 staged whole; 4-6
 * the same with DAGGER_GPU_WAKE=armed (BENCH_WAKE=both; armed: variants 1-3's
 * setting). */
static void set_path(dagger_runtime_t *rt, int v, size_t piece, const dg_dev_ipc_map_t *ipc,
                     int armed)
{
    dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    if (!ds)
        return;
    int path = v >= NPATH ? v - NPATH + 1 : v;
    ds->piece = path == 3 ? 0 : piece;
    ds->ipc = path == 1 ? ipc : NULL;
    ds->wake_armed = v >= NPATH || armed;
}

/* CLOCK_MONOTONIC in seconds. */
static double mono(void)
{
    struct timespec ts = {0, 0};
    return clock_gettime(CLOCK_MONOTONIC, &ts) ? 0 : (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int touch(dagger_task_t *t)
{
    ((unsigned char *)dagger_task_arg(t, 0).data)[0]++;
    return DAGGER_OK;
}

/* The CUDA/HIP implementations do nothing: the figure is the data path, and
 * touch's argument is INOUT, so each round makes a new version whatever the
 * body does (a test device runs the cpu ones, on its host-addressable memory). */
static int gpu_nothing(dagger_task_t *t)
{
    return DAGGER_OK;
}

static int readit(dagger_task_t *t)
{
    volatile unsigned char c = ((unsigned char *)dagger_task_arg(t, 0).data)[0];
    (void)c;
    return DAGGER_OK;
}

static void check(dagger_status_t st, const char *what)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "%s: %s\n", what, dagger_error_detail());
        exit(1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What went through IPC handles so far (both ranks, printed by rank 0):
 * how a per-transfer cost splits (new blocks and new opens are the costly
 * ones; a steady state has neither). */
static void ipc_counts(dagger_runtime_t *rt, const char *kind)
{
    dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    uint64_t c[10] = {0};
    for (int d = 0; ds && d < ds->n; d++) {
        c[0] += atomic_load(&ds->dev[d].ipc_sent);
        c[1] += atomic_load(&ds->dev[d].ipc_received);
        c[2] += atomic_load(&ds->dev[d].ipc_opened);
        c[3] += atomic_load(&ds->dev[d].ipcmem.misses);
        c[4] += atomic_load(&ds->dev[d].staged);
        c[9] += atomic_load(&ds->dev[d].hostfns);
        for (int k = 0; k < 4; k++)
            c[5 + k] += atomic_load(&ds->dev[d].ipc_ns[k]);
    }
    check(dagger_allreduce(rt, c, 10, DAGGER_U64, DAGGER_OP_ADD), "allreduce");
    if (kind && dagger_rank(rt) == 0)
        printf("ipc so far: %llu sent, %llu received, %llu handles opened, %llu blocks "
               "allocated; %llu staged halves; %llu device wake-ups asked for\n",
               (unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2],
               (unsigned long long)c[3], (unsigned long long)c[4], (unsigned long long)c[9]);
    double n = c[1] ? (double)c[1] : 1;
    if (kind && dagger_rank(rt) == 0)
        printf("ipc per transfer: pack until passed %.1f us, export %.1f us, open %.1f us (all "
               "opens over the transfers), copy until passed %.1f us\n", c[5] / n * 1e-3,
               c[6] / n * 1e-3, c[7] / n * 1e-3, c[8] / n * 1e-3);
}

/* One round: rank 0 writes, rank 1 reads every chunk. Returns seconds
 * (the slower rank's). */
static double round_time(dagger_runtime_t *rt, dagger_codelet_t w, dagger_codelet_t r,
                         dagger_chunk_t *c, int k, uint32_t kinds)
{
    dagger_barrier(rt);
    double t0 = mono();
    dagger_region_t *reg;
    check(dagger_region_begin(rt, NULL, &reg), "region_begin");
    for (int i = 0; i < k; i++) {
        /* kinds 0: the ranks' CPUs; otherwise their devices of that kind */
        dagger_scope_t s0 = {.ranks = (const int[]){0}, .nranks = 1, .kinds = kinds};
        dagger_scope_t s1 = {.ranks = (const int[]){1}, .nranks = 1, .kinds = kinds};
        dagger_task_opts_t o0 = {.scope = &s0};
        dagger_task_opts_t o1 = {.scope = &s1};
        check(dagger_submit(reg, w, 1, &DAGGER_INOUT(dagger_view(rt, c[i])), &o0, NULL, NULL),
              "submit");
        check(dagger_submit(reg, r, 1, &DAGGER_IN(dagger_view(rt, c[i])), &o1, NULL, NULL),
              "submit");
    }
    check(dagger_region_end(reg), "region_end");
    double t = mono() - t0;
    check(dagger_allreduce(rt, &t, 1, DAGGER_F64, DAGGER_OP_MAX), "allreduce");
    return t;
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "/tmp/bench_region_xfer.txt";
    const char *kind = argc > 2 ? argv[2] : NULL;
    uint32_t dev = !kind ? 0 : !strcmp(kind, "cuda") ? DAGGER_PROC_CUDA
                             : !strcmp(kind, "hip")  ? DAGGER_PROC_HIP
                                                     : DAGGER_PROC_TESTDEV;
    dagger_runtime_t *rt;
    check(dagger_init(NULL, NULL, NULL, &rt), "dagger_init");
    if (dagger_nranks(rt) != 2) {
        fprintf(stderr, "bench_region_xfer: run on 2 ranks\n");
        dagger_finalize(rt);
        return 1;
    }
    dagger_codelet_t w, r;
    dagger_codelet_desc_t dw = {.name = "touch", .cpu = touch, .cuda = gpu_nothing, .hip = gpu_nothing};
    dagger_codelet_desc_t dr = {.name = "read", .cpu = readit, .cuda = gpu_nothing, .hip = gpu_nothing};
    check(dagger_codelet_register(rt, &dw, &w), "codelet");
    check(dagger_codelet_register(rt, &dr, &r), "codelet");
    const size_t sizes[2] = {1u << 20, 64u << 20};
    const int ks[2] = {16, 2};
    FILE *f = dagger_rank(rt) == 0 ? fopen(out, "w") : NULL;
    dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    const size_t piece = ds ? ds->piece : 0;
    const dg_dev_ipc_map_t *ipcmap = ds ? ds->ipc : NULL;
    int ipc = ipcmap && ds->n && ipcmap->domains[(size_t)dagger_rank(rt) * DG_DEV_MAX] != 0;
    if (dev && dagger_rank(rt) == 0 && !ipc)
        printf("no IPC (DAGGER_GPU_IPC=0, or the device has no IPC domain): the ipc rows are "
               "host-staged in pieces\n");
    /* BENCH_WAKE=both: each device path also with armed wake-ups, alternated */
    const char *wake = getenv("BENCH_WAKE");
    const int both = dev && wake && !strcmp(wake, "both");
    const int armed0 = !both && ds && ds->wake_armed; /* the first three device variants' */
    const int nvar = !dev ? 1 : both ? NVAR : NPATH;
    for (int s = 0; s < 2; s++) {
        dagger_chunk_t c[MAXK];
        for (int i = 0; i < ks[s]; i++) {
            dagger_chunk_desc_t d = {.dtype = DAGGER_U8, .ndims = 1, .dims = {sizes[s]}, .owner = 0};
            check(dagger_chunk_create(rt, &d, &c[i]), "chunk_create");
        }
        double t[NVAR][ROUNDS];
        for (int i = 0; i < ROUNDS_WARM; i++)
            for (int v = 0; v < nvar; v++) {
                set_path(rt, v, piece, ipcmap, armed0);
                round_time(rt, w, r, c, ks[s], v ? dev : 0);
            }
        for (int i = 0; i < ROUNDS; i++) /* variants alternate, the order turns each round */
            for (int j = 0; j < nvar; j++) {
                int v = (j + i) % nvar;
                set_path(rt, v, piece, ipcmap, armed0);
                t[v][i] = round_time(rt, w, r, c, ks[s], v ? dev : 0);
            }
        set_path(rt, 1, piece, ipcmap, armed0);
        double bytes = (double)sizes[s] * ks[s], med[NVAR] = {0};
        for (int v = 0; v < nvar; v++) {
            qsort(t[v], ROUNDS, sizeof(double), cmp);
            med[v] = bytes / t[v][ROUNDS / 2] * 1e-9;
            if (dagger_rank(rt) != 0)
                continue;
            char line[200], name[40];
            static const char *const how[NVAR] = {"", " ipc", " pieces", " whole",
                                                  " ipc armed", " pieces armed", " whole armed"};
            snprintf(name, sizeof(name), "%s%s", v ? kind : "host", how[v]);
            snprintf(line, sizeof(line), "xfer %3zu MiB x %2d %-21s: median %.3f GB/s (min %.3f, "
                     "max %.3f)\n", sizes[s] >> 20, ks[s], name, med[v],
                     bytes / t[v][ROUNDS - 1] * 1e-9, bytes / t[v][0] * 1e-9);
            fputs(line, stdout);
            if (f)
                fputs(line, f);
        }
        if (dev && dagger_rank(rt) == 0) {
            char line[200];
            double staged = med[2] > med[3] ? med[2] : med[3];
            snprintf(line, sizeof(line), "xfer %3zu MiB x %2d %s ipc/host: %.2fx, pieces/host: "
                     "%.2fx, whole/host: %.2fx, pieces of %zu KiB/whole: %.2fx, ipc/staged: "
                     "%.2fx\n", sizes[s] >> 20, ks[s], kind, med[1] / med[0], med[2] / med[0],
                     med[3] / med[0], piece >> 10, med[2] / med[3], med[1] / staged);
            fputs(line, stdout);
            if (f)
                fputs(line, f);
            if (both) {
                snprintf(line, sizeof(line), "xfer %3zu MiB x %2d %s armed/each: ipc %.2fx, "
                         "pieces %.2fx, whole %.2fx\n", sizes[s] >> 20, ks[s], kind,
                         med[4] / med[1], med[5] / med[2], med[6] / med[3]);
                fputs(line, stdout);
                if (f)
                    fputs(line, f);
            }
        }
        for (int i = 0; i < ks[s]; i++)
            check(dagger_chunk_free(rt, c[i]), "chunk_free");
        ipc_counts(rt, kind);
    }
    if (f)
        fclose(f);
    check(dagger_finalize(rt), "dagger_finalize");
    return 0;
}
