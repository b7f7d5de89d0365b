/* Diagnostics to stderr, prefixed with the rank once it is known. */
#ifndef DG_LOG_H
#define DG_LOG_H

enum { DG_LOG_ERROR = 0, DG_LOG_WARN = 1, DG_LOG_INFO = 2, DG_LOG_DEBUG = 3 };

/* Process-wide identity for log lines; set by the runtime after bootstrap. */
void dg_log_set_rank(int rank, int level);
void dg_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
