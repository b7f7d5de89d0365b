/* PMIx data store choice before PMIx_Init (see bootstrap_gds.h). */
#include "transport/bootstrap_gds.h"

#include <stdlib.h>

const char *dg_boot_gds_choice(const char *user_value)
{
    return user_value ? user_value : DG_BOOT_GDS_DEFAULT;
}

void dg_boot_gds_select(void)
{
    /* overwrite = 0: a PMIX_MCA_gds the user set (or the launcher passed)
     * stays as it is. */
    setenv("PMIX_MCA_gds", dg_boot_gds_choice(getenv("PMIX_MCA_gds")), 0);
}
