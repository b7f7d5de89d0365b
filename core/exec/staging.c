/* Host staging blocks kept for reuse (staging.h). */
#include "core/exec/staging.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"

void dg_staging_init(dg_staging_t *s, int huge)
{
    memset(s, 0, sizeof(*s));
    s->huge = huge;
    pthread_mutex_init(&s->lock, NULL);
}

void *dg_staging_get(dg_staging_t *s, size_t bytes)
{
    if (bytes < sizeof(dg_staging_block_t))
        bytes = sizeof(dg_staging_block_t);
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < DG_STAGING_SIZES; i++)
        if (s->list[i].bytes == bytes && s->list[i].head) {
            dg_staging_block_t *b = s->list[i].head;
            s->list[i].head = b->next;
            s->kept -= bytes;
            pthread_mutex_unlock(&s->lock);
            return b;
        }
    pthread_mutex_unlock(&s->lock);
    return dg_alloc_block(bytes, s->huge);
}

void dg_staging_put(dg_staging_t *s, void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes < sizeof(dg_staging_block_t))
        bytes = sizeof(dg_staging_block_t);
    pthread_mutex_lock(&s->lock);
    int at = -1;
    for (int i = 0; i < DG_STAGING_SIZES && s->kept + bytes <= DG_STAGING_KEEP; i++) {
        if (s->list[i].bytes == bytes) {
            at = i;
            break;
        }
        if (at < 0 && !s->list[i].head) /* an empty list takes the size */
            at = i;
    }
    if (at >= 0) {
        dg_staging_block_t *b = p;
        s->list[at].bytes = bytes;
        b->next = s->list[at].head;
        s->list[at].head = b;
        s->kept += bytes;
        p = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    free(p);
}

void dg_staging_cleanup(dg_staging_t *s)
{
    for (int i = 0; i < DG_STAGING_SIZES; i++)
        for (dg_staging_block_t *b = s->list[i].head, *n; b; b = n) {
            n = b->next;
            free(b);
        }
    pthread_mutex_destroy(&s->lock);
    memset(s, 0, sizeof(*s));
}
