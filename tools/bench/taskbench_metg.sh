#!/usr/bin/env bash
# Task Bench METG(50%) for Dagger-C against the plain MPI nonblocking peer,
# variants alternated (the order rotates each round), medians and ranges.
#
#   tools/bench/taskbench_metg.sh [metg|regions]
#
#   metg     (default) the METG sweep for stencil_1d, nearest (radix 3) and
#            spread (radix 3), compute_bound, width 4: Dagger-C on 2 ranks x 1
#            thread and on 1 rank x 2 threads, MPI on 2 processes, StarPU on
#            1 process x 2 workers and StarPU-MPI on 2 processes x 1 worker (each
#            peer only when its driver was built). Prints the table and writes it
#            to $OUT (/tmp/taskbench.txt).
#   regions  Dagger-C 2 x 1, stencil_1d: wall time per -region-steps (timesteps
#            per region; 0 = one region for the run) at small and large tasks.
#   busy     2 x 1 runs of one size (-steps $STEPS -iter $ITER, default 4000 and
#            64) alone and beside one busy loop on the same cores: Dagger-C as
#            it is, with DAGGER_SCHED_SLICE_US=100 and with DAGGER_SPIN_YIELD=0,
#            and MPI; us per task and core (docs/benchmarks.md, "Beside a busy
#            process"). The loop runs in this script's session (see there).
#
# RAW=file re-tabulates the RESULT lines a run kept in $OUT.raw, running nothing.
# Later options win, so the regions mode's -region-steps overrides RSTEPS.
# Settings (environment): BUILD (build), PATTERNS ("stencil_1d nearest spread";
# any of trivial no_comm stencil_1d stencil_1d_periodic nearest spread tree
# fft; nearest and spread with radix 3), KERNEL (compute_bound, or
# memory_bound), STEPS (500), ROUNDS (3), MAXITER (32768 for compute_bound, 512
# for memory_bound: tasks of 0.2-0.4 ms either way), REPS (2: runs per point,
# the fastest counts), MINTIME (0.05: seconds; a sweep point runs again, up
# to 64 times, until its runs add up to this: at the smallest tasks a run
# of 500 steps takes about a millisecond, and one descheduling in it would
# end the sweep there), RETRIES (1: a point below 50 % efficiency is timed
# again that many times before the sweep ends there; a slow spell of the
# machine can outlast a point's runs), RSTEPS (64: Dagger-C timesteps per
# region in the sweep; see the regions mode), OUT.
# Needs build/tools/bench/bench_taskbench; taskbench_mpi (libopenmpi-dev) and
# taskbench_starpu (libstarpu-dev) and taskbench_starpu_mpi (both) for their
# columns, else those read n/a.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${BUILD:-$here/build}/tools/bench"
rsteps="${RSTEPS:-64}" steps="${STEPS:-500}" rounds="${ROUNDS:-3}" reps="${REPS:-2}"
mintime="${MINTIME:-0.05}" retries="${RETRIES:-1}"
kernel="${KERNEL:-compute_bound}"
case "$kernel" in
  compute_bound) maxiter="${MAXITER:-32768}" ;;
  memory_bound) maxiter="${MAXITER:-512}" ;;
  *) echo "$0: KERNEL is compute_bound or memory_bound, not '$kernel'" >&2; exit 2 ;;
esac
out="${OUT:-/tmp/taskbench.txt}"
raw="$(mktemp)"
trap 'rm -f "$raw"' EXIT
mode="${1:-metg}"

# run VARIANT ARGS...: one driver run in the variant's configuration.
run() {
  local v="$1"; shift
  case "$v" in
    dagger_2x1) DAGGER_NUM_THREADS=1 "$here/tools/dagger-run" -n 2 "$bin/bench_taskbench" \
                  -region-steps "$rsteps" "$@" ;;
    dagger_1x2) DAGGER_NUM_THREADS=2 "$bin/bench_taskbench" -region-steps "$rsteps" "$@" ;;
    starpu_1x2) STARPU_NCPU=2 "$bin/taskbench_starpu" "$@" ;;
    starpu_2x1) STARPU_NCPU=1 mpirun --allow-run-as-root --oversubscribe --bind-to none -n 2 \
                  -x STARPU_NCPU "$bin/taskbench_starpu_mpi" "$@" ;;
    mpi_2x1) mpirun --allow-run-as-root --oversubscribe --bind-to none -n 2 \
               "$bin/taskbench_mpi" "$@" ;;
  esac
}

