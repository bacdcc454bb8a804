#!/usr/bin/env bash
# On the H200 (real-code device run of the session of 2026-12-05 evening): `fusionlint verify` on the
# CUTLASS GEMMs that fusionlint now reads from code the build leaves out (frontend/cutlass/source/left_out_code.py):
# - FBGEMM's i8i8bf16.cu: i8i8bf16sm90a_impl<64,128,128,2,1,1> and <128,128,128,1,2,1>, instantiated
#   only under `#ifdef SMOOTHQUANT_SM90A` (lint clean: both must build and compute right), and the
#   three CUTLASS 2.x instances of the `#else` arm;
# - fixtures/cutlass/extract/left_out_instances.cu: the same shape, the 64-row cooperative instance
#   FL303 (must fail to build), the 128-row one clean (must work).
# Carry .whl (fusionlint's dependencies, and cutlass-headers.tgz: .cutlass/include and
# .cutlass/tools/util/include of the nvidia-cutlass 4.2 wheel, packed to fit the carry limit) and the
# FBGEMM file under .corpus/. $OUT gets the verify JSON and log.
set -uo pipefail
OUT=${OUT:?set OUT to the directory the results go to}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site:. PYTHONUNBUFFERED=1
[ -d .cutlass/include ] || tar xzf .whl/cutlass-headers.tgz || exit 2
FL=(python3 -c "import sys; from fusionlint.cli import main; sys.exit(main())")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
nvcc --version | tail -2 | tee -a "$OUT/device.txt"
"${FL[@]}" verify -v -j 16 --time-limit 500 --json "$OUT/left-out-verify.json" \
  -I .cutlass/include -I .cutlass/tools/util/include \
  .corpus/pytorch/FBGEMM/fbgemm_gpu/experimental/gen_ai/src/quantize/cutlass_extensions/i8i8bf16.cu \
  fixtures/cutlass/extract/left_out_instances.cu 2>&1 | tee "$OUT/left-out-verify.log" | tail -40
