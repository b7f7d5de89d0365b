/* The loaders' shared lookup (core/base/dl_table.h): every routine of a
 * table found into its field, and the first missing one named, with the
 * fields after it left alone. On the C library, which every process has. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <string.h>

#include "core/base/dl_table.h"

typedef struct libc_table {
    size_t (*strlen)(const char *);
    char *(*strchr)(const char *, int);
    int (*dg_no_such_routine)(void);
    int (*abs)(int);
} libc_table_t;

#define ROW(name) DG_DL_SYM(libc_table_t, name)

static void *libc;
static libc_table_t t;
static char why[256];

static void open_libc(void)
{
    libc = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(libc, "%s", dlerror());
    memset(&t, 0, sizeof(t));
    why[0] = 0;
}

static void close_libc(void)
{
    dlclose(libc);
}

TestSuite(dl_table, .init = open_libc, .fini = close_libc);

Test(dl_table, every_routine_found_into_its_field)
{
    static const dg_dl_sym_t syms[] = {ROW(strlen) ROW(strchr) ROW(abs)};
    cr_assert_eq(dg_dl_find_all(libc, "libc.so.6", syms, DG_DL_NSYMS(syms), &t, "hint", why,
                                sizeof(why)), 0, "%s", why);
    cr_assert_eq(t.strlen("four"), 4, "the strlen field holds strlen");
    cr_assert_str_eq(t.strchr("a=b", '='), "=b");
    cr_assert_eq(t.abs(-3), 3);
    cr_assert_null(t.dg_no_such_routine, "a field not listed is left alone");
}

Test(dl_table, the_first_missing_routine_is_named_and_the_rest_left_alone)
{
    static const dg_dl_sym_t syms[] = {ROW(strlen) ROW(dg_no_such_routine) ROW(abs)};
    cr_assert_eq(dg_dl_find_all(libc, "libc.so.6", syms, DG_DL_NSYMS(syms), &t, "a hint", why,
                                sizeof(why)), -1);
    cr_assert(strstr(why, "libc.so.6 has no dg_no_such_routine (") && strstr(why, "): a hint"),
              "why: %s", why);
    cr_assert_not_null(t.strlen, "found before the missing one");
    cr_assert_null(t.abs, "not looked up after the missing one");
}