# stats: "median min max" of the numbers on stdin.
stats() {
  sort -g | awk '{v[NR]=$1} END {if (NR == 0) {print "n/a n/a n/a"; exit}
    m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; print m, v[1], v[NR]}'
}

if [ "$mode" = regions ]; then
  for r in $(seq "$rounds"); do
    for rs in 1 4 16 64 0; do
      for it in 16 4096; do
        w=$(run dagger_2x1 -type stencil_1d -steps "$steps" -width 4 -iter "$it" \
              -region-steps "$rs" -reps "$reps" | sed -n 's/.*wall \([0-9.]*\) s.*/\1/p')
        echo "$rs $it $w" >> "$raw"
      done
    done
  done
  printf '%-13s %-6s %s\n' "region-steps" "iter" "us/task x core: median [min-max]"
  for rs in 1 4 16 64 0; do
    for it in 16 4096; do
      read -r m lo hi < <(awk -v rs="$rs" -v it="$it" '$1 == rs && $2 == it {print $3}' "$raw" | stats)
      awk -v rs="$rs" -v it="$it" -v m="$m" -v lo="$lo" -v hi="$hi" -v n="$((steps * 4))" \
        'BEGIN {printf "%-13s %-6s %8.1f [%.1f-%.1f]\n", rs, it, m*2/n*1e6, lo*2/n*1e6, hi*2/n*1e6}'
    done
  done
  exit 0
fi

