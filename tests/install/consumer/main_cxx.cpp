/* A C++ program built against the installed headers (check_install.sh
 * compiles it with g++ -std=c++17 -Wall -Wextra -Werror -pedantic): the
 * argument and scope macros, which are compound literals in C, must be valid
 * C++ too. One task fills a chunk from a value argument and returns the sum,
 * a second reads the chunk and that future and returns their total, a third
 * doubles the chunk in place; the program checks all three, and an
 * allreduce with the shared type and operator enums. It starts the runtime
 * as an embedding program would: without signal handlers or exits. */
#include <dagger.h>

#include <cstdint>
#include <cstdio>

#define CHECK(call)                                                                     \
    do {                                                                                \
        dagger_status_t st_ = (call);                                                   \
        if (st_ != DAGGER_OK) {                                                         \
            std::fprintf(stderr, "%s: %s (%s)\n", #call, dagger_strerror(st_),          \
                         dagger_error_detail());                                        \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

static int fill(dagger_task_t *t)
{
    dagger_slot_t out = dagger_task_arg(t, 0), v = dagger_task_arg(t, 1);
    double x = *static_cast<const double *>(v.data), sum = 0;
    for (size_t i = 0; i < out.count; i++)
        sum += static_cast<double *>(out.data)[i] = x;
    return dagger_task_return(t, &sum, sizeof(sum));
}

static int total(dagger_task_t *t)
{
    dagger_slot_t in = dagger_task_arg(t, 0), f = dagger_task_arg(t, 1);
    double sum = *static_cast<const double *>(f.data);
    for (size_t i = 0; i < in.count; i++)
        sum += static_cast<const double *>(in.data)[i];
    return dagger_task_return(t, &sum, sizeof(sum));
}

static int twice(dagger_task_t *t)
{
    dagger_slot_t x = dagger_task_arg(t, 0);
    for (size_t i = 0; i < x.count; i++)
        static_cast<double *>(x.data)[i] *= 2;
    return DAGGER_OK;
}

static int run(dagger_runtime_t *rt)
{
    dagger_codelet_desc_t fd = {}, td = {}, wd = {};
    fd.name = "cxx.fill", fd.cpu = fill, fd.return_size = sizeof(double);
    td.name = "cxx.total", td.cpu = total, td.return_size = sizeof(double);
    wd.name = "cxx.twice", wd.cpu = twice;
    dagger_codelet_t cf, ct, cw;
    CHECK(dagger_codelet_register(rt, &fd, &cf));
    CHECK(dagger_codelet_register(rt, &td, &ct));
    CHECK(dagger_codelet_register(rt, &wd, &cw));
    dagger_chunk_desc_t cd = {};
    cd.dtype = DAGGER_F64, cd.ndims = 1, cd.dims[0] = 8, cd.owner = 0;
    dagger_chunk_t c;
    CHECK(dagger_chunk_create(rt, &cd, &c));
    dagger_proc_info_t first;
    if (dagger_procs(rt, &first, 1) < 1)
        return 1;
    dagger_region_t *r;
    CHECK(dagger_region_begin(rt, &DAGGER_SCOPE_UNION(DAGGER_SCOPE_RANK(0), DAGGER_SCOPE_PROC(first.id)),
                              &r));
    const double x = 1.5;
    dagger_arg_t args[] = {DAGGER_OUT(dagger_view(rt, c)), DAGGER_VALUE(&x, sizeof(x))};
    auto on0 = DAGGER_SCOPE_RANK(0);
    auto copy = on0; /* a copy's list points into the copy */
    dagger_task_opts_t opts = {};
    opts.scope = &copy;
    if (opts.scope->nranks != 1 || opts.scope->ranks == (&on0)->ranks || opts.scope->ranks[0] != 0)
        return 1;
    dagger_future_t sum, all;
    CHECK(dagger_submit(r, cf, 2, args, &opts, nullptr, &sum));
    dagger_arg_t targs[] = {DAGGER_IN_CHUNK(c), DAGGER_FUTURE(sum)}; /* the whole chunk */
    CHECK(dagger_submit(r, ct, 2, targs, nullptr, nullptr, &all));
    CHECK(dagger_spawn(r, cw, DAGGER_INOUT(dagger_view(rt, c)), DAGGER_END));
    CHECK(dagger_region_end(r));
    double got = 0, *data = nullptr;
    CHECK(dagger_fetch(rt, all, &got, sizeof(got), nullptr));
    void *p;
    CHECK(dagger_chunk_data(rt, c, &p, nullptr));
    data = static_cast<double *>(p);
    std::int64_t ranks = 1;
    CHECK(dagger_allreduce(rt, &ranks, 1, DAGGER_I64, DAGGER_OP_ADD));
    int ok = got == 24.0 && data && data[0] == 3.0 && data[7] == 3.0 && ranks == dagger_nranks(rt);
    std::printf("consumer_cxx: dagger %d (headers %d), total %g (want 24), chunk[0] %g (want 3): %s\n",
                dagger_version(nullptr, nullptr, nullptr), DAGGER_VERSION, got, data ? data[0] : 0.0,
                ok ? "ok" : "WRONG");
    CHECK(dagger_chunk_free(rt, c));
    return ok && dagger_version(nullptr, nullptr, nullptr) == DAGGER_VERSION ? 0 : 1;
}

int main()
{
    dagger_runtime_t *rt;
    dagger_params_t prm = {};
    prm.no_signal_handlers = 1, prm.no_exit = 1;
    CHECK(dagger_init(nullptr, nullptr, &prm, &rt));
    int bad = run(rt);
    CHECK(dagger_finalize(rt));
    return bad;
}
