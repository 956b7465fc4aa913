#!/usr/bin/env bash
# A 16-cell grid (4 methods x 4 seeds on letter) with the local executor and with --executor
# dask on a 2-worker LocalCluster, each variant twice, interleaved; prints the wall time of
# each run. Usage: reports/dask-executor/benchmark.sh OUTDIR   (needs xcbench[dask] and letter)
set -euo pipefail
out=${1:?give an output folder}
grid=(--methods ova,softmax,lomtree,hsm --dataset letter --seeds 0,1,2,3 --no-report --quiet)
for round in 1 2; do
  for variant in local dask; do
    extra=()
    [ "$variant" = dask ] && extra=(--executor dask --workers 2)
    start=$(date +%s.%N)
    xcbench run "${grid[@]}" "${extra[@]}" --out "$out/$variant-$round" > "$out/$variant-$round.log" 2>&1 || true
    end=$(date +%s.%N)
    echo "$variant round $round: $(echo "$end - $start" | bc) s"
  done
done
