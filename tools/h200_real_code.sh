#!/usr/bin/env bash
# bench/real_code/measure.py on the GPU machine's 16 CPUs (no GPU is used): the real-code corpus
# in the modes named by MODES (default: instantiated, the CUTLASS groups with the CUTLASS 4.2 headers
# of the nvidia-cutlass wheel). Carry .dev (.dev/cutlass.tar.xz: `tar cJf .dev/cutlass.tar.xz -C
# .cutlass .`), .whl (fusionlint's dependencies as wheels: tools/h200_cublaslt_sweep.sh says how) and
# .corpus (bench/real_code/fetch.py). NVCC=1 also times one nvcc build of a CUTLASS kernel there
# (measure.py --nvcc-baseline). $OUT gets real-<mode>.json (measure.py --json) and real-<mode>.log.
set -uo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
mkdir -p .cutlass && tar xJf .dev/cutlass.tar.xz -C .cutlass
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
extra=()
if [ "${NVCC:-0}" = 1 ]; then extra+=(--nvcc-baseline); fi
for mode in ${MODES:-instantiated}; do
  timeout "${LIMIT:-560}" python3 bench/real_code/measure.py --worktree --mode "$mode" -j "${JOBS:-18}" \
    --timeout "${FILE_TIMEOUT:-540}" --no-undecided "${extra[@]}" --json "$OUT/real-$mode.json" \
    2>&1 | tee "$OUT/real-$mode.log" | grep -v '^\[' || true
  extra=()
done
