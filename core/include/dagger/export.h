/* DAGGER_API: the mark of a public function.
 *
 * libdagger.so is built with -fvisibility=hidden, so only the functions
 * declared with DAGGER_API (the dagger_* functions of these headers) are
 * exported; the library's internal dg_* functions stay private to it and
 * cannot clash with a program's or another library's symbols
 * (tests/install/check_exports.sh checks the export list). */
#ifndef DAGGER_EXPORT_H
#define DAGGER_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define DAGGER_API __attribute__((visibility("default")))
#else
#define DAGGER_API
#endif

#endif
