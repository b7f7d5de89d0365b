#!/usr/bin/env bash
# Old and new builds alternated in one run (docs: "ratios in the same run,
# variants alternated, medians and ranges"): for each benchmark, P pairs,
# the order flipped every pair. Then tools/bench/ab_summary.py OUT prints
# medians, ranges and new/old ratios.
#
#   tools/bench/ab_compare.sh OLD_BENCH_DIR NEW_BENCH_DIR OUT [P]
#   KINDS="l22 xfer act l41 thr chol" selects benchmarks (default: all
#   but chol, which takes minutes per pair)
#
# l22/l41: bench_region_launch on 2 ranks x 2 threads / 4 x 1; act:
# bench_tx_actors --quick; xfer: bench_region_xfer; thr:
# bench_region_throughput 100000 (1 rank x 2 threads, with StarPU if built);
# chol: bench_linalg_tiled, tiled Cholesky N=4096 tiles 512, 1 rank x 2
# threads, 1 repetition (its own warm-up first; the old design's binary
# takes [OUT] [N] [TILE] [REPS] [chol], the new one [OUT] [SIZES] [REPS]
# [WHAT] [TILES]: CHOL_OLD_ARGS / CHOL_NEW_ARGS override).
set -u
old=$1 new=$2 out=$3 pairs=${4:-8}
run="$(cd "$(dirname "$0")/.." && pwd)/dagger-run"
mkdir -p "$out"
one() { # variant-dir name kind index
  local b=$1 f=$out/$2_$3_$4.txt
  case $3 in
    l22) DAGGER_NUM_THREADS=2 timeout 120 "$run" -n 2 "$b/bench_region_launch" "$f" ;;
    l41) DAGGER_NUM_THREADS=1 timeout 120 "$run" -n 4 "$b/bench_region_launch" "$f" ;;
    act) timeout 120 "$run" -n 2 "$b/bench_tx_actors" --quick "$f" ;;
    xfer) timeout 120 "$run" -n 2 "$b/bench_region_xfer" "$f" ;;
    thr) DAGGER_NUM_THREADS=2 timeout 200 "$b/bench_region_throughput" 100000 "$f" ;;
    chol) if [ "$2" = old ]; then a=${CHOL_OLD_ARGS:-4096 512 1 chol}; else a=${CHOL_NEW_ARGS:-4096 1 cholesky 512}; fi
          # shellcheck disable=SC2086
          DAGGER_NUM_THREADS=2 timeout 400 "$b/bench_linalg_tiled" "$f" $a ;;
  esac > /dev/null 2>&1
}
for k in ${KINDS:-l22 xfer act l41 thr}; do
  for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then one "$old" old "$k" "$i"; one "$new" new "$k" "$i"
    else one "$new" new "$k" "$i"; one "$old" old "$k" "$i"; fi
  done
  echo "$k done" >> "$out/progress"
done
