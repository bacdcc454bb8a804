#!/usr/bin/env bash
# One device call of the 2026-12-05 session (real-code checks): the int8 pointer-mode probe
# (tools/probe_int8_pointer_modes.cu), the Paddle scale-type probe (tools/probe_paddle_scale_type.cu), the held-out CUDALibrarySamples (tools/h200_held_out.sh) and
# `fusionlint verify` on the held-out bitsandbytes/llm.c files (tools/h200_held_out_verify.sh).
# Carry .whl and .corpus. $OUT gets probe_int8.txt, held_out.txt, held-out-verify.{json,log}.
set -uo pipefail
OUT=${OUT:?}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
(nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe_int8 tools/probe_int8_pointer_modes.cu -lcublasLt > "$OUT/probe_int8.txt" 2>&1 \
  && /tmp/probe_int8 >> "$OUT/probe_int8.txt" 2>&1) &
(nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe_scale tools/probe_paddle_scale_type.cu -lcublasLt > "$OUT/probe_scale.txt" 2>&1 \
  && /tmp/probe_scale >> "$OUT/probe_scale.txt" 2>&1) &
(bash tools/h200_held_out.sh > "$OUT/held_out.txt" 2>&1) &
timeout 420 bash tools/h200_held_out_verify.sh > "$OUT/verify_stdout.txt" 2>&1
wait
