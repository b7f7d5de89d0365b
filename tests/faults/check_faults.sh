#!/usr/bin/env bash
# Jobs that go wrong must end (fault_prog.c is the job):
#   check_faults.sh LAUNCHER PROG CASE WORKDIR
#   hang_ends        a hung job (a task that never returns) with DAGGER_HANG_TIMEOUT=1 DAGGER_HANG_EXIT=3
#                    prints its hang dump, then ends by itself: status 124 and
#                    DAGGER_ERR_HANG naming what a rank waited for
#   launcher_killed  the launcher is killed (-9) while the job hangs: the ranks,
#                    orphans now, are gone within a few seconds
#   srun_killed      the same under srun (skipped, status 77, without a Slurm
#   stepd_killed     controller): srun killed, or the ranks' slurmstepd; the
#                    ranks must be gone within 8 s (what they print then goes
#                    nowhere: slurmstepd carried their output)
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

# The job under srun, its hang reached; then "$@" kills part of the launcher.
srun_hang_then() {
  timeout 3 scontrol ping 2>/dev/null | grep -q 'is UP' || { echo "check_faults $case: skipped: no Slurm controller answers"; exit 77; }
  env -u DAGGER_HANG_TIMEOUT "$launcher" --launcher srun --keep-going -n 2 "$prog" "$dir" hang \
    >"$dir/out" 2>&1 &
  job=$!
  wait_for 120 both_ready && ! job_over || fail "the ranks did not reach their hang"
  sleep 0.5
  running $(rank_pids) || fail "the ranks ended before the launcher was killed"
  "$@"
  wait_for 8 ranks_gone || fail "ranks $(rank_pids | tr '\n' ' ')still running 8 s after: $*"
  kill -9 "$job" 2>/dev/null # srun waits for a step whose slurmstepd is gone
  wait "$job" 2>/dev/null
}

kill_srun() { kill -9 "$job"; }

# The parent of rank 0's process (its slurmstepd). A killed slurmstepd leaves
# its PMIx directory behind, and the next Slurm's step of the same id (a fresh
# Slurm numbers jobs from 1) then fails to launch: remove it.
kill_stepd() {
  local ppid rank0 step
  rank0=$(head -1 "$dir/rank0.pid")
  ppid=$(awk '/^PPid:/ { print $2 }' "/proc/$rank0/status")
  grep -q slurmstepd "/proc/$ppid/comm" || fail "rank 0's parent $ppid is $(cat "/proc/$ppid/comm"), not slurmstepd"
  step=$(tr '\0' '\n' <"/proc/$rank0/environ" | awk -F= '$1 == "SLURM_JOB_ID" { j = $2 }
    $1 == "SLURM_STEP_ID" { s = $2 } END { if (j != "") print j "." s }')
  kill -9 "$ppid"
  [ -n "$step" ] && appdir=/tmp/spmix_appdir_$(id -u)_$step
}
appdir=
trap '[ -n "$appdir" ] && rm -rf "$appdir"' EXIT

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
    grep -Eq "DAGGER_ERR_HANG: .* it waited for (op [0-9]+ recv tag .* from rank 0|op [0-9]+ launch of task [0-9]+ \(endless\)|collective #[0-9]+ .* rank [01])" \
      "$dir/out" || fail "no DAGGER_ERR_HANG line naming the receive, task or collective a rank waited for"
    wait_for 10 ranks_gone || fail "ranks still running after the job ended"
    ;;
  launcher_killed)
    env -u DAGGER_HANG_TIMEOUT "$launcher" -n 2 "$prog" "$dir" hang >"$dir/out" 2>&1 &
    job=$!
    wait_for 120 both_ready && ! job_over || fail "the ranks did not reach their hang"
    sleep 0.5 # both wait now: rank 1 for data, rank 0 for its endless task
    running $(rank_pids) || fail "the ranks ended before the launcher was killed"
    kill -9 "$job"
    wait "$job" 2>/dev/null
    wait_for 8 ranks_gone || fail "ranks $(rank_pids | tr '\n' ' ')still running 8 s after the launcher was killed"
    ;;
  srun_killed)
    srun_hang_then kill_srun
    ;;
  stepd_killed)
    srun_hang_then kill_stepd
    ;;
  *) echo "check_faults.sh: unknown case '$case'" >&2; exit 2 ;;
esac
echo "check_faults $case: ok"
