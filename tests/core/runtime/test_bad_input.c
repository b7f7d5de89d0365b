/* Bad input across the whole public API (issue 11): every public function is
 * called with NULL, out-of-range, wrong-kind, destroyed-handle and
 * wrong-state arguments, and must answer with the error its header documents
 * (with a detail message) instead of crashing. One Criterion test per public
 * function (a crash names the function); the table is bad_input_rows.h, and
 * api_table.covers_every_public_function fails when a header declares a
 * function that has no row. Runs in the ASan+UBSan pass like every runtime
 * test. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/core/runtime/bad_input.h"
#include "tests/core/runtime/source_text.h"

typedef struct bi_row {
    const char *name;
    void (*probe)(void);
} bi_row_t;

#define BI_ROW(name) {#name, bi_probe_##name},
static bi_row_t bi_rows[] = {
#include "tests/core/runtime/bad_input_rows.h"
};
#undef BI_ROW

bi_fixture_t BI;
static const char *bi_current = "";

void bi_expect(const char *what, dagger_status_t got, dagger_status_t want)
{
    cr_expect_eq(got, want, "%s: %s returned %s, expected %s (detail: %s)", bi_current, what,
                 dagger_strerror(got),
                 dagger_strerror(want), dagger_error_detail());
    if (want != DAGGER_OK && got == want)
        cr_expect(dagger_error_detail()[0], "%s: %s without a detail message", what,
                  dagger_strerror(got));
}

const char *bi_long_name(void)
{
    static char name[200];
    memset(name, 'x', sizeof(name) - 1);
    return name;
}

int bi_noop(dagger_task_t *t)
{
    (void)t;
    return DAGGER_OK;
}

dagger_region_t *bi_open(void)
{
    dagger_region_t *r = NULL;
    cr_assert_eq(dagger_region_begin(BI.rt, NULL, &r), DAGGER_OK, "%s", dagger_error_detail());
    return r;
}

void bi_close(dagger_region_t *r)
{
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
}

/* ------------------------------------------------------------ fixture */

static int ret8(dagger_task_t *t)
{
    double v = 42;
    return dagger_task_return(t, &v, sizeof(v));
}

static dagger_status_t on_ping(dagger_ctx_t *ctx)
{
    (void)ctx;
    return DAGGER_OK;
}

static dagger_runtime_t *init_rt(void)
{
    dagger_params_t p = {.num_threads = 2, .no_bind = 1};
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, &p, &rt), DAGGER_OK, "%s", dagger_error_detail());
    return rt;
}

static dagger_array_t *make_array(dagger_dtype_t dt, int ndims)
{
    dagger_array_desc_t d = {.dtype = dt, .ndims = ndims, .dims = {4, 4}, .block = {2, 2}};
    dagger_array_t *a = NULL;
    cr_assert_eq(dagger_array_zeros(BI.rt, &d, &a), DAGGER_OK, "%s", dagger_error_detail());
    return a;
}

static void setup_tasks(void)
{
    dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 2, .dims = {4, 4}, .owner = -1};
    cr_assert_eq(dagger_chunk_create(BI.rt, &cd, &BI.c), DAGGER_OK);
    cr_assert_eq(dagger_chunk_create(BI.rt, &cd, &BI.c_gone), DAGGER_OK);
    cr_assert_eq(dagger_chunk_free(BI.rt, BI.c_gone), DAGGER_OK);
    static const dagger_dtype_t f64[] = {DAGGER_F64};
    dagger_codelet_desc_t t = {.name = "bi.touch", .cpu = bi_noop, .nargs = 1, .arg_dtypes = f64};
    cr_assert_eq(dagger_codelet_register(BI.rt, &t, &BI.cl), DAGGER_OK);
    dagger_codelet_desc_t r8 = {.name = "bi.ret", .cpu = ret8, .return_size = 8};
    cr_assert_eq(dagger_codelet_register(BI.rt, &r8, &BI.cl_ret), DAGGER_OK);
    BI.cl_never.id = BI.cl.id ^ BI.cl_ret.id ^ 0x5a5a5a5au;
    dagger_region_t *r = bi_open();
    cr_assert_eq(dagger_submit(r, BI.cl_ret, 0, NULL, NULL, NULL, &BI.f), DAGGER_OK);
    cr_assert_eq(dagger_submit(r, BI.cl_ret, 0, NULL, NULL, NULL, &BI.f_gone), DAGGER_OK);
    bi_close(r);
    BI.r_gone = r;
    cr_assert_eq(dagger_future_free(BI.rt, BI.f_gone), DAGGER_OK);
}

