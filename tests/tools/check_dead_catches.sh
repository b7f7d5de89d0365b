#!/usr/bin/env bash
# check_dead_catches.sh SRC_DIR: tools/check-dead can fail. On a copy of the
# library's sources it must pass, then fail naming a non-static function that
# only a test calls, and pass again once that function is static and used.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools"
cp -r "$src/core" "$src/actors" "$src/transport" "$src/devices" "$tmp/"
cp "$src"/tools/*.c "$src/tools/check-dead" "$tmp/tools/"
bash "$tmp/tools/check-dead" "$tmp" >/dev/null ||
    { echo "check_dead_catches: the copy of the sources fails already" >&2; exit 1; }
cat >"$tmp/core/zz_probe.c" <<'C'
/* A probe: nothing in the library calls it. */
int dg_zz_probe_dead(int x)
{
    return x + 1; /* dg_zz_probe_dead in a comment is no call */
}
C
mkdir -p "$tmp/tests" && echo 'int t(void) { return dg_zz_probe_dead(1); }' >"$tmp/tests/t.c"
if out=$(bash "$tmp/tools/check-dead" "$tmp" 2>&1); then
    echo "check_dead_catches: check-dead passed with an uncalled function:" >&2
    echo "$out" >&2
    exit 1
fi
grep -q 'core/zz_probe.c:2 dg_zz_probe_dead' <<<"$out" ||
    { echo "check_dead_catches: check-dead failed without naming the probe:" >&2; echo "$out" >&2; exit 1; }
sed -i 's/^int dg_zz_probe_dead/static int dg_zz_probe_dead/' "$tmp/core/zz_probe.c"
echo 'int dg_zz_probe_user(void); int dg_zz_probe_user(void) { return dg_zz_probe_dead(2); }' \
    >>"$tmp/core/zz_probe.c"
echo 'static int u(void) { return dg_zz_probe_user(); }' >"$tmp/core/zz_user.c"
bash "$tmp/tools/check-dead" "$tmp" >/dev/null ||
    { echo "check_dead_catches: a static, called function was reported" >&2; exit 1; }
echo "check_dead_catches: check-dead names an uncalled function and passes a called one"
