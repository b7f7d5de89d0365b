/* job.meta: the job's ranks, processors and clock offsets, as rank 0 wrote
 * them (text, one line per rank). */
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* The shortest rank line: "rank 0 workers 0 spaces 0 offset_ns 0 uncert_ns 0
 * pid 0 host a" and its newline. */
#define TR_META_MIN_LINE 63

/* The next line of text at *pos (NUL-terminated in place); NULL at the end. */
static char *next_line(char *text, size_t len, size_t *pos, size_t *start)
{
    if (*pos >= len)
        return NULL;
    *start = *pos;
    char *line = text + *pos, *nl = memchr(line, '\n', len - *pos);
    if (nl) {
        *nl = '\0';
        *pos = (size_t)(nl - text) + 1;
    } else {
        *pos = len;
    }
    return line;
}

static int parse_rank_line(tr_trace_t *tr, const char *path, size_t at, const char *line)
{
    int r;
    unsigned workers, spaces, pid;
    long long offset;
    unsigned long long uncert;
    char host[DG_TRF_HOST_LEN];
    int end = 0;
    if (sscanf(line, "rank %d workers %u spaces %u offset_ns %lld uncert_ns %llu pid %u host %47s%n",
               &r, &workers, &spaces, &offset, &uncert, &pid, host, &end) != 7)
        return tr_fail(tr, path, (long long)at, "expected 'rank R workers W spaces S offset_ns O "
                       "uncert_ns U pid P host H [cpus C online N]', found '%.80s'", line);
    /* The CPUs came later: a trace without them says nothing about them. */
    unsigned cpus = 0, online = 0;
    if (sscanf(line + end, " cpus %u online %u", &cpus, &online) != 2)
        cpus = online = 0;
    if (r < 0 || r >= tr->nranks)
        return tr_fail(tr, path, (long long)at, "rank %d outside the job's %d ranks", r,
                       tr->nranks);
    tr_rank_t *rk = &tr->ranks[r];
    if (rk->path)
        return tr_fail(tr, path, (long long)at, "rank %d is listed twice", r);
    size_t n = strlen(tr->dir) + 32;
    rk->path = tr_alloc(n);
    snprintf(rk->path, n, "%s/rank-%d.dgt", tr->dir, r);
    rk->meta_workers = workers;
    rk->meta_offset = offset;
    rk->meta_cpus = cpus;
    rk->meta_online = online;
    (void)spaces;
    (void)uncert;
    (void)pid;
    return 0;
}

int tr_read_meta(tr_trace_t *tr, const char *path)
{
    unsigned char *raw;
    size_t len;
    if (tr_read_file(tr, path, &raw, &len)) {
        tr_fail(tr, path, -1, "cannot open it (is %s a trace directory written with "
                "DAGGER_TRACE=%s?)", tr->dir, tr->dir);
        return -1;
    }
    int rc = tr_parse_meta(tr, path, (char *)raw, len);
    free(raw);
    return rc;
}

int tr_parse_meta(tr_trace_t *tr, const char *path, char *text, size_t len)
{
    size_t pos = 0, at = 0;
    int version = 0, rc = 0;
    unsigned long long job = 0;
    char *line = next_line(text, len, &pos, &at);
    if (!line || sscanf(line, "dagger-trace-job %d", &version) != 1)
        rc = tr_fail(tr, path, 0, "not a Dagger-C job description (its first line must be "
                     "'dagger-trace-job N')");
    else if (version != DG_TRF_META_VERSION)
        rc = tr_fail(tr, path, 0, "job description version %d; this dagger-trace reads %d",
                     version, DG_TRF_META_VERSION);
    if (!rc && (!(line = next_line(text, len, &pos, &at)) || sscanf(line, "job_id %llx", &job) != 1))
        rc = tr_fail(tr, path, (long long)at, "expected 'job_id HEX'");
    if (!rc && (!(line = next_line(text, len, &pos, &at)) ||
                sscanf(line, "nranks %d", &tr->nranks) != 1 || tr->nranks < 1 ||
                tr->nranks > 1 << 20))
        rc = tr_fail(tr, path, (long long)at, "expected 'nranks N' with N from 1 to 2^20");
    /* Each rank has a line of TR_META_MIN_LINE bytes or more: a count the
     * file cannot hold is damage, not a reason to allocate for 2^20 ranks. */
    if (!rc && (size_t)tr->nranks > len / TR_META_MIN_LINE)
        rc = tr_fail(tr, path, (long long)at, "nranks %d, but %zu bytes cannot list that many "
                     "ranks: the file is truncated or corrupt", tr->nranks, len);
    if (!rc) {
        tr->job_id = job;
        tr->ranks = tr_alloc((size_t)tr->nranks * sizeof(tr_rank_t));
        for (int r = 0; r < tr->nranks; r++)
            tr_rank_init(&tr->ranks[r]);
    }
    tr->deps_recorded = 1;
    while (!rc && (line = next_line(text, len, &pos, &at)))
        if (!strncmp(line, "deps ", 5))
            tr->deps_recorded = atoi(line + 5) != 0;
        else if (line[0])
            rc = parse_rank_line(tr, path, at, line);
    for (int r = 0; !rc && r < tr->nranks; r++)
        if (!tr->ranks[r].path)
            rc = tr_fail(tr, path, (long long)len, "rank %d of %d is not listed: the file is "
                         "truncated", r, tr->nranks);
    return rc;
}
