/* dagger-config: prints every DAGGER_* setting with its default, the value in
 * this environment and what it does. */
#include <stdio.h>

#include "core/config.h"

int main(void)
{
    const char *unknown = NULL;
    dg_config_t cfg;
    dagger_status_t st = dg_config_load(&cfg, &unknown);
    dg_config_print(stdout);
    if (unknown)
        printf("\nunknown settings in this environment (ignored): %s\n", unknown);
    if (st != DAGGER_OK) {
        fprintf(stderr, "dagger-config: %s\n", dagger_error_detail());
        return 1;
    }
    return 0;
}
