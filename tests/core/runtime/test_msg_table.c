/* The runtime's message types (those named dagger.*) are exactly the rows
 * of the table in docs/design.md, and each row names a handler function
 * that exists in the file it names. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/runtime/runtime.h"

#define MAX_TYPES 64

typedef struct {
    char name[MAX_TYPES][128];
    int n;
} names_t;

static void collect(void *arg, uint32_t id, const char *name)
{
    (void)id;
    names_t *ns = arg;
    if (strncmp(name, "dagger.", 7) == 0 && ns->n < MAX_TYPES)
        snprintf(ns->name[ns->n++], sizeof(ns->name[0]), "%s", name);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* The i-th `quoted` word of a table cell (0-based), copied into out. */
static int quoted(const char *cell, const char *end, int i, char *out, size_t cap)
{
    for (const char *p = cell; p < end; p++) {
        if (*p != '`')
            continue;
        const char *q = memchr(p + 1, '`', (size_t)(end - p - 1));
        if (!q)
            return 0;
        if (i-- == 0) {
            snprintf(out, cap, "%.*s", (int)(q - p - 1), p + 1);
            return 1;
        }
        p = q;
    }
    return 0;
}

typedef struct {
    char name[128], file[256], fn[128];
} row_t;

/* Rows of the table whose first cell is a `dagger.*` name. */
static int doc_rows(const char *doc, row_t *rows, int cap)
{
    int n = 0;
    for (const char *line = doc; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *eol = strchr(line, '\n');
        if (!eol)
            eol = line + strlen(line);
        if (strncmp(line, "| `dagger.", 10) != 0)
            continue;
        const char *last = eol;
        while (last > line && *(last - 1) != '|')
            last--;
        const char *cell = last - 1; /* the handler: the last cell */
        while (cell > line && *(cell - 1) != '|')
            cell--;
        cr_assert_lt(n, cap);
        row_t *r = &rows[n++];
        cr_assert(quoted(line, eol, 0, r->name, sizeof(r->name)));
        cr_assert(quoted(cell, last, 0, r->file, sizeof(r->file)) &&
                      quoted(cell, last, 1, r->fn, sizeof(r->fn)),
                  "row %s: the handler cell names `file` `function`", r->name);
    }
    return n;
}

Test(msg_table, registered_types_equal_the_design_table)
{
    setenv("DAGGER_NUM_THREADS", "1", 1);
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    names_t reg = {.n = 0};
    dg_act_system_each_type(rt->actors, collect, &reg);
    char *doc = read_all(DG_SOURCE_DIR "/docs/design.md");
    row_t rows[MAX_TYPES];
    int n = doc_rows(doc, rows, MAX_TYPES);
    cr_assert_gt(reg.n, 0, "the runtime registers its message types");
    for (int i = 0; i < reg.n; i++) {
        int found = 0;
        for (int k = 0; k < n; k++)
            found |= strcmp(rows[k].name, reg.name[i]) == 0;
        cr_expect(found, "%s is registered but not in the docs/design.md table", reg.name[i]);
    }
    for (int k = 0; k < n; k++) {
        int found = 0;
        for (int i = 0; i < reg.n; i++)
            found |= strcmp(rows[k].name, reg.name[i]) == 0;
        cr_expect(found, "%s is in the docs/design.md table but not registered", rows[k].name);
        char path[512], pattern[160];
        snprintf(path, sizeof(path), "%s/%s", DG_SOURCE_DIR, rows[k].file);
        char *src = read_all(path);
        snprintf(pattern, sizeof(pattern), " %s(", rows[k].fn);
        cr_expect_not_null(strstr(src, pattern), "%s: no function %s in %s", rows[k].name,
                           rows[k].fn, rows[k].file);
        free(src);
    }
    free(doc);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}
