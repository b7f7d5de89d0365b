#!/usr/bin/env bash
# check_install.sh BUILD_DIR CONSUMER_DIR: install into a scratch prefix, then
# build and run the consumer with CMake (shared and static) and with each
# pkg-config line README.md documents, and check which libdagger each took;
# then a C++ consumer (main_cxx.cpp) with g++ -pedantic -Werror.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cm/consumer_shared"
"$tmp/cm/consumer_static"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"

# pc NAME SHARED|STATIC PKG-CONFIG-ARGS...: link main.c with those flags, run
# it, and check whether it needs libdagger.so.
pc() {
  local name=$1 want=$2; shift 2
  # shellcheck disable=SC2046
  cc -o "$tmp/$name" "$src/main.c" $(pkg-config "$@") ||
    { echo "install check: cc main.c \$(pkg-config $*) does not link" >&2; exit 1; }
  LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/$name"
  # (ldd's whole output first: grep -q leaving early would SIGPIPE ldd, and
  # with pipefail a long dependency list then read as "no libdagger.so")
  local deps got=STATIC
  deps=$(ldd "$tmp/$name" 2>&1 || true)
  case "$deps" in *libdagger.so*) got=SHARED ;; esac
  [ "$got" = "$want" ] ||
    { echo "install check: pkg-config $* linked a $got libdagger, expected $want" >&2; exit 1; }
}
pc pc_shared SHARED --cflags --libs dagger
# --static adds the dependencies' private libraries (Debian's hwloc names
# -ludev: a machine without libudev-dev fails here, as users' builds would).
pc pc_static_deps SHARED --cflags --libs --static dagger
pc pc_static STATIC --cflags --libs dagger-static

# A C++ program: the headers (their argument and scope macros, compound
# literals in C) must be valid, warning-free C++ (g++ from tools/install-deps).
cxx=${CXX:-g++}
# shellcheck disable=SC2046
"$cxx" -std=c++17 -Wall -Wextra -Werror -pedantic -o "$tmp/consumer_cxx" "$src/main_cxx.cpp" \
    $(pkg-config --cflags --libs dagger) ||
    { echo "install check: $cxx -std=c++17 -pedantic -Werror main_cxx.cpp does not build" >&2; exit 1; }
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer_cxx"
echo "install check: cmake shared/static, pkg-config dagger, dagger --static, dagger-static and the C++ consumer all built and ran"
