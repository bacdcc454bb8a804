#!/usr/bin/env bash
# Record cuBLASLt API traces (log level 5) on the GPU machine for `fusionlint trace`:
# every cuBLASLt program of kernels_ref/ and fixtures/cublaslt/rules/, and the PyTorch script
# fixtures/trace/torch_gemms.py (default BLAS choice, then cuBLASLt preferred). Writes
# $OUT/h200-traces.tar.gz: logs/<program>.log, logs/torch_gemms*.log and the harness record.
set -uo pipefail
OUT=${OUT:?set OUT}
work=$(mktemp -d)
mkdir -p "$work/logs"
FUSIONLINT_EVIDENCE_TRACE_DIR="$work/logs" python3 -m fusionlint.evidence.harness -j "$(nproc)" \
  --out "$work/logs/h200-traced-programs" kernels_ref/cublaslt/*.cpp fixtures/cublaslt/rules/*.cpp
for pref in default cublaslt; do
  CUBLASLT_LOG_LEVEL=5 CUBLASLT_LOG_FILE="$work/logs/torch_gemms-$pref.log" \
    python3 fixtures/trace/torch_gemms.py $pref > "$work/logs/torch_gemms-$pref.out" 2>&1
  cat "$work/logs/torch_gemms-$pref.out"
done
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" >> "$work/logs/versions.txt" 2>&1
ls "$work/logs" | wc -l; du -sh "$work/logs"
tar -C "$work" -czf "$OUT/h200-traces.tar.gz" logs
