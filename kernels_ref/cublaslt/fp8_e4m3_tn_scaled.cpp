// Reference: FP8 GEMM on Hopper, E4M3 x E4M3 -> BF16, TN (both operands K-major), FP32
// compute, per-tensor A/B scale pointers (device memory). D = (a_scale*b_scale) * A' * B.
// Lints clean; on an H200 it runs and matches a host reference (see kernels_ref/evidence/).
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include "../../fixtures/cublaslt/probe.h"

int main() {
  const int m = 128, n = 128, k = 64;
  std::vector<float> hA = probe_random((size_t)k * m, 21), hB = probe_random((size_t)k * n, 22);
  std::vector<float> want((size_t)m * n), got((size_t)m * n);
  std::vector<__nv_fp8_e4m3> qA(hA.size()), qB(hB.size());
  for (size_t i = 0; i < hA.size(); ++i) qA[i] = __nv_fp8_e4m3(hA[i]);
  for (size_t i = 0; i < hB.size(); ++i) qB[i] = __nv_fp8_e4m3(hB[i]);
  std::vector<__nv_bfloat16> bD((size_t)m * n);
  const float host_scales[2] = {2.0f, 0.5f};
  __nv_fp8_e4m3 *A, *B;
  __nv_bfloat16 *D;
  float *a_scale_dev, *b_scale_dev;  // separate allocations: see the note below
  void *workspace;
  const size_t workspace_size = 32u << 20;
  cudaMalloc(&A, qA.size());
  cudaMalloc(&B, qB.size());
  cudaMalloc(&D, bD.size() * sizeof(__nv_bfloat16));
  cudaMalloc(&a_scale_dev, sizeof(float));
  cudaMalloc(&b_scale_dev, sizeof(float));
  cudaMalloc(&workspace, workspace_size);
  cudaMemcpy(A, qA.data(), qA.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(B, qB.data(), qB.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(a_scale_dev, &host_scales[0], sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b_scale_dev, &host_scales[1], sizeof(float), cudaMemcpyHostToDevice);
  // Observed on the H200 (cuBLASLt 13.1): with both scales in one allocation (b_scale =
  // scales + 1, 4-byte aligned) the heuristic succeeds but cublasLtMatmul returns
  // CUBLAS_STATUS_NOT_SUPPORTED. One allocation per scale works.
  const float *a_scale = a_scale_dev, *b_scale = b_scale_dev;

  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale)));

  cublasLtMatrixLayout_t la, lb, lc, ld;
  PROBE(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, m, k));
  PROBE(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, n, k));
  PROBE(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, m));
  PROBE(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));
  cublasLtMatmulPreference_t pref;
  PROBE(cublasLtMatmulPreferenceCreate(&pref));
  PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
                                             sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t result = {};
  int count = 0;
  PROBE(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 1, &result, &count));
  const float alpha = 1.0f, beta = 0.0f;
  PROBE(cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, D, lc, D, ld, &result.algo, workspace,
                       workspace_size, 0));
  cudaMemcpy(bD.data(), D, bD.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost);
  for (size_t i = 0; i < got.size(); ++i) got[i] = __bfloat162float(bD[i]);
  probe_reference(true, false, m, n, k, hA, k, hB, k, want, m);  // inputs are exact in E4M3
  for (float &w : want) w *= host_scales[0] * host_scales[1];
  probe_compare(got, want, 0.1);
  return 0;
}
