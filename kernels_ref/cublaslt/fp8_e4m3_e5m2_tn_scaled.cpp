// Reference: FP8 GEMM on Hopper (sm_90), E4M3 x E5M2 -> BF16, TN, column-major:
// D[m x n] = a_scale * b_scale * (A^T * B), with A (E4M3) stored k x m and B (E5M2) stored k x n
// (both K-major, which FP8 on sm_90 requires). Per-tensor scales are floats in device memory, one
// allocation each (A_SCALE_POINTER, B_SCALE_POINTER). Compute CUBLAS_COMPUTE_32F, scale type
// CUDA_R_32F; C and D are CUDA_R_16BF, C is D (in place, beta = 0). Checked at m=n=128, k=64
// against a host reference, then timed at m=n=k=8192.
#include <cstdint>
#include "../../fixtures/cublaslt/probe.h"

// A device buffer for the timed run: its values don't matter, only that they are not all zero.
static void *device_buffer(size_t bytes) {
  void *p = nullptr;
  cudaMalloc(&p, bytes);
  cudaMemset(p, 0x3c, bytes);
  return p;
}

static void run(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, bool timed) {
  // TN storage: A is k x m (lda = k), B is k x n (ldb = k), D is m x n (ldd = m). FP8 also needs
  // k, lda and ldb to be multiples of 16 and 16-byte aligned pointers.
  const int64_t lda = k, ldb = k, ldd = m;
  ProbeMatrix A{}, B{}, D{};
  if (timed) {
    A.dev = device_buffer(k * m * sizeof(__nv_fp8_e4m3));
    B.dev = device_buffer(k * n * sizeof(__nv_fp8_e5m2));
    D.dev = device_buffer(m * n * sizeof(__nv_bfloat16));
  } else {
    A = probe_matrix(CUDA_R_8F_E4M3, k, m, lda, 1);
    B = probe_matrix(CUDA_R_8F_E5M2, k, n, ldb, 2);
    D = probe_matrix(CUDA_R_16BF, m, n, ldd, 3);
  }
  // Dequantization scales: one device allocation per scale.
  const float a_scale_value = 2.0f, b_scale_value = 0.25f;
  const void *a_scale = probe_device_copy(&a_scale_value, sizeof(a_scale_value));
  const void *b_scale = probe_device_copy(&b_scale_value, sizeof(b_scale_value));
  const uint64_t workspace_size = 32ull << 20;  // 32 MiB, the recommended size on Hopper
  void *workspace = probe_workspace(workspace_size);

  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale)));

  cublasLtMatrixLayout_t la, lb, ld;
  PROBE(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, m, lda));
  PROBE(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E5M2, k, n, ldb));
  PROBE(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, ldd));  // also C's layout

  cublasLtMatmulPreference_t pref;
  PROBE(cublasLtMatmulPreferenceCreate(&pref));
  PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
                                             sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t result = {};
  int count = 0;
  PROBE(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &result, &count));
  const cublasLtMatmulAlgo_t *algo = count > 0 ? &result.algo : nullptr;

  const float alpha = 1.0f, beta = 0.0f;
  PROBE(cublasLtMatmul(lt, desc, &alpha, A.dev, la, B.dev, lb, &beta, D.dev, ld, D.dev, ld, algo, workspace,
                       workspace_size, 0));
  if (timed) {
    probe_tflops(m, n, k, [&] {
      cublasLtMatmul(lt, desc, &alpha, A.dev, la, B.dev, lb, &beta, D.dev, ld, D.dev, ld, algo, workspace,
                     workspace_size, 0);
    });
  } else {
    ProbeCheck check;
    check.transa = true;
    check.A = &A, check.B = &B, check.D = &D;
    check.scale = a_scale_value * b_scale_value;
    check.tolerance = 0.1;  // the k/8 inputs are exact in E4M3 and E5M2; BF16 rounding of D
    probe_verify(check);
  }

  cudaDeviceSynchronize();
  PROBE(cublasLtMatmulPreferenceDestroy(pref));
  PROBE(cublasLtMatrixLayoutDestroy(la));
  PROBE(cublasLtMatrixLayoutDestroy(lb));
  PROBE(cublasLtMatrixLayoutDestroy(ld));
  PROBE(cublasLtMatmulDescDestroy(desc));
  cudaFree(workspace);
  cudaFree(const_cast<void *>(a_scale));
  cudaFree(const_cast<void *>(b_scale));
  cudaFree(A.dev);
  cudaFree(B.dev);
  cudaFree(D.dev);
}

int main() {
  cublasLtHandle_t lt;
  PROBE(cublasLtCreate(&lt));
  run(lt, 128, 128, 64, false);
  run(lt, 8192, 8192, 8192, true);
  PROBE(cublasLtDestroy(lt));
  return 0;
}
