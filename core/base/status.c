/* The per-thread error detail that dg_error sets (the public names of the
 * codes and the detail's reader: core/runtime/status_api.c). */
#include "core/base/status_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char dg_detail[1024];

const char *dg_error_text(void)
{
    return dg_detail;
}

dagger_status_t dg_error(dagger_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dg_detail, sizeof(dg_detail), fmt, ap);
    va_end(ap);
    return status;
}
