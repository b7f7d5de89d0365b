#!/usr/bin/env bash
# dagger-config lists the settings and the process's devices, saying per
# device whether transfers to other ranks of the host go through IPC
# handles (DAGGER_GPU_IPC), and fails naming a bad setting.
set -uo pipefail
cfg=$1
fail() { echo "FAIL: $*"; exit 1; }
out=$(DAGGER_TEST_DEVICES=2 "$cfg") || fail "dagger-config failed: $out"
grep -q "DAGGER_GPU_IPC" <<<"$out" || fail "DAGGER_GPU_IPC is not listed"
grep -q "DAGGER_GPU_STREAMS" <<<"$out" || fail "DAGGER_GPU_STREAMS is not listed"
[ "$(grep -c '^  space [12]: test device [01], .*; IPC with the test device of this index of other ranks of this host, and with their other test devices where the start-up probe reads their handles$' <<<"$out")" = 2 ] ||
  fail "the two test devices do not say IPC: $out"
out=$(DAGGER_TEST_DEVICES=1 DAGGER_GPU_IPC=0 "$cfg") || fail "dagger-config failed: $out"
grep -q '^  space 1: test device 0, .*; no IPC (DAGGER_GPU_IPC=0)$' <<<"$out" ||
  fail "DAGGER_GPU_IPC=0 is not said: $out"
out=$(DAGGER_TEST_DEVICES=99 "$cfg" 2>&1) && fail "DAGGER_TEST_DEVICES=99 was accepted"
grep -q "DAGGER_TEST_DEVICES=99" <<<"$out" || fail "the bad setting is not named: $out"
echo "ok"
