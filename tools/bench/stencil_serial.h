/* bench_stencil_sweep's serial reference, compiled twice from stencil_serial.c
 * (tools/bench/CMakeLists.txt): with the project's flags ("plain"), and with
 * the flags the runtime's stencil kernel gets (DAGGER_KERNEL_VEC_OPTIONS and
 * the same AVX2 clone, core/base/simd.h: "vec"), so the sweep is compared
 * with the same loop as the compiler gives it to the runtime's own kernel. */
#ifndef DG_BENCH_STENCIL_SERIAL_H
#define DG_BENCH_STENCIL_SERIAL_H

/* y = the 3 x 3 neighbour sum of x with wrapped edges, x and y n x n. */
void dg_bench_serial_sweep_plain(const double *x, double *y, long n);
void dg_bench_serial_sweep_vec(const double *x, double *y, long n);
/* The same for the lines j0 .. j1 - 1 of y only (the "par" variant splits
 * the lines between plain threads). */
void dg_bench_serial_sweep_rows_plain(const double *x, double *y, long n, long j0, long j1);
void dg_bench_serial_sweep_rows_vec(const double *x, double *y, long n, long j0, long j1);

#endif
