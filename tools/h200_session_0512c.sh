#!/usr/bin/env bash
# On the H200 (third device run of 2026-12-05 for the real-code corpus): `fusionlint verify` on the real-code files
# whose findings or configurations this session's front-end changes made new, so that what the
# linter now says of them is checked against cuBLASLt itself:
# - onnxruntime's gemm_float8.cu: its ToCudaDataType switch (case labels of the ONNX header, found
#   nowhere) now parses; FL127 for A CUDA_R_32F with B CUDA_R_16F (A and B types are run-time
#   alternatives), and no finding for the scale type chosen by a constant of the missing header;
# - TVM's cublas.cc, read past its relative include of a missing header for the first time;
# - TransformerEngine's cublaslt_gemm.cu: four entry points and the matmul after the heuristic;
# - (set "pytorch") PyTorch's CUDABlas.cpp: FL127 at scaled_gemm's heuristic (A/B scale pointers
#   set) when `transa` is 'n'.
# Carry .whl and .corpus. $OUT gets <set>-verify.json and the log.
set -uo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
SET=${1:-heldout}
# (pytorch: by default the configurations of scaled_gemm as this machine numbers them, 149-166 of 166,
# the six FL127 ones among them; CONFIGS= for all)
CONFIGS=${CONFIGS-$(for n in $(seq 149 166); do printf -- "--config %s " "$n"; done)}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:. PYTHONUNBUFFERED=1
C=.corpus
FL=(python3 -c "import sys; from fusionlint.cli import main; sys.exit(main())")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/$SET-device.txt"
if [ "$SET" = pytorch ]; then
  "${FL[@]}" verify -v -j 16 --time-limit 500 --json "$OUT/$SET-verify.json" -I $C/pytorch/pytorch/aten/src $CONFIGS \
    $C/pytorch/pytorch/aten/src/ATen/cuda/CUDABlas.cpp 2>&1 | tee "$OUT/$SET-verify.log" | tail -40
else
  T=$C/NVIDIA/TransformerEngine
  "${FL[@]}" verify -v -j 16 --time-limit 500 --json "$OUT/$SET-verify.json" \
    -I $T/transformer_engine/common/include -I $T/transformer_engine/common -I $T \
    $C/microsoft/onnxruntime/onnxruntime/contrib_ops/cuda/math/gemm_float8.cu \
    $C/apache/tvm/src/runtime/contrib/cublas/cublas.cc \
    $T/transformer_engine/common/gemm/cublaslt_gemm.cu 2>&1 | tee "$OUT/$SET-verify.log" | tail -40
fi
