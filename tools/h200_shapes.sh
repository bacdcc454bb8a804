#!/usr/bin/env bash
# The cuBLASLt shape sets (fusionlint.evidence.shapes_cublaslt) built (host code) and run on the GPU
# machine, in chunks, each chunk's record written as soon as it is done, so that a run cut short by the
# device's time limit keeps what it finished. Run from the repository root; results go to $OUT.
# Both sets are generated (SEED, COUNT configurations each): the mutation set's configurations
# (cNNNN) and draws from the measured table's space (sNNNN). The order of the programs: the space
# set's plain shape (a GPU verdict for every configuration), then every shape of its first FIRST
# configurations and of the mutation set's first FIRST, then the rest of both.
#   SEED (1) COUNT (300) FIRST (60) CHUNK (programs per record, 320) TIME_LIMIT (seconds after which
#   no new chunk starts, 480)
# Back on the CPU machine, score the shapes against the records:
#   python3 -m fusionlint.evidence.shapes_cublaslt compare --manifest OUT/space-manifest.json \
#       --findings F --records OUT/shapes-*.json
set -euo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
SEED=${SEED:-1}; COUNT=${COUNT:-300}; FIRST=${FIRST:-60}; CHUNK=${CHUNK:-320}; TIME_LIMIT=${TIME_LIMIT:-480}
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
for source in space mutations; do
  python3 -m fusionlint.evidence.shapes_cublaslt generate --source "$source" --seed "$SEED" --count "$COUNT" \
    --out "/tmp/shapes-$source"
  cp "/tmp/shapes-$source/manifest.json" "$OUT/$source-manifest.json"
done
first=$(printf '%04d' "$FIRST")
{
  ls /tmp/shapes-space/s*_plain.cpp
  ls /tmp/shapes-space/*.cpp /tmp/shapes-mutations/*.cpp | awk -F/ -v f="$first" '{ if (substr($NF, 2, 4) < f) print }' |
    grep -v 'shapes-space/s[0-9]*_plain.cpp'
  ls /tmp/shapes-space/*.cpp /tmp/shapes-mutations/*.cpp | awk -F/ -v f="$first" '{ if (substr($NF, 2, 4) >= f) print }' |
    grep -v 'shapes-space/s[0-9]*_plain.cpp'
} > /tmp/shapes-list
wc -l < /tmp/shapes-list
split -l "$CHUNK" -d -a 3 /tmp/shapes-list /tmp/shapes-chunk-
for list in /tmp/shapes-chunk-*; do
  if [ $(( $(date +%s) - start )) -gt "$TIME_LIMIT" ]; then
    echo "time limit: stopped before $(head -1 "$list")"; break
  fi
  FUSIONLINT_EVIDENCE_INCLUDES="$PWD/fusionlint/evidence/include" \
    python3 -m fusionlint.evidence.harness --host-only -j "$(nproc)" --out "$OUT/shapes-$(basename "$list")" $(cat "$list")
  echo "$(( $(date +%s) - start )) s"
done
