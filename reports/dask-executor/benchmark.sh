#!/usr/bin/env bash
# A 16-cell grid (4 methods x 4 seeds on letter) run by each variant in turn, ROUNDS times
# (interleaved); prints the wall time of each run. Variants: local (the local executor),
# daskN (--executor dask on a LocalCluster of N workers).
# Usage: reports/dask-executor/benchmark.sh OUTDIR [ROUNDS [VARIANT...]]
#   default: 2 rounds of "local dask2"   (needs xcbench[dask] and the letter dataset)
set -euo pipefail
out=${1:?give an output folder}
rounds=${2:-2}
shift $(( $# > 1 ? 2 : 1 ))
variants=("${@:-local dask2}")
[ $# -eq 0 ] && variants=(local dask2)
grid=(--suite "$(dirname "$0")/suite.toml" --no-report --quiet)  # 4 methods x 4 seeds on letter
for round in $(seq 1 "$rounds"); do
  for variant in "${variants[@]}"; do
    extra=()
    case $variant in
      local) ;;
      dask*) extra=(--executor dask --workers "${variant#dask}") ;;
      *) echo "unknown variant $variant (local or daskN)" >&2; exit 2 ;;
    esac
    start=$(date +%s.%N)
    xcbench run "${grid[@]}" "${extra[@]}" --out "$out/$variant-$round" \
      > "$out/$variant-$round.log" 2>&1 || true
    end=$(date +%s.%N)
    echo "$variant round $round: $(echo "$end - $start" | bc) s"
  done
done
