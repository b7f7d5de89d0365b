/* Reading the library's own sources from a test (DG_SOURCE_DIR): the text of
 * a file as it is, or with its comments blanked out, so that prose does not
 * count. */
#ifndef DG_TEST_SOURCE_TEXT_H
#define DG_TEST_SOURCE_TEXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file's text (malloc'ed, NUL-terminated); NULL if it cannot be read. */
static inline char *dg_source_raw(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    size_t got = s ? fread(s, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!s)
        return NULL;
    s[got] = 0;
    return s;
}

/* The file's text (malloc'ed, NUL-terminated) with comments replaced by
 * blanks; NULL if it cannot be read. */
static inline char *dg_source_text(const char *path)
{
    char *s = dg_source_raw(path);
    for (char *p = s; p && (p = strstr(p, "/*"));) {
        char *end = strstr(p + 2, "*/");
        size_t len = end ? (size_t)(end + 2 - p) : strlen(p);
        for (size_t i = 0; i < len; i++)
            if (p[i] != '\n')
                p[i] = ' ';
        p += len;
    }
    return s;
}

#endif
