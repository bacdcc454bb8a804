#!/usr/bin/env bash
# The H200 run of the CUTLASS mutation set: the seeded random-mutation CUTLASS programs
# (fusionlint.evidence.mutations_cutlass) built for sm_90a and run, one slice per device call.
# Run from the repository root on the GPU machine, with .cutlass carried (the unpacked
# nvidia-cutlass 4.2 wheel: .cutlass/include and .cutlass/util/include); results go to $OUT (the
# device tool brings them back). Needs python3 and nvcc only.
#
#   tools/h200_cutlass_mutations.sh lint             fusionlint in instantiated mode (-I the CUTLASS headers)
#                                          over the same programs, -j nproc; needs fusionlint's
#                                          dependencies as wheels in .whl/ (carry .whl and .cutlass;
#                                          how to fill .whl: tools/h200_cublaslt_sweep.sh). OFFSET/COUNT
#                                          pick a slice (COUNT 0: all), STEP=k every k-th program.
#   tools/h200_cutlass_mutations.sh mutations        builds and runs programs OFFSET.. of the SEED/TOTAL set
#                                          (COUNT of them, default all) until TIME_LIMIT seconds
#                                          have passed; what is left is recorded as not built, and
#                                          the last line names the OFFSET of the next call:
#     OUT=... tools/h200_cutlass_mutations.sh mutations                    # the first slice
#     OUT=... OFFSET=<next offset> tools/h200_cutlass_mutations.sh mutations   # the rest, as often as needed
#
# Each nvcc of a 3.x program takes about a minute of one core, so one call (-j nproc, 450 s of
# builds) does roughly 100-150 of the 320 programs.
#
# Back on the CPU machine (the .json of every slice; a result beats "not built" of another slice):
#   python3 -m fusionlint.evidence.mutations_cutlass generate --seed 1 --count 320 --out /tmp/mutc
#   fusionlint check --no-cache --exit-zero --output-format json -I .cutlass/include \
#       -I .cutlass/util/include /tmp/mutc > /tmp/mutc-findings.json
#   python3 -m fusionlint.evidence.mutations_cutlass evaluate --manifest /tmp/mutc/manifest.json \
#       --truth OUT1/h200-mutations-cutlass*.json OUT2/h200-mutations-cutlass*.json \
#       --findings /tmp/mutc-findings.json --markdown /tmp/mutc.md
set -euo pipefail
step=${1:?usage: tools/h200_cutlass_mutations.sh mutations|lint}
OUT=${OUT:?set OUT to the directory the results go to}
SEED=${SEED:-1}
TOTAL=${TOTAL:-320}
OFFSET=${OFFSET:-0}
COUNT=${COUNT:-0}
TIME_LIMIT=${TIME_LIMIT:-450}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
case "$step" in
  mutations)
    for d in "$PWD/.cutlass/include/cutlass" "$PWD/.cutlass/util/include/cutlass/util"; do
      [ -d "$d" ] || { echo "missing $d: carry .cutlass (the unpacked nvidia-cutlass wheel)" >&2; exit 2; }
    done
    mkdir -p "$OUT"
    python3 -m fusionlint.evidence.mutations_cutlass generate --seed "$SEED" --count "$TOTAL" --out /tmp/mutc \
      > "$OUT/mutations-cutlass-distribution.json"
    name=h200-mutations-cutlass
    if [ "$OFFSET" -gt 0 ]; then name="$name-from$OFFSET"; fi
    # the harness's nvcc command line (-std=c++17 -O2 --expt-relaxed-constexpr -DNDEBUG -arch=sm_90a);
    # nvcc finds CUDA 13's libcu++ under include/cccl itself
    FUSIONLINT_EVIDENCE_INCLUDES="$PWD/.cutlass/include:$PWD/.cutlass/util/include" \
      python3 -m fusionlint.evidence.mutations_cutlass run --dir /tmp/mutc --offset "$OFFSET" --count "$COUNT" \
      -j "$(nproc)" --time-limit "$TIME_LIMIT" --out "$OUT/$name"
    cp /tmp/mutc/manifest.json "$OUT/mutations-cutlass-manifest.json"
    ;;
  lint)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD
    mkdir -p "$OUT"
    python3 -m fusionlint.evidence.mutations_cutlass generate --seed "$SEED" --count "$TOTAL" --out /tmp/mutc > /dev/null
    python3 - "$OFFSET" "${COUNT:-0}" "${STEP:-1}" > /tmp/mutc-files.txt <<'PY'
import json, sys
off, count, step = (int(a) for a in sys.argv[1:])
progs = ["/tmp/mutc/" + p["file"] for p in json.load(open("/tmp/mutc/manifest.json"))["programs"]]
sel = progs[off:off + count] if count else progs[off:]
print("\n".join(sel[::step]))
PY
    echo "linting $(wc -l < /tmp/mutc-files.txt) programs"
    start=$(date +%s)
    xargs -a /tmp/mutc-files.txt timeout "${TIME_LIMIT}" python3 -m fusionlint.cli check --no-cache --exit-zero \
      --output-format json -j "$(nproc)" -I "$PWD/.cutlass/include" -I "$PWD/.cutlass/util/include" \
      > "$OUT/lint-instantiated.json" 2> "$OUT/lint-instantiated.stderr" || echo "lint rc $?"
    echo "lint took $(( $(date +%s) - start )) s"
    tail -3 "$OUT/lint-instantiated.stderr"
    ;;
  *)
    echo "unknown step: $step" >&2
    exit 2
    ;;
esac
