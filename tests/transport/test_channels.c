/* The channel table in transport/tx.h says where each channel's handler is:
 * every channel's comment names `file` `function`, that file defines the
 * function and installs it on that channel with dg_tx_set_handler, or the
 * comment says there is none in the library. A handler moved to another file
 * without the table following fails here. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/core/runtime/source_text.h"
#include "transport/tx.h"

static const char *project_root(char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", __FILE__);
    char *cut = strstr(buf, "/tests/transport/");
    cr_assert_not_null(cut, "cannot find the project root from %s", __FILE__);
    *cut = '\0';
    return buf;
}

static char *read_source(const char *rel)
{
    char root[PATH_MAX], path[PATH_MAX + 256];
    snprintf(path, sizeof(path), "%s/%s", project_root(root, sizeof(root)), rel);
    return dg_source_raw(path);
}

typedef struct channel {
    char name[64];       /* DG_TX_CH_... */
    int value;
    int has_handler;     /* 0: the comment says "handler: none" */
    char file[128], fn[64];
} channel_t;

/* One enum member at line, its comment in [comment, line). */
static void parse_member(const char *comment, const char *line, channel_t *ch)
{
    cr_assert_eq(sscanf(line, " %63[A-Z_] = %d", ch->name, &ch->value), 2, "%.40s", line);
    size_t len = (size_t)(line - comment);
    char *text = malloc(len + 1);
    cr_assert_not_null(text);
    memcpy(text, comment, len);
    text[len] = '\0';
    const char *h = strstr(text, "handler:");
    cr_assert_not_null(h, "%s: its comment in tx.h does not say `handler:`", ch->name);
    ch->has_handler = sscanf(h, "handler: `%127[^`]` `%63[^`]`", ch->file, ch->fn) == 2;
    cr_assert(ch->has_handler || strncmp(h, "handler: none", 13) == 0,
              "%s: the handler names `file` `function` or says none", ch->name);
    free(text);
}

/* The members of dg_tx_channel_t before DG_TX_NCHANNELS, in order. */
static int parse_table(const char *txh, channel_t *chs, int cap)
{
    const char *at = strstr(txh, "typedef enum dg_tx_channel {");
    const char *end = at ? strstr(at, "} dg_tx_channel_t;") : NULL;
    cr_assert(at && end, "tx.h: no dg_tx_channel_t enum");
    const char *comment = strchr(at, '\n') + 1;
    int n = 0;
    for (const char *line = comment; line < end; line = strchr(line, '\n') + 1) {
        const char *name = line + strspn(line, " ");
        if (strncmp(name, "DG_TX_NCHANNELS", 15) == 0)
            break;
        if (strncmp(name, "DG_TX_CH_", 9) != 0)
            continue;
        cr_assert_lt(n, cap);
        parse_member(comment, name, &chs[n++]);
        comment = strchr(line, '\n') + 1;
    }
    return n;
}

/* Whether src has a, then b right after it, then c right after that. */
static int has_run(const char *src, const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b);
    for (const char *p = strstr(src, a); p; p = strstr(p + 1, a))
        if (strncmp(p + la, b, lb) == 0 && strncmp(p + la + lb, c, strlen(c)) == 0)
            return 1;
    return 0;
}

/* The file defines fn and installs it on the channel. */
static void check_handler(const channel_t *ch)
{
    char *src = read_source(ch->file);
    cr_assert_not_null(src, "%s: tx.h names %s, which does not exist", ch->name, ch->file);
    cr_expect(has_run(src, "int ", ch->fn, "(void *ctx, const dg_tx_msg_t *"),
              "%s: no handler %s in %s", ch->name, ch->fn, ch->file);
    char fn_arg[sizeof(ch->fn) + 1]; /* the function as an argument: followed by a comma */
    size_t n = strlen(ch->fn);
    memcpy(fn_arg, ch->fn, n);
    memcpy(fn_arg + n, ",", 2);
    cr_expect(has_run(src, ch->name, ", ", fn_arg), "%s: %s does not install %s on the channel "
              "(dg_tx_set_handler(tx, %s, %s, ...))", ch->name, ch->file, ch->fn, ch->name,
              ch->fn);
    free(src);
}

Test(channels, the_table_in_tx_h_names_each_handler_where_it_is)
{
    char *txh = read_source("transport/tx.h");
    cr_assert_not_null(txh);
    channel_t chs[DG_TX_NCHANNELS + 1];
    int n = parse_table(txh, chs, DG_TX_NCHANNELS + 1);
    cr_assert_eq(n, DG_TX_NCHANNELS, "tx.h lists %d channels before DG_TX_NCHANNELS (%d)", n,
                 DG_TX_NCHANNELS);
    for (int i = 0; i < n; i++) {
        cr_expect_eq(chs[i].value, i, "%s = %d: channels are numbered in order", chs[i].name,
                     chs[i].value);
        if (chs[i].has_handler)
            check_handler(&chs[i]);
        else
            cr_expect_str_eq(chs[i].name, "DG_TX_CH_TEST", "%s: only the test channel has no "
                             "handler in the library", chs[i].name);
    }
    free(txh);
}