static void setup_arrays(void)
{
    BI.a = make_array(DAGGER_F64, 2);
    BI.b = make_array(DAGGER_F64, 2);
    BI.ai = make_array(DAGGER_I32, 2);
    BI.v = make_array(DAGGER_F64, 1);
    BI.a_gone = make_array(DAGGER_F64, 2);
    cr_assert_eq(dagger_array_destroy(BI.a_gone), DAGGER_OK);
    dagger_stencil_expr_t e = {.out = BI.b, .kernel = DAGGER_STENCIL_COPY, .nin = 1,
                               .in = {{.array = BI.a}}};
    cr_assert_eq(dagger_stencil_create(BI.rt, 1, &e, &BI.s), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_stencil_create(BI.rt, 1, &e, &BI.s_gone), DAGGER_OK);
    cr_assert_eq(dagger_stencil_destroy(BI.s_gone), DAGGER_OK);
}

static void setup_actors(void)
{
    dagger_msg_type_desc_t md = {.name = "bi.ping", .encoding = DAGGER_MSG_FIXED, .size = 8};
    cr_assert_eq(dagger_msg_type_register(BI.rt, &md, &BI.mt), DAGGER_OK);
    dagger_handler_t h = {BI.mt, on_ping};
    dagger_actor_desc_t ad = {.name = "bi", .handlers = &h, .nhandlers = 1};
    cr_assert_eq(dagger_actor_spawn(BI.rt, &ad, &BI.act), DAGGER_OK);
    cr_assert_eq(dagger_actor_spawn(BI.rt, &ad, &BI.act_gone), DAGGER_OK);
    cr_assert_eq(dagger_actor_stop(BI.rt, BI.act_gone), DAGGER_OK);
    cr_assert_eq(dagger_actor_join(BI.rt, BI.act_gone, DAGGER_WAIT_FOREVER, NULL), DAGGER_OK);
}

static unsigned char foreign_bytes[512];

static void bi_setup(void)
{
    memset(foreign_bytes, 0xa5, sizeof(foreign_bytes));
    BI.foreign = foreign_bytes;
    dagger_runtime_t *first = init_rt();
    cr_assert_eq(dagger_finalize(first), DAGGER_OK);
    BI.rt = init_rt();
    /* Without ASan's quarantine the new runtime may reuse the old memory. */
    BI.dead = first != BI.rt ? first : (dagger_runtime_t *)BI.foreign;
    setup_tasks();
    setup_arrays();
    setup_actors();
}

static void bi_teardown(void)
{
    if (BI.rt)
        cr_expect_eq(dagger_finalize(BI.rt), DAGGER_OK, "%s", dagger_error_detail());
    memset(&BI, 0, sizeof(BI));
}

/* ------------------------------------------------------------ the table */

#define BI_NROWS (sizeof(bi_rows) / sizeof(bi_rows[0]))

/* Parameters are row indices: Criterion runs each test in a fresh exec of
 * this binary, where the table's pointers (PIE, ASLR) would differ. */
static size_t bi_index[BI_NROWS];

ParameterizedTestParameters(api, bad_input)
{
    for (size_t i = 0; i < BI_NROWS; i++)
        bi_index[i] = i;
    return cr_make_param_array(size_t, bi_index, BI_NROWS);
}

ParameterizedTest(size_t *row, api, bad_input, .init = bi_setup, .fini = bi_teardown)
{
    bi_current = bi_rows[*row].name;
    fprintf(stderr, "probing %s\n", bi_current); /* names the function if it crashes */
    bi_rows[*row].probe();
}

