#!/usr/bin/env bash
# check_install.sh BUILD_DIR CONSUMER_DIR: install into a scratch prefix, then
# build and run the consumer with CMake (shared and static) and pkg-config.
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
cc -o "$tmp/pc_shared" "$src/main.c" $(pkg-config --cflags --libs dagger)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc_shared"
# Static libdagger with the shared system libraries (hwloc's --static list
# names libraries Debian ships only as shared objects).
cc -o "$tmp/pc_static" "$src/main.c" $(pkg-config --cflags dagger) \
   $(pkg-config --libs-only-L dagger) -Wl,-Bstatic -ldagger -Wl,-Bdynamic \
   $(pkg-config --libs ucx pmix hwloc) -lpthread -lm
"$tmp/pc_static"
echo "install check: cmake shared/static and pkg-config shared/static all built and ran"
