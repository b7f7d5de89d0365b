/* The contract of a fuzz harness (one file per decoder, fuzz_<decoder>.c).
 *
 * LLVMFuzzerTestOneInput feeds one input to the decoder and to what the
 * runtime does with a decoded value; it aborts when an invariant the
 * runtime relies on breaks (a round trip that differs, a length past the
 * input). The same file links two ways (tests/fuzz/CMakeLists.txt):
 *  - with libFuzzer (DAGGER_FUZZ=ON, clang): tools/fuzz-tests runs it;
 *  - with replay_main.c in every build: ctest feeds it each file of
 *    corpus/<decoder>/ and regressions/<decoder>/, so an input that once
 *    crashed stays fixed under gcc too.
 * dg_fuzz_seeds writes the seed corpus with the real encoders
 * (fuzz_replay_<decoder> --seeds DIR). */
#ifndef DG_FUZZ_H
#define DG_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*dg_fuzz_emit_fn)(const char *name, const void *bytes, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void dg_fuzz_seeds(dg_fuzz_emit_fn emit);

/* A broken invariant: a finding, whichever way the harness runs. */
#define DG_FUZZ_CHECK(cond)                                                                   \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                          \
        }                                                                                     \
    } while (0)

#endif
