#!/usr/bin/env bash
# check_gpu_module.sh LIBDAGGER MODULE RUNTIME EXPORT...: libdagger.so does
# not need the GPU runtime whose library name starts with RUNTIME (libcudart,
# libamdhip64: devices/cuda/cuda_lib.h and devices/hip/hip_lib.h load it on
# first use); the backend's module needs it, exports exactly the EXPORTs
# (its kernels' launchers) and takes no symbol from libdagger.
set -euo pipefail
lib=$1 mod=$2 rt=$3
shift 3
want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
fail() { echo "check_gpu_module: $*" >&2; exit 1; }
needed() { objdump -p "$1" | awk '$1 == "NEEDED" {print $2}'; }
needed "$lib" | grep -q "^$rt" && fail "$lib needs $rt: $(needed "$lib" | tr '\n' ' ')"
needed "$mod" | grep -q "^$rt" || fail "$mod does not need $rt"
exports=$(nm -D --defined-only "$mod" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$exports" = "$want" ] || fail "$mod exports '$exports', expected '$want'"
ours=$(nm -D --undefined-only "$mod" | awk '{print $2}' | grep -E '^(dg_|dagger_)' || true)
[ -z "$ours" ] || fail "$mod takes from libdagger: $ours"
echo "check_gpu_module: $lib does not need $rt; $mod does and exports $want"
