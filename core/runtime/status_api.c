/* The public face of errors (dagger/status.h): each code's name and meaning
 * and the calling thread's detail message (both kept by core/base/status.c). */
#include "core/base/status_internal.h"

const char *dagger_strerror(dagger_status_t status)
{
    const char *text = dg_status_text(status);
    return text ? text : "unknown dagger status code";
}

const char *dagger_error_detail(void)
{
    return dg_error_text();
}
