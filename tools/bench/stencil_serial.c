/* The serial reference of bench_stencil_sweep: the interior as one unrolled
 * loop, the edges with wrapped indices (what a C programmer would write).
 * Built twice under two names (DG_SERIAL_SWEEP, DG_SERIAL_SWEEP_ROWS;
 * stencil_serial.h). */
#include "tools/bench/stencil_serial.h"

/* "vec" also gets the runtime kernel's instruction-set clones
 * (core/base/simd.h), as its loop does. */
#ifdef DG_SERIAL_CLONED
#include "core/base/simd.h"
#define DG_SERIAL_ATTR DG_SIMD_CLONES
#else
#define DG_SERIAL_ATTR
#endif

static double wrap_sum(const double *x, long n, long i, long j)
{
    double acc = 0;
    for (long dj = -1; dj <= 1; dj++)
        for (long di = -1; di <= 1; di++)
            acc += x[(i + di + n) % n + ((j + dj + n) % n) * n];
    return acc;
}

static DG_SERIAL_ATTR void sweep(const double *x, double *y, long n, long j0, long j1)
{
    for (long j = j0; j < j1; j++) {
        y[j * n] = wrap_sum(x, n, 0, j);
        y[n - 1 + j * n] = wrap_sum(x, n, n - 1, j);
        if (j == 0 || j == n - 1) {
            for (long i = 1; i < n - 1; i++)
                y[i + j * n] = wrap_sum(x, n, i, j);
            continue;
        }
        for (long i = 1; i < n - 1; i++) {
            const double *c = x + i + j * n;
            y[i + j * n] = c[-n - 1] + c[-n] + c[-n + 1] + c[-1] + c[0] + c[1] + c[n - 1] + c[n] +
                           c[n + 1];
        }
    }
}

/* The clones stay behind a plain function: a cloned external function's
 * own symbol is the resolver's, which not every compiler gives it (clang
 * 14 does not). */
void DG_SERIAL_SWEEP(const double *x, double *y, long n)
{
    sweep(x, y, n, 0, n);
}

void DG_SERIAL_SWEEP_ROWS(const double *x, double *y, long n, long j0, long j1)
{
    sweep(x, y, n, j0, j1);
}