/* ------------------------------------------------------------ completeness */

/* The function a top-level declaration line declares: the first dagger_
 * identifier followed by '('. Lines that start with a blank (continuations,
 * members), '#', '}' or typedef/extern declare none. */
static int declared_name(const char *line, char *name, size_t cap)
{
    if (!islower((unsigned char)line[0]) || !strncmp(line, "typedef", 7) ||
        !strncmp(line, "extern", 6))
        return 0;
    for (const char *p = line; (p = strstr(p, "dagger_"));) {
        if (p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
            p++;
            continue;
        }
        size_t n = 0;
        while (isalnum((unsigned char)p[n]) || p[n] == '_')
            n++;
        const char *q = p + n;
        while (*q == ' ')
            q++;
        if (*q == '(' && n < cap) {
            memcpy(name, p, n);
            name[n] = 0;
            return 1;
        }
        p += n;
    }
    return 0;
}

static int in_table(const char *name)
{
    for (size_t i = 0; i < BI_NROWS; i++)
        if (!strcmp(bi_rows[i].name, name))
            return 1;
    return 0;
}

static int dg_ends_with(const char *s, size_t len, const char *tail)
{
    size_t n = strlen(tail);
    return len > n && !strcmp(s + len - n, tail);
}

/* Counts the functions a header declares; each must have a row. */
static int check_header(const char *path)
{
    char *text = dg_source_text(path);
    cr_assert(text, "cannot read %s", path);
    int found = 0;
    const char *prev = "";
    for (char *line = strtok(text, "\n"); line; prev = line, line = strtok(NULL, "\n")) {
        char name[128];
        if (!declared_name(line, name, sizeof(name)))
            continue;
        found++;
        cr_expect(in_table(name), "%s declares %s, which has no row in "
                  "tests/core/runtime/bad_input_rows.h: add BI_ROW(%s) and its probe", path, name, name);
        /* libdagger.so exports only what DAGGER_API marks (dagger/export.h);
         * static inline functions are not exported at all. */
        cr_expect(!strncmp(line, "static", 6) || !strcmp(prev, "DAGGER_API"),
                  "%s declares %s without DAGGER_API on the line above: libdagger.so "
                  "would not export it", path, name);
    }
    free(text);
    return found;
}

Test(api_table, covers_every_public_function)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/core/include/dagger.h", DG_SOURCE_DIR);
    int total = check_header(path);
    snprintf(path, sizeof(path), "%s/core/include/dagger", DG_SOURCE_DIR);
    DIR *d = opendir(path);
    cr_assert(d, "cannot list %s", path);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        /* version.h.in: the template CMake writes dagger/version.h from */
        if (!dg_ends_with(e->d_name, len, ".h") && !dg_ends_with(e->d_name, len, ".h.in"))
            continue;
        char file[4400];
        snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
        total += check_header(file);
    }
    closedir(d);
    cr_log_info("%d public functions declared, %zu rows", total, BI_NROWS);
    cr_expect_geq(total, 100, "the header scan found only %d functions: is it broken?", total);
}

/* The scan itself must see what it is meant to see (a test that can fail). */
Test(api_table, scan_finds_declarations)
{
    char name[128];
    cr_expect(declared_name("dagger_status_t dagger_init(int *argc,", name, sizeof(name)));
    cr_expect_str_eq(name, "dagger_init");
    cr_expect(declared_name("const char *dagger_strerror(dagger_status_t status);", name, 128));
    cr_expect_str_eq(name, "dagger_strerror");
    cr_expect(declared_name("static inline dagger_status_t dagger_array_add(dagger_region_t *r,",
                            name, 128));
    cr_expect_str_eq(name, "dagger_array_add");
    cr_expect_not(declared_name("typedef int (*dagger_impl_fn)(dagger_task_t *t);", name, 128));
    cr_expect_not(declared_name("    dagger_array_t *array;", name, 128));
    cr_expect_not(declared_name("#define DAGGER_END ((dagger_arg_t){.kind = 0})", name, 128));
    cr_expect_not(in_table("dagger_no_such_function"));
}
