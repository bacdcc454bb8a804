#!/usr/bin/env bash
# Build and run held-out CUDALibrarySamples cuBLASLt samples on the H200, one line per sample (exit
# status and output), to check what fusionlint says of them (the real-code held-out set; the tests'
# fixtures/cublaslt/held_out are written in their shape). Third-party code, never committed: put the
# samples under .corpus/held_out/ first (ignored), e.g. from a mirror of NVIDIA/CUDALibrarySamples:
#   git --git-dir=MIRROR archive HEAD cuBLASLt | tar x -C /tmp && mkdir -p .corpus/held_out &&
#   cp -r /tmp/cuBLASLt/{Common,LtPlanarComplex,LtNvfp4Matmul,LtMxfp8Matmul,LtIgemmTensor,LtSgemm} .corpus/held_out/
# and a variant without the planar layout:
#   cp -r .corpus/held_out/LtPlanarComplex .corpus/held_out/LtInterleavedC16F &&
#   sed -i '/CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET/,+1d' .corpus/held_out/LtInterleavedC16F/*.cu
# Run with the device tool, carry [".corpus"]: bash tools/h200_held_out.sh | tee $OUT/held_out.txt
set -uo pipefail
cd .corpus/held_out || exit 2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build() {
  d=$1
  nvcc -std=c++17 -O2 -arch=sm_90a -I Common -o "/tmp/$d" "$d"/main.cpp "$d"/*.cu Common/helpers.cpp -lcublasLt -lcublas \
    > "/tmp/$d.build" 2>&1 || echo "$d: BUILD FAILED: $(tail -3 "/tmp/$d.build" | tr '\n' ' ')"
}
export -f build
ls -d Lt* | xargs -P8 -I{} bash -c 'build {}'
for d in Lt*; do
  [ -x "/tmp/$d" ] || continue
  out=$(timeout 60 "/tmp/$d" 2>&1); rc=$?
  echo "$d: rc=$rc: $(echo "$out" | tr '\n' ' ' | cut -c1-300)"
done
