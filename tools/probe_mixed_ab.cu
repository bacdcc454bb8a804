// Device probe for onnxruntime's gemm_float8.cu FL127: A CUDA_R_32F with B CUDA_R_16F
// (two independent run-time dtype choices), every compute type and C/D type below, scale type as the
// compute type needs, TRANSA = T, TRANSB = N, no scale pointers. What does the heuristic say?
// Build: nvcc -O2 -arch=sm_90a -o probe_mixed_ab tools/probe_mixed_ab.cu -lcublasLt -lcublas
#include <cstdio>
#include <cublasLt.h>

int main() {
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  const int n = 256;
  struct { cublasComputeType_t c; cudaDataType_t s; const char* name; } computes[] = {
      {CUBLAS_COMPUTE_32F, CUDA_R_32F, "32F"}, {CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, "32F_FAST_TF32"},
      {CUBLAS_COMPUTE_32F_FAST_16F, CUDA_R_32F, "32F_FAST_16F"}, {CUBLAS_COMPUTE_32F_FAST_16BF, CUDA_R_32F, "32F_FAST_16BF"},
      {CUBLAS_COMPUTE_16F, CUDA_R_16F, "16F"}};
  const cudaDataType_t outs[] = {CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF};
  const char* out_names[] = {"32F", "16F", "16BF"};
  int ok = 0, all = 0;
  for (auto& k : computes) {
    for (int o = 0; o < 3; ++o) {
      cublasLtMatmulDesc_t desc;
      cublasLtMatmulDescCreate(&desc, k.c, k.s);
      cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
      cublasLtMatrixLayout_t la, lb, lc;
      cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, n, n);
      cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, n, n, n);
      cublasLtMatrixLayoutCreate(&lc, outs[o], n, n, n);
      cublasLtMatmulPreference_t pref;
      cublasLtMatmulPreferenceCreate(&pref);
      size_t ws = 1 << 22;
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
      cublasLtMatmulHeuristicResult_t r = {};
      int found = 0;
      cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &r, &found);
      printf("A 32F B 16F C/D %-4s compute %-14s: heuristic %s, %d algorithm(s)\n", out_names[o], k.name,
             cublasGetStatusString(s), found);
      ok += s == CUBLAS_STATUS_SUCCESS && found > 0;
      ++all;
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatmulDescDestroy(desc);
    }
  }
  printf("%d of %d supported\n", ok, all);
  cublasLtDestroy(lt);
  return 0;
}
