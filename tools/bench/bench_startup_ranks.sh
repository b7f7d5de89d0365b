#!/usr/bin/env bash
# A multi-rank Dagger-C job's start-up and shutdown against its launcher's
# own: `mpirun -n N true` (the exact line tools/dagger-run would run, from
# its --print) against `tools/dagger-run -n N bench_startup --child`
# (dagger_init + dagger_finalize on every rank), alternated in one run by
# bench_startup (medians, ranges, ratio and difference; wall and CPU of the
# whole job). The Open MPI settings are tools/run-tests' own.
#
#   tools/bench/bench_startup_ranks.sh [BUILD_DIR=build] [RANKS=4] [REPS=11]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
ranks=${2:-4}
reps=${3:-11}
bench=$build/tools/bench/bench_startup
[ -x "$bench" ] || { echo "bench_startup_ranks: build $bench first" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self OMPI_MCA_pml=^ucx OMPI_MCA_rmaps_base_oversubscribe=1
launcher=$("$root/tools/dagger-run" --launcher mpirun --print -n "$ranks" true)
# The launcher's own line, without what dagger-run adds for Dagger-C ranks.
launcher=${launcher/ -x OPENBLAS_NUM_THREADS/}
exec "$bench" --reps "$reps" --out "/tmp/bench_startup_ranks$ranks.txt" \
  "launcher=$launcher" \
  "dagger=$root/tools/dagger-run --launcher mpirun -n $ranks $bench --child"
