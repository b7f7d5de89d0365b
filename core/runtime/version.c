/* dagger_version(): the numbers the library was built with, from the same
 * generated header that programs compile against. */
#include <dagger/version.h>

#include <stddef.h>

int dagger_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = DAGGER_VERSION_MAJOR;
    if (minor)
        *minor = DAGGER_VERSION_MINOR;
    if (patch)
        *patch = DAGGER_VERSION_PATCH;
    return DAGGER_VERSION;
}
