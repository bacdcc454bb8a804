#!/usr/bin/env bash
# tools/probe_alignment_offsets.cu built and run on the GPU machine, one process per case (a
# misaligned access is a sticky CUDA error); the lines go to $OUT/h200-alignment-offsets.txt (kernels_ref/evidence/h100-alignment-offsets.txt: the run of 7 Dec 2026, on an H100).
set -euo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe_alignment_offsets tools/probe_alignment_offsets.cu -lcublasLt
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  for t in 0 1 2 3; do for o in $(seq 0 8); do for p in 0 1 2 3; do echo "$t $o $p"; done; done; done |
    xargs -P8 -n3 sh -c '/tmp/probe_alignment_offsets "$0" "$1" "$2" || echo "ALIGN case $0 $1 $2: exit status $?"' |
    sort
} > "$OUT/h200-alignment-offsets.txt (kernels_ref/evidence/h100-alignment-offsets.txt: the run of 7 Dec 2026, on an H100)" 2>&1
grep -c ALIGN "$OUT/h200-alignment-offsets.txt (kernels_ref/evidence/h100-alignment-offsets.txt: the run of 7 Dec 2026, on an H100)"
