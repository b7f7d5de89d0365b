/* Runtime configuration from DAGGER_* environment variables (see config_table.h). */
#ifndef DG_CONFIG_H
#define DG_CONFIG_H

#include <dagger/status.h>
#include <stddef.h>
#include <stdio.h>

#include "core/base/config_table.h"

typedef long long dg_cfg_INT;
typedef int dg_cfg_BOOL;
typedef double dg_cfg_DOUBLE;
typedef size_t dg_cfg_SIZE;
typedef const char *dg_cfg_STRING;

typedef struct dg_config {
#define DG_CFG_FIELD(field, name, kind, dflt, doc) dg_cfg_##kind field;
    DG_CONFIG_TABLE(DG_CFG_FIELD)
#undef DG_CFG_FIELD
} dg_config_t;

/* Fills cfg from the environment (defaults where unset). A value that does not
 * parse is DAGGER_ERR_CONFIG naming the variable. Unknown DAGGER_* variables
 * are reported through *unknown (a static string listing them, or NULL). */
dagger_status_t dg_config_load(dg_config_t *cfg, const char **unknown);

/* Fills cfg with the defaults only. */
void dg_config_defaults(dg_config_t *cfg);

/* Prints the table (variable, default, value in this environment, doc). */
void dg_config_print(FILE *out);

#endif
