#!/usr/bin/env bash
# The H200 runs of the cuBLASLt sweep, mutations and verify, one step per device call (each well under the 10-minute limit).
# Run from the repository root on the GPU machine; results go to $OUT (the device tool brings
# them back). Ran on 2 Dec 2026 (sweep, mutations, verify; results in kernels_ref/evidence/).
#
#   tools/h200_cublaslt_sweep.sh sweep      the cuBLASLt support table and its joint-space check
#                                    (python3, nvcc, cuBLASLt: nothing else)
#   tools/h200_cublaslt_sweep.sh mutations  the seeded random-mutation programs built (host code) and run
#   tools/h200_cublaslt_sweep.sh verify     `fusionlint verify` over the same programs; needs
#                                    fusionlint's dependencies as wheels in .whl/ (carry .whl):
#     echo /.whl/ >> .git/info/exclude   # (already in .gitignore)
#     python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#       -d .whl libclang networkx jsonschema jsonschema-specifications referencing rpds-py attrs pyyaml
#
# Back on the CPU machine:
#   cp OUT/support/cublaslt-*.json.gz rulesets/hopper-sm90/support/
#   cp OUT/support/*.joint-check.json kernels_ref/evidence/
#   python3 tools/rules_vs_table.py rulesets/hopper-sm90/support/cublaslt-*.json.gz --gaps
#   python3 -m fusionlint.evidence.mutations_cublaslt generate --seed 1 --count 640 --out /tmp/mut
#   fusionlint check --no-cache --exit-zero --output-format json -I fusionlint/evidence/include /tmp/mut \
#       > /tmp/mut-findings.json
#   python3 -m fusionlint.evidence.mutations_cublaslt evaluate --manifest /tmp/mut/manifest.json \
#       --truth OUT/h200-mutations-cublaslt.json --findings /tmp/mut-findings.json --markdown /tmp/mut.md
set -euo pipefail
step=${1:?usage: tools/h200_cublaslt_sweep.sh sweep|mutations|verify}
OUT=${OUT:?set OUT to the directory the results go to}
SEED=${SEED:-1}
COUNT=${COUNT:-640}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
case "$step" in
  sweep)
    mkdir -p "$OUT/support"
    # resumes from the committed checkpoint: only stages whose plan changed since are measured
    cp kernels_ref/evidence/h200-sweep-checkpoint.json.gz "$OUT/support/checkpoint.json.gz"
    python3 -m fusionlint.evidence.sweep --out "$OUT/support" --joint 4000 -j "$(nproc)" \
      --resume "$OUT/support/checkpoint.json.gz" --time-limit 540 2>&1 | tee "$OUT/support/sweep-log.txt"
    ;;
  mutations)
    python3 -m fusionlint.evidence.mutations_cublaslt generate --seed "$SEED" --count "$COUNT" --out /tmp/mut
    FUSIONLINT_EVIDENCE_INCLUDES="$PWD/fusionlint/evidence/include" \
      python3 -m fusionlint.evidence.harness --host-only -j "$(nproc)" --out "$OUT/h200-mutations-cublaslt" \
      /tmp/mut/*.cpp
    cp /tmp/mut/manifest.json "$OUT/mutations-manifest.json"
    ;;
  verify)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD
    python3 -m fusionlint.evidence.mutations_cublaslt generate --seed "$SEED" --count "$COUNT" --out /tmp/mut
    python3 -m fusionlint.cli verify /tmp/mut -I "$PWD/fusionlint/evidence/include" -j "$(nproc)" --timeout 300 \
      --time-limit 540 --json "$OUT/h200-verify-mutations.json" > "$OUT/h200-verify-mutations.txt" || true
    tail -5 "$OUT/h200-verify-mutations.txt"
    ;;
  *)
    echo "unknown step: $step" >&2
    exit 2
    ;;
esac
