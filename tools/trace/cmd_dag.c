/* dagger-trace dag: the task graph in Graphviz DOT. A node per task,
 * coloured by codelet and grouped in a cluster per rank (its placement);
 * its label names the codelet, the task id and the worker that ran it. An
 * edge per logical dependency, dashed where the data crossed ranks. */
#include <inttypes.h>

#include "commands.h"

int tr_cmd_dag(const tr_trace_t *tr, FILE *out)
{
    if (!tr->deps_recorded)
        fprintf(stderr, "dagger-trace dag: recorded with DAGGER_TRACE_DEPS=0: the graph has "
                        "tasks and placement but no dependency edges\n");
    fprintf(out, "digraph dagger {\n  rankdir=TB;\n  node [shape=box, style=filled, "
            "fontname=\"sans-serif\", fontsize=10];\n  edge [arrowsize=0.6];\n");
    for (int r = -1; r < tr->nranks; r++) {
        int any = 0;
        for (uint64_t i = 1; i < tr->ntasks; i++) {
            const tr_task_t *t = &tr->tasks[i];
            if (!(t->planned || t->ran) || t->rank != r)
                continue;
            if (!any++) {
                if (r >= 0)
                    fprintf(out, "  subgraph cluster_rank%d {\n    label=\"rank %d\";\n", r, r);
                else
                    fprintf(out, "  subgraph cluster_unplaced {\n    label=\"unknown rank\";\n");
            }
            char col[8], where[48];
            if (t->ran)
                snprintf(where, sizeof(where), "rank %d worker %d", t->rank, t->worker);
            else
                snprintf(where, sizeof(where), "rank %d (no run recorded)", t->rank);
            fprintf(out, "    t%" PRIu64 " [label=\"", t->id);
            tr_put_json(out, tr_codelet_name(tr, t->codelet)); /* DOT strings escape like JSON */
            fprintf(out, " #%" PRIu64 "\\n%s\", fillcolor=\"%s\"];\n", t->id, where,
                    tr_color(col, tr_codelet_index(tr, t->codelet)));
        }
        if (any)
            fprintf(out, "  }\n");
    }
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        const uint64_t *deps = tr_task_deps(tr, t);
        for (uint32_t k = 0; k < t->ndeps; k++) {
            const tr_task_t *d = deps[k] < tr->ntasks ? &tr->tasks[deps[k]] : NULL;
            if (!d || !(d->planned || d->ran))
                continue;
            fprintf(out, "  t%" PRIu64 " -> t%" PRIu64 "%s;\n", d->id, t->id,
                    d->rank != t->rank ? " [style=dashed]" : "");
        }
    }
    fputs("}\n", out);
    return 0;
}
