/* Parsing of the DAGGER_* settings table. */
#include "core/base/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/status_internal.h"

extern char **environ;

typedef enum { DG_KIND_INT, DG_KIND_BOOL, DG_KIND_DOUBLE, DG_KIND_SIZE, DG_KIND_STRING } dg_kind_t;

typedef struct {
    const char *name;
    dg_kind_t kind;
    const char *dflt;
    const char *doc;
    size_t offset;
} dg_cfg_entry_t;

static const dg_cfg_entry_t dg_cfg_entries[] = {
#define DG_CFG_ENTRY(field, name, kind, dflt, doc) \
    {name, DG_KIND_##kind, dflt, doc, offsetof(dg_config_t, field)},
    DG_CONFIG_TABLE(DG_CFG_ENTRY)
#undef DG_CFG_ENTRY
};

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    unsigned long long mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1ull << 10, end++;
    else if (*end == 'm' || *end == 'M') mul = 1ull << 20, end++;
    else if (*end == 'g' || *end == 'G') mul = 1ull << 30, end++;
    if (*end != '\0')
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

static int parse_value(const dg_cfg_entry_t *e, const char *s, void *field)
{
    char *end;
    errno = 0;
    switch (e->kind) {
    case DG_KIND_INT: {
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end) return -1;
        *(long long *)field = v;
        return 0;
    }
    case DG_KIND_BOOL:
        if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") || !strcasecmp(s, "true"))
            *(int *)field = 1;
        else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !strcasecmp(s, "false"))
            *(int *)field = 0;
        else
            return -1;
        return 0;
    case DG_KIND_DOUBLE: {
        double v = strtod(s, &end);
        if (errno || end == s || *end || v < 0) return -1;
        *(double *)field = v;
        return 0;
    }
    case DG_KIND_SIZE:
        return parse_size(s, (size_t *)field);
    case DG_KIND_STRING:
        *(const char **)field = s;
        return 0;
    }
    return -1;
}

void dg_config_defaults(dg_config_t *cfg)
{
    for (size_t i = 0; i < sizeof(dg_cfg_entries) / sizeof(dg_cfg_entries[0]); i++) {
        const dg_cfg_entry_t *e = &dg_cfg_entries[i];
        int rc = parse_value(e, e->dflt, (char *)cfg + e->offset);
        (void)rc; /* defaults are constants that parse */
    }
}

static const dg_cfg_entry_t *find_entry(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(dg_cfg_entries) / sizeof(dg_cfg_entries[0]); i++)
        if (strlen(dg_cfg_entries[i].name) == len && !strncmp(dg_cfg_entries[i].name, name, len))
            return &dg_cfg_entries[i];
    return NULL;
}

/* DAGGER_* names that Dagger-C's tools read, not the library: not settings,
 * yet not unknown (tools/dagger-run forwards every DAGGER_* variable to the
 * ranks, its own DAGGER_LAUNCHER included). */
static const char *const tool_names[] = {"DAGGER_LAUNCHER"};

static int tool_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(tool_names) / sizeof(tool_names[0]); i++)
        if (strlen(tool_names[i]) == len && !strncmp(tool_names[i], name, len))
            return 1;
    return 0;
}

static const char *collect_unknown(void)
{
    static char buf[512];
    buf[0] = '\0';
    for (char **env = environ; env && *env; env++) {
        if (strncmp(*env, "DAGGER_", 7))
            continue;
        const char *eq = strchr(*env, '=');
        size_t len = eq ? (size_t)(eq - *env) : strlen(*env);
        if (find_entry(*env, len) || tool_name(*env, len))
            continue;
        size_t used = strlen(buf);
        if (used + len + 3 < sizeof(buf))
            snprintf(buf + used, sizeof(buf) - used, "%s%.*s", used ? ", " : "", (int)len, *env);
    }
    return buf[0] ? buf : NULL;
}

dagger_status_t dg_config_load(dg_config_t *cfg, const char **unknown)
{
    dg_config_defaults(cfg);
    for (size_t i = 0; i < sizeof(dg_cfg_entries) / sizeof(dg_cfg_entries[0]); i++) {
        const dg_cfg_entry_t *e = &dg_cfg_entries[i];
        const char *v = getenv(e->name);
        if (!v)
            continue;
        if (parse_value(e, v, (char *)cfg + e->offset))
            return dg_error(DAGGER_ERR_CONFIG, "%s='%s' does not parse (%s; default %s)",
                            e->name, v, e->doc, e->dflt);
    }
    if (unknown)
        *unknown = collect_unknown();
    return DAGGER_OK;
}

void dg_config_print(FILE *out)
{
    for (size_t i = 0; i < sizeof(dg_cfg_entries) / sizeof(dg_cfg_entries[0]); i++) {
        const dg_cfg_entry_t *e = &dg_cfg_entries[i];
        const char *v = getenv(e->name);
        fprintf(out, "%-26s default %-10s %s%s%s\n    %s\n", e->name, e->dflt[0] ? e->dflt : "\"\"",
                v ? "set to '" : "", v ? v : "", v ? "'" : "", e->doc);
    }
}
