// Does cuBLASLt accept apex's gemm_bgradb_lt configuration (BGRADB, COL order, bias pointer set)?
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
int main() {
  cublasLtHandle_t lt; cublasLtCreate(&lt);
  int m = 1024, n = 512, k = 768;
  void *A, *B, *C, *bias, *ws; size_t wss = 1 << 22;
  cudaMalloc(&A, 64 << 20); cudaMalloc(&B, 64 << 20); cudaMalloc(&C, 64 << 20); cudaMalloc(&bias, 1 << 20); cudaMalloc(&ws, wss);
  cudaDataType_t types[] = {CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F};
  const char *tn[] = {"16F", "16BF", "32F"};
  cublasLtEpilogue_t epis[] = {CUBLASLT_EPILOGUE_BGRADB, CUBLASLT_EPILOGUE_BGRADA};
  const char *en[] = {"BGRADB", "BGRADA"};
  for (int e = 0; e < 2; ++e)
  for (int t = 0; t < 3; ++t)
  for (int ta = 0; ta < 2; ++ta)
  for (int tb = 0; tb < 2; ++tb) {
    cublasOperation_t transa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, transb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDesc_t d; cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb));
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epis[e], sizeof(epis[e]));
    cublasLtMatrixLayout_t la, lb, lc;
    int lda = transa == CUBLAS_OP_N ? m : k, ldb = transb == CUBLAS_OP_N ? k : n;
    cublasLtMatrixLayoutCreate(&la, types[t], transa == CUBLAS_OP_N ? m : k, transa == CUBLAS_OP_N ? k : m, lda);
    cublasLtMatrixLayoutCreate(&lb, types[t], transb == CUBLAS_OP_N ? k : n, transb == CUBLAS_OP_N ? n : k, ldb);
    cublasLtMatrixLayoutCreate(&lc, types[t], m, n, m);
    cublasLtMatmulPreference_t p; cublasLtMatmulPreferenceCreate(&p);
    cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wss, sizeof(wss));
    cublasLtMatmulHeuristicResult_t r; int got = 0;
    cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, p, 1, &r, &got);
    float alpha = 1, beta = 0;
    cublasStatus_t s2 = CUBLAS_STATUS_NOT_SUPPORTED;
    if (s == CUBLAS_STATUS_SUCCESS && got) s2 = cublasLtMatmul(lt, d, &alpha, A, la, B, lb, &beta, C, lc, C, lc, NULL, ws, wss, 0);
    cudaError_t ce = cudaDeviceSynchronize();
    printf("%s %s transa=%c transb=%c heuristic=%d results=%d matmul(NULL algo)=%d sync=%d\n", en[e], tn[t], ta ? 'T' : 'N', tb ? 'T' : 'N', (int)s, got, (int)s2, (int)ce);
    cublasLtMatmulPreferenceDestroy(p); cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc); cublasLtMatmulDescDestroy(d);
  }
  return 0;
}
