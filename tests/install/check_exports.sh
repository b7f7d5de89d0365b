#!/usr/bin/env bash
# check_exports.sh LIBDAGGER_SO INCLUDE_DIR: the shared library exports
# exactly the public API.
#  1. Every symbol `nm -D --defined-only` lists is a dagger_* function, or one
#     of the symbols the linker itself defines in every shared object: _init,
#     _fini, and (older binutils) _edata, _end, __bss_start. Anything else
#     (a dg_* function, a global variable) lacks -fvisibility=hidden or leaks
#     through a missing `static`.
#  2. Every function the headers mark DAGGER_API (on the line above its
#     declaration, core/include/dagger/export.h) is exported: a definition
#     that does not see its declaration would be hidden.
#  (That every declaration carries DAGGER_API is checked by the header scan of
#  api_table.covers_every_public_function, tests/core/runtime/test_bad_input.c.)
set -euo pipefail
lib=$1 inc=$2
syms=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
bad=$(grep -Ev '^(dagger_[A-Za-z0-9_]+|_init|_fini|_edata|_end|__bss_start)$' <<<"$syms" || true)
if [ -n "$bad" ]; then
    echo "check_exports: $lib exports $(wc -l <<<"$bad") symbols that are not dagger_*, e.g.:" >&2
    head -20 <<<"$bad" >&2
    exit 1
fi
declared=$(cat "$inc"/dagger.h "$inc"/dagger/*.h "$inc"/dagger/*.h.in | grep -A1 -x 'DAGGER_API' | grep -oE '\bdagger_[a-z0-9_]+ *\(' |
           tr -d ' (' | sort -u)
[ "$(wc -l <<<"$declared")" -ge 100 ] ||
    { echo "check_exports: found only $(wc -l <<<"$declared") DAGGER_API declarations: is the scan broken?" >&2; exit 1; }
missing=$(comm -23 <(echo "$declared") <(echo "$syms"))
if [ -n "$missing" ]; then
    echo "check_exports: declared DAGGER_API but not exported by $lib:" >&2
    echo "$missing" >&2
    exit 1
fi
echo "check_exports: $lib exports the $(wc -l <<<"$declared") DAGGER_API functions and nothing else"
