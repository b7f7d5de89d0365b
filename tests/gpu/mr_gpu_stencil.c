/* Stencils on device data: a sweep run in a region whose scope admits only
 * test devices runs its pack and sweep tasks on the devices (the halo
 * strips are sub-views that move packed between devices and ranks) and
 * gives what the CPU run gives. */
#include "gpu/gpu_kind.h"
#include "multirank/array_util.h"

static void sweep(dagger_runtime_t *rt, dagger_stencil_t *s, const dagger_scope_t *scope,
                  dagger_region_stats_t *st)
{
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, scope, &r));
    AR_OK(dagger_stencil_run(r, s));
    AR_OK(dagger_region_end(r));
    AR_OK(dagger_region_stats(rt, st));
}

Test(gpu_stencil, a_wrapped_window_sum_on_test_devices_equals_the_cpu_one)
{
    dagger_runtime_t *rt = ar_init();
    double x[64];
    for (int k = 0; k < 64; k++)
        x[k] = (double)((k * 7) % 11);
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 8, 8, 4, 4);
    dagger_array_t *a, *on_cpu, *on_dev;
    AR_OK(dagger_array_from_host(rt, &d, x, &a));
    AR_OK(dagger_array_zeros(rt, &d, &on_cpu));
    AR_OK(dagger_array_zeros(rt, &d, &on_dev));
    dagger_stencil_expr_t e = {.kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0].array = a;
    for (int k = 0; k < 2; k++) {
        e.in[0].dist[k] = 1;
        e.in[0].bc[k] = (dagger_boundary_t){.kind = DAGGER_BC_WRAP};
    }
    dagger_stencil_t *sc, *sd;
    e.out = on_cpu;
    AR_OK(dagger_stencil_create(rt, 1, &e, &sc));
    e.out = on_dev;
    AR_OK(dagger_stencil_create(rt, 1, &e, &sd));
    dagger_region_stats_t cpu_st, dev_st;
    sweep(rt, sc, NULL, &cpu_st);
    dagger_scope_t devs = {.kinds = gpu_kind()};
    sweep(rt, sd, &devs, &dev_st);
    cr_assert_eq(cpu_st.copies, 0, "the CPU sweep stays in host memory");
    cr_assert_gt(dev_st.copies, 0, "the device sweep copies to and from device memory");
    double want[64];
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 8; i++) {
            double sum = 0;
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++)
                    sum += x[(i + di + 8) % 8 + 8 * ((j + dj + 8) % 8)];
            want[i + 8 * j] = sum;
        }
    ar_expect(on_cpu, want, 0, "CPU");
    ar_expect(on_dev, want, 0, "test devices");
    AR_OK(dagger_stencil_destroy(sc));
    AR_OK(dagger_stencil_destroy(sd));
    AR_DESTROY(a, on_cpu, on_dev);
    AR_OK(dagger_finalize(rt));
}