if [ "$mode" = busy ]; then
  [ -n "${STEPS:-}" ] || steps=4000
  iter="${ITER:-64}" busy=
  trap 'rm -f "$raw"; [ -z "$busy" ] || kill "$busy" 2>/dev/null' EXIT
  vs=(default slice100 noyield)
  [ -x "$bin/taskbench_mpi" ] && vs+=(mpi)
  read -r -a patterns <<< "${PATTERNS:-stencil_1d nearest spread}"
  for r in $(seq "$rounds"); do
    for load in alone busy; do
      if [ "$load" = busy ]; then
        # In this session: with the kernel's autogroups a busy loop in a session
        # of its own gets its group's share of the cores, not one thread's.
        sh -c 'while :; do :; done' & busy=$!
        sleep 0.2
      fi
      for p in "${patterns[@]}"; do
        for k in $(seq 0 $((${#vs[@]} - 1))); do
          v=${vs[$(((k + r) % ${#vs[@]}))]}
          a=(-type "$p" -radix 3 -width 4 -steps "$steps" -iter "$iter")
          case "$v" in
            default) o=$(DAGGER_SCHED_SLICE_US=0 DAGGER_SPIN_YIELD=1 run dagger_2x1 "${a[@]}") ;;
            slice100) o=$(DAGGER_SCHED_SLICE_US=100 DAGGER_SPIN_YIELD=1 run dagger_2x1 "${a[@]}") ;;
            noyield) o=$(DAGGER_SCHED_SLICE_US=0 DAGGER_SPIN_YIELD=0 run dagger_2x1 "${a[@]}") ;;
            mpi) o=$(run mpi_2x1 "${a[@]}") ;;
          esac
          echo "$load $p $v $(sed -n 's|.* \([0-9.e+-]*\) us/task x core.*|\1|p' <<< "$o" | tail -1)" >> "$raw"
        done
      done
      if [ -n "$busy" ]; then kill "$busy"; wait "$busy" 2>/dev/null || true; busy=; fi
    done
  done
  {
    echo "Task Bench 2 x 1, width 4, -steps $steps -iter $iter, $rounds rounds alternated; us per"
    echo "task and core, median [min-max]; busy: beside one busy loop on the same cores"
    f='%-11s %-6s %-20s %-20s %-20s %s\n'
    printf "$f" pattern load "Dagger-C" "100 us slice" "no spin yields" "MPI"
    for p in "${patterns[@]}"; do
      for load in alone busy; do
        c=()
        for v in default slice100 noyield mpi; do
          read -r m lo hi < <(awk -v l="$load" -v p="$p" -v v="$v" \
            '$1 == l && $2 == p && $3 == v && $4 != "" {print $4}' "$raw" | stats)
          c+=("$(awk -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN {if (m == "n/a") print "n/a";
            else printf "%.3g [%.3g-%.3g]", m, lo, hi}')")
        done
        printf "$f" "$p" "$load" "${c[0]}" "${c[1]}" "${c[2]}" "${c[3]}"
      done
    done
  } | tee "$out"
  exit 0
fi

variants=(dagger_2x1 dagger_1x2)
[ -x "$bin/taskbench_mpi" ] && variants+=(mpi_2x1)
[ -x "$bin/taskbench_starpu" ] && variants+=(starpu_1x2)
[ -x "$bin/taskbench_starpu_mpi" ] && variants+=(starpu_2x1)
read -r -a patterns <<< "${PATTERNS:-stencil_1d nearest spread}"
[ -n "${RAW:-}" ] && { cp "$RAW" "$raw"; rounds=0; } # re-tabulate a kept $OUT.raw
for r in $(seq "$rounds"); do
  for p in "${patterns[@]}"; do
    n=${#variants[@]}
    for k in $(seq 0 $((n - 1))); do
      v=${variants[$(((k + r) % n))]}
      run "$v" -sweep -type "$p" -radix 3 -kernel "$kernel" -width 4 -steps "$steps" \
        -max-iter "$maxiter" -reps "$reps" -min-time "$mintime" -retries "$retries" \
        -label "$v" |
        grep '^RESULT' >> "$raw" || true
    done
  done
done

# field N PATTERN VARIANT: "median min max" of RESULT field N over the rounds
# (6: METG in us, '<=' stripped; 8: peak work/s, printed in G/s).
field() {
  awk -v n="$1" -v p="$2" -v v="$3" '$3 == p && $4 == v {x = $n; sub("<=", "", x);
    print n == 8 ? x / 1e9 : x}' "$raw" | stats
}
# cell N PATTERN VARIANT: "median [min-max]" with 3 significant digits.
cell() {
  read -r m lo hi < <(field "$@")
  awk -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN {if (m == "n/a") print "n/a";
    else printf "%.3g [%.3g-%.3g]\n", m, lo, hi}'
}
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {if (b+0 > 0) printf "%.3gx", a/b; else print "n/a"}'
}
med() { field "$@" | cut -d' ' -f1; }
{
  echo "Task Bench METG(50%), $kernel, width 4, $steps steps, $rounds rounds alternated"
  echo "METG in us and peak (the second highest rate of the sweep, from -max-iter $maxiter down) in G work units/s (GFLOP/s or GB/s):"
  echo "median [min-max];"
  echo "ratios of METG medians: Dagger-C / MPI 2 procs, Dagger-C / StarPU in the row's"
  echo "configuration (1x2: one process, 2 workers; 2x1: StarPU-MPI, 2 processes x 1 worker)"
  f='%-11s %-6s %-20s %-18s %-20s %-18s %-8s %-20s %-18s %s\n'
  printf "$f" pattern config "Dagger-C METG" "peak" "MPI METG" "peak" "D/MPI" "StarPU METG" \
    "peak" "D/StarPU"
  for p in "${patterns[@]}"; do
    for v in dagger_2x1 dagger_1x2; do
      sp="starpu_${v#dagger_}"
      printf "$f" "$p" "${v#dagger_}" "$(cell 6 "$p" "$v")" "$(cell 8 "$p" "$v")" \
        "$(cell 6 "$p" mpi_2x1)" "$(cell 8 "$p" mpi_2x1)" \
        "$(ratio "$(med 6 "$p" "$v")" "$(med 6 "$p" mpi_2x1)")" \
        "$(cell 6 "$p" "$sp")" "$(cell 8 "$p" "$sp")" \
        "$(ratio "$(med 6 "$p" "$v")" "$(med 6 "$p" "$sp")")"
    done
  done
  awk '/<=/ {n++} END {print "results where efficiency never fell below 50% (METG <=): " n+0}' "$raw"
} | tee "$out"
[ -n "${RAW:-}" ] || cp "$raw" "$out.raw"
