#!/usr/bin/env bash
# Second device call of the 2026-12-05 session (real-code checks): the null-bias probe
# (tools/probe_null_bias.cu) and `fusionlint verify` on the held-out bitsandbytes/llm.c files again,
# with verify's lint now checking FL127 against the support table and its probes passing a null
# pointer where the code does (tools/h200_held_out_verify.sh). Carry .whl and .corpus.
set -uo pipefail
OUT=${OUT:?}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
(nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe_null_bias tools/probe_null_bias.cu -lcublasLt > "$OUT/probe_null_bias.txt" 2>&1 \
  && /tmp/probe_null_bias >> "$OUT/probe_null_bias.txt" 2>&1) &
timeout 300 bash tools/h200_held_out_verify.sh > "$OUT/verify_stdout.txt" 2>&1
wait
