/* job.meta, the text file of a trace directory (tools/trace/meta.c). */
#include <string.h>

#include "fuzz.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    tr_trace_t tr;
    tr_load_begin(&tr, "fuzz");
    if (tr_parse_meta(&tr, "fuzz/job.meta", text, size) == 0) {
        DG_FUZZ_CHECK(tr.nranks >= 1);
        for (int r = 0; r < tr.nranks; r++)
            DG_FUZZ_CHECK(tr.ranks[r].path != NULL);
    } else {
        DG_FUZZ_CHECK(tr.error[0] != '\0');
    }
    tr_free(&tr);
    free(text);
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    static const char two[] = "dagger-trace-job 1\njob_id 1f2e3d4c5b6a7988\nnranks 2\ndeps 1\n"
                              "rank 0 workers 2 spaces 0 offset_ns 0 uncert_ns 0 pid 100 host a\n"
                              "rank 1 workers 2 spaces 0 offset_ns -1500 uncert_ns 40 pid 101 "
                              "host b\n";
    emit("two_ranks", two, sizeof(two) - 1);
}
