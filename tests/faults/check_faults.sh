#!/usr/bin/env bash
# Jobs that go wrong must end (fault_prog.c is the job):
#   check_faults.sh LAUNCHER PROG CASE WORKDIR
#   hang_ends        a divergent job with DAGGER_HANG_TIMEOUT=1 DAGGER_HANG_EXIT=3
#                    prints its hang dump, then ends by itself: status 124 and
#                    DAGGER_ERR_HANG naming what a rank waited for
#   launcher_killed  the launcher is killed (-9) while the job hangs: the ranks,
#                    orphans now, are gone within a few seconds
set -u
launcher=$1 prog=$2 case=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir" || exit 1
job=

rank_pids() { cat "$dir"/rank*.pid 2>/dev/null; }

# A process is running while /proc has it and it is not a zombie.
running() {
  local p st
  for p in "$@"; do
    st=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$p/stat" 2>/dev/null)
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && return 0
  done
  return 1
}

cleanup() {
  local p
  for p in $(rank_pids) $job; do kill -9 "$p" 2>/dev/null; done
}

fail() {
  echo "check_faults $case: FAIL: $*" >&2
  echo "---- job output:" >&2
  cat "$dir/out" >&2 2>/dev/null
  cleanup
  exit 1
}

# Waits up to $1 s (tenths) for "$2..." to succeed.
wait_for() {
  local limit=$(( $1 * 10 )) i=0
  shift
  while ! "$@"; do
    i=$((i + 1))
    [ $i -ge $limit ] && return 1
    sleep 0.1
  done
}

both_ready() { [ "$(rank_pids | wc -l)" -eq 2 ] || job_over; }
job_over() { ! kill -0 "$job" 2>/dev/null; }
ranks_gone() { ! running $(rank_pids); }

case "$case" in
  hang_ends)
    # Limits well above a start-up lag between the ranks: a rank also ends after waiting
    # that long in a collective, and the start-up barrier is one.
    DAGGER_HANG_TIMEOUT=1 DAGGER_HANG_EXIT=3 "$launcher" -n 2 "$prog" "$dir" hang \
      >"$dir/out" 2>&1 &
    job=$!
    wait_for 120 job_over || fail "the hung job did not end within 120 s"
    wait "$job"
    rc=$?
    [ "$rc" -eq 124 ] || fail "the job ended with status $rc, not 124 (a rank ended by DAGGER_HANG_EXIT)"
    grep -q "no progress within DAGGER_HANG_TIMEOUT" "$dir/out" || fail "no hang dump before the end"
    grep -Eq "DAGGER_ERR_HANG: .* it waited for (op [0-9]+ recv tag .* from rank 0|collective #[0-9]+ .* rank [01])" \
      "$dir/out" || fail "no DAGGER_ERR_HANG line naming the receive or collective a rank waited for"
    wait_for 10 ranks_gone || fail "ranks still running after the job ended"
    ;;
  launcher_killed)
    env -u DAGGER_HANG_TIMEOUT "$launcher" -n 2 "$prog" "$dir" hang >"$dir/out" 2>&1 &
    job=$!
    wait_for 120 both_ready && ! job_over || fail "the ranks did not reach their hang"
    sleep 0.5 # both wait now: rank 1 for data, rank 0 in the status agreement
    running $(rank_pids) || fail "the ranks ended before the launcher was killed"
    kill -9 "$job"
    wait "$job" 2>/dev/null
    wait_for 8 ranks_gone || fail "ranks $(rank_pids | tr '\n' ' ')still running 8 s after the launcher was killed"
    ;;
  *) echo "check_faults.sh: unknown case '$case'" >&2; exit 2 ;;
esac
echo "check_faults $case: ok"
