#!/usr/bin/env bash
# The device actors in a trace: runs mr_gpu_direct on N ranks with one test
# device each under DAGGER_TRACE, then checks dagger-trace summary: each
# rank's processor actor "test device 0" handled dagger.dev.launch and its
# memory-space actor "mem:test device 0" polls, copies (rank 0, the home)
# and host-staged transfers (dagger.dev.staged): actors of their own.
#   check_trace_gpu.sh TOOL PROG LAUNCHER NRANKS WORKDIR
set -uo pipefail
tool=$1 prog=$2 launcher=$3 n=$4 work=$5
rm -rf "$work" && mkdir -p "$work/trace"
if ! DAGGER_TRACE="$work/trace" DAGGER_TEST_DEVICES=1 DAGGER_GPU_DIRECT=0 DAGGER_GPU_IPC=0 \
     "$launcher" -n "$n" "$prog" --jobs 1 >"$work/prog.log" 2>&1; then
  cat "$work/prog.log"; echo "FAIL: the traced program failed"; exit 1
fi
"$tool" summary "$work/trace" >"$work/summary.txt" 2>&1 || { cat "$work/summary.txt"; exit 1; }
fail=0
expect() { # rank actor type
  if ! grep -Eq "^ +$1 +$2 +$3 " "$work/summary.txt"; then
    echo "FAIL: rank $1: actor '$2' handled no $3"; fail=1
  fi
}
for ((r = 0; r < n; r++)); do
  expect "$r" "test device 0" dagger.dev.launch
  expect "$r" "mem:test device 0" dagger.dev.poll
done
expect 0 "mem:test device 0" dagger.mem.copy # the chunk's home is rank 0's host memory
[ "$n" -gt 1 ] && expect 1 "mem:test device 0" dagger.dev.staged
[ $fail = 0 ] || { sed -n '/Messages by type/,$p' "$work/summary.txt" | head -40; exit 1; }
echo "device actors traced on $n ranks"
