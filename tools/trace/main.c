/* dagger-trace: inspect the trace of a Dagger-C run (DAGGER_TRACE=dir).
 *
 *   dagger-trace summary  DIR
 *   dagger-trace perfetto DIR -o trace.json
 *   dagger-trace svg      DIR -o timeline.svg [--width PIXELS]
 *   dagger-trace dag      DIR -o dag.dot
 *   dagger-trace hang     DIR
 *
 * Exit status: 0 done, 1 the trace cannot be read (the message names the
 * file and the byte offset) or has nothing to show, 2 a usage error. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: dagger-trace COMMAND DIR [-o FILE] [--width PIXELS]\n"
               "  summary DIR              wall time, utilisation, time by codelet, transfers,\n"
               "                           planner cost, critical path, top waits\n"
               "  perfetto DIR -o FILE     Chrome/Perfetto JSON (open in ui.perfetto.dev)\n"
               "  svg DIR -o FILE          Gantt picture (--width: pixels of the time axis)\n"
               "  dag DIR -o FILE          task graph with placement (Graphviz DOT)\n"
               "  hang DIR                 what a stuck run waits for, from its hang dumps\n"
               "DIR is the directory given as DAGGER_TRACE=DIR to the traced run.\n");
    return f == stderr ? 2 : 0;
}

typedef struct opts {
    const char *cmd, *dir, *out;
    int width;
} opts_t;

static int parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){NULL, NULL, NULL, 1600};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--width")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "dagger-trace: %s needs a value\n", a);
                return -1;
            }
            if (a[1] == 'o') {
                o->out = argv[++i];
            } else {
                char *end;
                long w = strtol(argv[++i], &end, 10);
                if (*end || w < 100 || w > 100000) {
                    fprintf(stderr, "dagger-trace: --width wants 100 to 100000 pixels, got '%s'\n",
                            argv[i]);
                    return -1;
                }
                o->width = (int)w;
            }
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            return 1;
        } else if (!o->cmd) {
            o->cmd = a;
        } else if (!o->dir) {
            o->dir = a;
        } else {
            fprintf(stderr, "dagger-trace: unexpected argument '%s'\n", a);
            return -1;
        }
    }
    if (!o->cmd || !o->dir) {
        fprintf(stderr, "dagger-trace: %s\n", o->cmd ? "no trace directory given" : "no command given");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    int p = parse(argc, argv, &o);
    if (p)
        return usage(p > 0 ? stdout : stderr);
    int (*run)(const tr_trace_t *, FILE *) = NULL;
    int needs_out = 1;
    if (!strcmp(o.cmd, "summary"))
        run = tr_cmd_summary, needs_out = 0;
    else if (!strcmp(o.cmd, "hang"))
        run = tr_cmd_hang, needs_out = 0;
    else if (!strcmp(o.cmd, "perfetto"))
        run = tr_cmd_perfetto;
    else if (!strcmp(o.cmd, "dag"))
        run = tr_cmd_dag;
    else if (strcmp(o.cmd, "svg")) {
        fprintf(stderr, "dagger-trace: unknown command '%s'\n", o.cmd);
        return usage(stderr);
    }
    if (needs_out && !o.out) {
        fprintf(stderr, "dagger-trace: %s writes a file: give it with -o FILE ('-o -' for "
                "standard output)\n", o.cmd);
        return 2;
    }
    tr_trace_t tr;
    if (tr_load(&tr, o.dir)) {
        fprintf(stderr, "dagger-trace: %s\n", tr.error);
        tr_free(&tr);
        return 1;
    }
    FILE *out = stdout;
    if (o.out && strcmp(o.out, "-")) {
        out = fopen(o.out, "w");
        if (!out) {
            fprintf(stderr, "dagger-trace: cannot create %s: %s\n", o.out, strerror(errno));
            tr_free(&tr);
            return 1;
        }
    }
    int rc = run ? run(&tr, out) : tr_cmd_svg(&tr, out, o.width);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "dagger-trace: writing %s failed: %s\n", o.out, strerror(errno));
        rc = 1;
    } else if (out == stdout && fflush(stdout) != 0) {
        rc = 1;
    }
    tr_free(&tr);
    return rc;
}
