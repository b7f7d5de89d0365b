/* The commands of dagger-trace; each writes its output to out and returns
 * the process exit status (0, or 1 when it has nothing to show). */
#ifndef TR_COMMANDS_H
#define TR_COMMANDS_H

#include <stdio.h>

#include "model.h"

int tr_cmd_summary(const tr_trace_t *tr, FILE *out);
int tr_cmd_perfetto(const tr_trace_t *tr, FILE *out);
int tr_cmd_svg(const tr_trace_t *tr, FILE *out, int width);
int tr_cmd_dag(const tr_trace_t *tr, FILE *out);
int tr_cmd_hang(const tr_trace_t *tr, FILE *out);

#endif
