/* Host buffers bound for one collect or scatter region. Tasks on this rank
 * find the buffer by a key that every rank computes alike (so it can travel
 * by value without upsetting the uniformity check); the pointer itself never
 * leaves the process. */
#include <pthread.h>

#include "core/array/array_internal.h"
#include "core/base/hash.h"
#include "core/base/status_internal.h"

#define MAX_BINDS 16

typedef struct bind {
    uint64_t key; /* 0: free */
    void *ptr;
} bind_t;

static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
static bind_t binds[MAX_BINDS];

dagger_status_t dg_arr_bind(dagger_array_t *a, void *ptr, uint64_t *key)
{
    dagger_array_t *root = a->parent ? a->parent : a; /* views count on their parent's */
    uint64_t k = dg_hash_u64(dg_hash_u64(DG_HASH_SEED, root->chunks[0].id), ++root->binds);
    k |= 1; /* never 0 */
    int found = 0;
    pthread_mutex_lock(&bind_lock);
    for (int i = 0; i < MAX_BINDS && !found; i++)
        if (!binds[i].key) {
            binds[i] = (bind_t){k, ptr};
            found = 1;
        }
    pthread_mutex_unlock(&bind_lock);
    *key = k;
    return found ? DAGGER_OK
                 : dg_error(DAGGER_ERR_NO_MEMORY, "more than %d host buffers bound at once",
                            MAX_BINDS);
}

void dg_arr_unbind(uint64_t key)
{
    pthread_mutex_lock(&bind_lock);
    for (int i = 0; i < MAX_BINDS; i++)
        if (binds[i].key == key)
            binds[i] = (bind_t){0, NULL};
    pthread_mutex_unlock(&bind_lock);
}

void *dg_arr_bound(uint64_t key)
{
    void *p = NULL;
    pthread_mutex_lock(&bind_lock);
    for (int i = 0; i < MAX_BINDS; i++)
        if (binds[i].key == key)
            p = binds[i].ptr;
    pthread_mutex_unlock(&bind_lock);
    return p;
}
