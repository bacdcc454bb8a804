#!/usr/bin/env bash
# The cuBLASLt shape sets (fusionlint.evidence.shapes_cublaslt) built (host code) and run on the GPU
# machine, in chunks, each chunk's record written as soon as it is done, so that a run cut short by the
# device's time limit keeps what it finished. Run from the repository root; results go to $OUT as one
# archive, shapes-records.tgz, rewritten after each chunk (the device brings back only a few files).
# Both sets are generated (SEED, COUNT configurations each): the mutation set's configurations
# (cNNNN) and draws from the measured table's space (sNNNN). The order of the programs: the space
# set's plain shape (a GPU verdict for every configuration), then every shape of its first FIRST
# configurations and of the mutation set's first FIRST, then the rest of both.
#   SEED (1) COUNT (300) FIRST (60) CHUNK (programs per record, 320) TIME_LIMIT (seconds after which
#   no new chunk starts, 480)
# Back on the CPU machine, unpack the archive and score the shapes against the records:
#   python3 -m fusionlint.evidence.shapes_cublaslt compare --manifest R/space-manifest.json \
#       --findings F --records R/shapes-*.json
# The run of 7 Dec 2026 (an H100; 1,920 programs: the space set's plain shape, every shape of the
# first 60 configurations of both sets, and 320 more) is kernels_ref/evidence/h100-shapes-cublaslt.json.gz.
set -euo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
SEED=${SEED:-1}; COUNT=${COUNT:-300}; FIRST=${FIRST:-60}; CHUNK=${CHUNK:-320}; TIME_LIMIT=${TIME_LIMIT:-480}
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
for source in space mutations; do
  python3 -m fusionlint.evidence.shapes_cublaslt generate --source "$source" --seed "$SEED" --count "$COUNT" \
    --out "/tmp/shapes-$source"
  mkdir -p /tmp/shape-records
  cp "/tmp/shapes-$source/manifest.json" "/tmp/shape-records/$source-manifest.json"
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
    python3 -m fusionlint.evidence.harness --host-only -j "$(nproc)" --out "/tmp/shape-records/shapes-$(basename "$list")" \
    $(cat "$list")
  tar czf "$OUT/shapes-records.tgz" -C /tmp/shape-records .
  echo "$(( $(date +%s) - start )) s"
done
