#!/usr/bin/env bash
# fusionlint over the CUTLASS mutation sets (seed 1: 320 programs, seed 2: 240) and the 2.x thread-block
# grid (fusionlint.evidence.grid_2x_threads), in source mode (no CUTLASS headers) and in instantiated mode
# (the carried CUTLASS headers; host side, as `check` runs by default; DEVICE_BODIES=1 adds --device-bodies),
# on the GPU machine's 16 CPUs (no GPU is used). Carry .dev (.dev/cutlass.tar.xz: the include trees of
# the nvidia-cutlass 4.2 wheel, `tar cJf .dev/cutlass.tar.xz -C .cutlass .`) and .whl (fusionlint's
# dependencies as wheels: tools/h200_cublaslt_sweep.sh says how). $OUT gets lint-<set>-<mode>.json and one
# lint-summary.txt; score each with `python3 -m fusionlint.evidence.mutations_cutlass evaluate` against
# kernels_ref/evidence/h200-mutations-cutlass*.json (seed 1), ...-seed2*.json, h200-2x-threads-grid.json.
set -euo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
mkdir -p .cutlass && tar xJf .dev/cutlass.tar.xz -C .cutlass
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
python3 -m fusionlint.evidence.mutations_cutlass generate --seed 1 --count 320 --out /tmp/sets/seed1 > /dev/null
python3 -m fusionlint.evidence.mutations_cutlass generate --seed 2 --count 240 --out /tmp/sets/seed2 > /dev/null
python3 -m fusionlint.evidence.grid_2x_threads write --out /tmp/sets/grid2x
extra=()
if [ "${DEVICE_BODIES:-0}" = 1 ]; then extra=(--device-bodies); fi
for set in ${SETS:-seed1 seed2 grid2x}; do
  for mode in ${MODES:-source instantiated}; do
    args=(--exit-zero --output-format json -j "$(nproc)" --cache-dir "/tmp/flc-$set-$mode")
    if [ "$mode" = instantiated ]; then
      args+=(-I "$PWD/.cutlass/include" -I "$PWD/.cutlass/util/include" "${extra[@]}")
    fi
    start=$(date +%s)
    python3 -m fusionlint.cli check "${args[@]}" "/tmp/sets/$set" > "$OUT/lint-$set-$mode.json" \
      2> "/tmp/lint-$set-$mode.stderr" || echo "$set $mode: rc $?" >> "$OUT/lint-summary.txt"
    { echo "== $set $mode: $(( $(date +%s) - start )) s"; tail -3 "/tmp/lint-$set-$mode.stderr"; } >> "$OUT/lint-summary.txt"
  done
done
cat "$OUT/lint-summary.txt"
