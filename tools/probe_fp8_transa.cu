// Device probe for PyTorch's scaled_gemm FL127: COMPUTE_32F, scale 32F, A/B scale pointers
// set, A/B of each type below, C/D BF16, TRANSB = N, TRANSA = N or T. What does the heuristic say?
// Build: nvcc -O2 -arch=sm_90a -o probe_fp8_transa tools/probe_fp8_transa.cu -lcublasLt -lcublas
#include <cstdio>
#include <cublasLt.h>
#include <cuda_runtime.h>

static const char* status(cublasStatus_t s) { return cublasGetStatusString(s); }

int main() {
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  float* scale = nullptr;
  cudaMalloc(&scale, 4 * sizeof(float));
  const int n = 256;
  const cudaDataType_t types[] = {CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F};
  const char* names[] = {"E4M3", "E5M2", "16BF", "16F", "32F"};
  for (int ti = 0; ti < 5; ++ti) {
    for (int transa = 0; transa < 2; ++transa) {
      cublasLtMatmulDesc_t desc;
      cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
      cublasOperation_t ta = transa ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
      const void* sa = scale; const void* sb = scale + 1;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof(sa));
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof(sb));
      cublasLtMatrixLayout_t la, lb, lc;
      cublasLtMatrixLayoutCreate(&la, types[ti], n, n, n);
      cublasLtMatrixLayoutCreate(&lb, types[ti], n, n, n);
      cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, n, n);
      cublasLtMatmulPreference_t pref;
      cublasLtMatmulPreferenceCreate(&pref);
      size_t ws = 1 << 22;
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
      cublasLtMatmulHeuristicResult_t r = {};
      int found = 0;
      cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &r, &found);
      printf("A/B %-4s TRANSA=%c scale pointers A,B: heuristic %s, %d algorithm(s)\n", names[ti], transa ? 'T' : 'N',
             status(s), found);
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatmulDescDestroy(desc);
    }
  }
  cudaFree(scale);
  cublasLtDestroy(lt);
  return 0;
}
