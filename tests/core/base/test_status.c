/* Status names and per-thread detail messages. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "core/base/status_internal.h"

Test(status, every_code_has_a_name)
{
    const dagger_status_t codes[] = {
        DAGGER_OK, DAGGER_ERR_INVALID_ARG, DAGGER_ERR_NO_MEMORY, DAGGER_ERR_BAD_HANDLE,
        DAGGER_ERR_NOT_FOUND, DAGGER_ERR_EXISTS, DAGGER_ERR_TIMEOUT, DAGGER_ERR_UNSUPPORTED,
        DAGGER_ERR_STATE, DAGGER_ERR_CONFIG, DAGGER_ERR_INTERNAL, DAGGER_ERR_SYSTEM,
        DAGGER_ERR_OVERFLOW, DAGGER_ERR_ACTOR_STOPPED, DAGGER_ERR_NO_SUCH_ACTOR,
        DAGGER_ERR_MSG_TYPE, DAGGER_ERR_MSG_SIZE, DAGGER_ERR_TYPE_CONFLICT, DAGGER_ERR_BOOTSTRAP,
        DAGGER_ERR_TRANSPORT, DAGGER_ERR_PEER_LOST, DAGGER_ERR_BUILD_MISMATCH, DAGGER_ERR_BAD_VIEW,
        DAGGER_ERR_DTYPE, DAGGER_ERR_SCOPE, DAGGER_ERR_CYCLE, DAGGER_ERR_TASK_FAILED,
        DAGGER_ERR_DIVERGENCE, DAGGER_ERR_HANG, DAGGER_ERR_PROTOCOL};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        const char *s = dagger_strerror(codes[i]);
        cr_assert(strncmp(s, "DAGGER_", 7) == 0, "code %d has no name: %s", codes[i], s);
    }
    cr_assert_str_eq(dagger_strerror((dagger_status_t)-9999), "unknown dagger status code");
}

Test(status, detail_is_set_and_returned)
{
    dagger_status_t st = dg_error(DAGGER_ERR_SCOPE, "scope asks for rank %d of %d", 7, 4);
    cr_assert_eq(st, DAGGER_ERR_SCOPE);
    cr_assert_str_eq(dagger_error_detail(), "scope asks for rank 7 of 4");
}

static void *other_thread(void *arg)
{
    (void)arg;
    dg_error(DAGGER_ERR_TIMEOUT, "other thread");
    return NULL;
}

Test(status, detail_is_per_thread)
{
    dg_error(DAGGER_ERR_INVALID_ARG, "main thread");
    pthread_t t;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    cr_assert_str_eq(dagger_error_detail(), "main thread");
}
