/* Replays inputs through a fuzz harness without libFuzzer (see fuzz.h):
 *   fuzz_replay_<decoder> PATH...      every file (of every directory) once
 *   fuzz_replay_<decoder> --seeds DIR  writes the seed corpus into DIR
 * A directory that does not exist is skipped (a decoder without
 * regressions yet); no input at all is an error, so a moved corpus is not
 * a silent pass. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static const char *seed_dir;

static void emit_seed(const char *name, const void *bytes, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", seed_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f)) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf)
        return -1;
    /* An exact-size copy, so a read past the input is caught by ASan. */
    unsigned char *in = malloc(n ? n : 1);
    memcpy(in, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(in, n);
    free(in);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of dir in name order (so a failure is reproducible by name). */
static int replay_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README"))
            continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        rc |= replay_file(path);
        ++*count;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--seeds")) {
        seed_dir = argv[2];
        mkdir(seed_dir, 0777);
        dg_fuzz_seeds(emit_seed);
        return 0;
    }
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc |= replay_file(argv[i]);
            count++;
        } else {
            rc |= replay_dir(argv[i], &count);
        }
    }
    printf("%s: %d inputs replayed\n", argv[0], count);
    return rc || !count;
}
