#!/usr/bin/env bash
# On the H200: `fusionlint verify` on the held-out real-code files of bench/real_code/manifest.json
# (groups heldout-*), so that what fusionlint says of them is checked against cuBLASLt itself:
# - bitsandbytes' igemmlt<8, 1> (csrc/ops.cu:387): FL127 from the support table (int8 in and out,
#   COMPUTE_32I, scale 32F, POINTER_MODE ALPHA_DEVICE_VECTOR_BETA_ZERO -> NOT_SUPPORTED). The table
#   measured the pointer mode at its base layout; bitsandbytes calls with TRANSA=T. Not yet run.
# - llm.c's matmul_forward3 with has_bias false: BIAS_POINTER set to a null pointer with the DEFAULT
#   epilogue, which fusionlint now takes as no bias (no finding). verify builds and runs a probe of
#   every configuration it extracts and compares the status with what the linter says.
# - TVM's CallLtIgemm (COL32 / COL4_4R2_8C orders: FL116) and Paddle's 2022 fused GEMM epilogue op
#   (COMPUTE_32F with a CUDA_R_16F scale for T = float16: FL105), found by this session's changes.
# Carry .whl (fusionlint's dependencies as wheels) and .corpus (bench/real_code/fetch.py).
# $OUT gets held-out-verify.json and the log.
set -uo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:. PYTHONUNBUFFERED=1
C=.corpus
python3 -c "import sys; from fusionlint.cli import main; sys.exit(main())" verify -v -j 16 --json "$OUT/held-out-verify.json" \
  -I $C/bitsandbytes-foundation/bitsandbytes/csrc $C/bitsandbytes-foundation/bitsandbytes/csrc/ops.cu \
  $C/karpathy/llm.c/dev/cuda/matmul_forward.cu $C/apache/tvm/src/runtime/contrib/cublas/cublas.cc \
  $C/PaddlePaddle/Paddle/paddle/fluid/operators/fused/fused_gemm_epilogue_op.cu 2>&1 | tee "$OUT/held-out-verify.log"
