/* A rank file of a trace (core/trace/format.h) as dagger-trace reads it
 * (tools/trace/read.c), then every command of the tool on what it read.
 * The input is the file; job.meta is made to agree with its header (as the
 * recorder writes them), so inputs get past the cross-file checks into the
 * blocks and events. */
#include <string.h>

#include "commands.h"
#include "fuzz.h"

static FILE *sink(void)
{
    static FILE *f;
    if (!f)
        f = fopen("/dev/null", "w");
    DG_FUZZ_CHECK(f != NULL);
    return f;
}

static void meta_for(const uint8_t *data, size_t size, char *text, size_t cap)
{
    dg_trf_header_t h;
    memset(&h, 0, sizeof(h));
    memcpy(&h, data, size < sizeof(h) ? size : sizeof(h));
    snprintf(text, cap, "dagger-trace-job %d\njob_id %llx\nnranks 1\ndeps 1\nrank 0 workers %u "
             "spaces %u offset_ns %lld uncert_ns 0 pid 1 host fuzz\n", DG_TRF_META_VERSION,
             (unsigned long long)h.job_id, h.nworkers, h.nspaces, (long long)h.clock_offset_ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char meta[512];
    meta_for(data, size, meta, sizeof(meta));
    tr_trace_t tr;
    tr_load_begin(&tr, "fuzz");
    int rc = tr_parse_meta(&tr, "fuzz/job.meta", meta, strlen(meta));
    DG_FUZZ_CHECK(rc == 0);
    unsigned char *copy = malloc(size + 1); /* tr_read_file's NUL after the bytes */
    memcpy(copy, data, size);
    copy[size] = '\0';
    rc = tr_take_rank(&tr, 0, tr.ranks[0].path, copy, size);
    if (rc == 0)
        rc = tr_load_events(&tr);
    if (rc == 0) {
        tr_cmd_summary(&tr, sink());
        tr_cmd_perfetto(&tr, sink());
        tr_cmd_svg(&tr, sink(), 400);
        tr_cmd_dag(&tr, sink());
        tr_cmd_hang(&tr, sink());
    } else {
        DG_FUZZ_CHECK(tr.error[0] != '\0');
    }
    tr_free(&tr);
    return 0;
}

/* The seeds are rank files of real traces (tests/core/trace/trace_prog), kept
 * as bytes in corpus/trace_rank/: the recorder needs a running job. */
void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    (void)emit;
}
