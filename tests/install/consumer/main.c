/* A program built against the installed libdagger. */
#include <dagger.h>
#include <stdio.h>

int main(void)
{
    dagger_runtime_t *rt;
    dagger_status_t st = dagger_init(NULL, NULL, NULL, &rt);
    if (st != DAGGER_OK) {
        fprintf(stderr, "dagger_init: %s (%s)\n", dagger_strerror(st), dagger_error_detail());
        return 1;
    }
    printf("consumer: rank %d of %d\n", dagger_rank(rt), dagger_nranks(rt));
    return dagger_finalize(rt) == DAGGER_OK ? 0 : 1;
}
