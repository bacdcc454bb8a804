// Reference: BF16 GEMM, TN, FP32 compute, with a BIAS epilogue (bias in BF16) on Hopper.
// D[m x n] = A'[m x k] * B[k x n] + bias[m] (broadcast over columns), column-major.
// Lints clean; on an H200 it runs and matches a host reference (see kernels_ref/evidence/).
#include <cstdint>
#include <cuda_bf16.h>
#include "../../fixtures/cublaslt/probe.h"

int main() {
  const int m = 256, n = 128, k = 64;
  std::vector<float> hA = probe_random((size_t)k * m, 11), hB = probe_random((size_t)k * n, 12);
  std::vector<float> hBias = probe_random(m, 13), want((size_t)m * n), got((size_t)m * n);
  std::vector<__nv_bfloat16> bA(hA.size()), bB(hB.size()), bBias(m), bD((size_t)m * n);
  for (size_t i = 0; i < hA.size(); ++i) bA[i] = __float2bfloat16(hA[i]);
  for (size_t i = 0; i < hB.size(); ++i) bB[i] = __float2bfloat16(hB[i]);
  for (int i = 0; i < m; ++i) bBias[i] = __float2bfloat16(hBias[i]);
  __nv_bfloat16 *A, *B, *D, *bias;
  void *workspace;
  const size_t workspace_size = 32u << 20;
  cudaMalloc(&A, bA.size() * sizeof(__nv_bfloat16));
  cudaMalloc(&B, bB.size() * sizeof(__nv_bfloat16));
  cudaMalloc(&D, bD.size() * sizeof(__nv_bfloat16));
  cudaMalloc(&bias, m * sizeof(__nv_bfloat16));
  cudaMalloc(&workspace, workspace_size);
  cudaMemcpy(A, bA.data(), bA.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice);
  cudaMemcpy(B, bB.data(), bB.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice);
  cudaMemcpy(bias, bBias.data(), m * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice);

  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  const int32_t bias_type = CUDA_R_16BF;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));

  cublasLtMatrixLayout_t la, lb, ld;
  PROBE(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, m, k));
  PROBE(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
  PROBE(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));
  cublasLtMatmulPreference_t pref;
  PROBE(cublasLtMatmulPreferenceCreate(&pref));
  PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
                                             sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t result = {};
  int count = 0;
  PROBE(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &result, &count));
  const float alpha = 1.0f, beta = 0.0f;
  PROBE(cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &result.algo, workspace,
                       workspace_size, 0));
  cudaMemcpy(bD.data(), D, bD.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < got.size(); ++i) got[i] = __bfloat162float(bD[i]);
  probe_reference(true, false, m, n, k, hA, k, hB, k, want, m);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) want[i + (size_t)j * m] += hBias[i];
  probe_compare(got, want, 0.1);
  return 0;
}
