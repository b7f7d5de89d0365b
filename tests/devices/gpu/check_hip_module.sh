#!/usr/bin/env bash
# check_hip_module.sh LIBDAGGER MODULE: libdagger.so does not need
# libamdhip64 (devices/hip/hip_lib.h loads it on first use); the module
# libdagger-hip.so needs it, exports only dg_hip_pack_launch and takes no
# symbol from libdagger.
set -euo pipefail
lib=$1 mod=$2
fail() { echo "check_hip_module: $*" >&2; exit 1; }
needed() { objdump -p "$1" | awk '$1 == "NEEDED" {print $2}'; }
needed "$lib" | grep -q amdhip && fail "$lib needs libamdhip64: $(needed "$lib" | tr '\n' ' ')"
needed "$mod" | grep -q '^libamdhip64' || fail "$mod does not need libamdhip64"
exports=$(nm -D --defined-only "$mod" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$exports" = "dg_hip_pack_launch " ] || fail "$mod exports '$exports', expected dg_hip_pack_launch only"
ours=$(nm -D --undefined-only "$mod" | awk '{print $2}' | grep -E '^(dg_|dagger_)' || true)
[ -z "$ours" ] || fail "$mod takes from libdagger: $ours"
echo "check_hip_module: $lib does not need libamdhip64; $mod does and exports dg_hip_pack_launch only"
