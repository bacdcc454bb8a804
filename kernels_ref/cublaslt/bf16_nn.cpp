// Reference: BF16 GEMM on Hopper (sm_90), NN, column-major: D[m x n] = A * B, with A stored m x k
// and B stored k x n (A M-major, B K-major). A, B, C and D are CUDA_R_16BF; compute
// CUBLAS_COMPUTE_32F, scale type CUDA_R_32F; C is D (in place, beta = 0). Checked at m=n=128, k=64
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
  // NN storage: A is m x k (lda = m), B is k x n (ldb = k), D is m x n (ldd = m).
  const int64_t lda = m, ldb = k, ldd = m;
  ProbeMatrix A{}, B{}, D{};
  if (timed) {
    A.dev = device_buffer(m * k * sizeof(__nv_bfloat16));
    B.dev = device_buffer(k * n * sizeof(__nv_bfloat16));
    D.dev = device_buffer(m * n * sizeof(__nv_bfloat16));
  } else {
    A = probe_matrix(CUDA_R_16BF, m, k, lda, 1);
    B = probe_matrix(CUDA_R_16BF, k, n, ldb, 2);
    D = probe_matrix(CUDA_R_16BF, m, n, ldd, 3);
  }
  const uint64_t workspace_size = 32ull << 20;  // 32 MiB, the recommended size on Hopper
  void *workspace = probe_workspace(workspace_size);

  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));

  cublasLtMatrixLayout_t la, lb, ld;
  PROBE(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, m, k, lda));
  PROBE(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, ldb));
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
    check.transa = false, check.transb = false;
    check.A = &A, check.B = &B, check.D = &D;
    check.tolerance = 0.1;  // BF16 rounding of D (|D| < 32)
    probe_verify(check);
  }

  cudaDeviceSynchronize();
  PROBE(cublasLtMatmulPreferenceDestroy(pref));
  PROBE(cublasLtMatrixLayoutDestroy(la));
  PROBE(cublasLtMatrixLayoutDestroy(lb));
  PROBE(cublasLtMatrixLayoutDestroy(ld));
  PROBE(cublasLtMatmulDescDestroy(desc));
  cudaFree(workspace);
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
