// Reference: strided-batched BF16 GEMM on Hopper (sm_90), TN, column-major: for each of 4 batches,
// D_b[m x n] = A_b^T * B_b + C_b. Every layout (A, B, C, D) carries BATCH_COUNT (int32_t, 4, the
// same on all four) and STRIDED_BATCH_OFFSET (int64_t, elements between consecutive matrices).
// A, B, C and D are CUDA_R_16BF; compute CUBLAS_COMPUTE_32F, scale type CUDA_R_32F; C is a separate
// buffer (out of place, beta = 1). Checked at m=n=128, k=64 against a host reference, then timed
// at m=n=k=8192.
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
  // TN storage per batch: A is k x m (lda = k), B is k x n (ldb = k), C and D are m x n (ld = m);
  // the matrices of one operand are packed one after another.
  const int32_t batch = 4;
  const int64_t lda = k, ldb = k, ldc = m, ldd = m;
  const int64_t stride_a = lda * m, stride_b = ldb * n, stride_c = ldc * n, stride_d = ldd * n;
  ProbeMatrix A{}, B{}, C{}, D{};
  if (timed) {
    A.dev = device_buffer(batch * stride_a * sizeof(__nv_bfloat16));
    B.dev = device_buffer(batch * stride_b * sizeof(__nv_bfloat16));
    C.dev = device_buffer(batch * stride_c * sizeof(__nv_bfloat16));
    D.dev = device_buffer(batch * stride_d * sizeof(__nv_bfloat16));
  } else {
    A = probe_matrix(CUDA_R_16BF, k, m, lda, 1, false, batch, stride_a);
    B = probe_matrix(CUDA_R_16BF, k, n, ldb, 2, false, batch, stride_b);
    C = probe_matrix(CUDA_R_16BF, m, n, ldc, 3, false, batch, stride_c);
    D = probe_matrix(CUDA_R_16BF, m, n, ldd, 4, false, batch, stride_d);
  }
  const uint64_t workspace_size = 32ull << 20;  // 32 MiB, the recommended size on Hopper
  void *workspace = probe_workspace(workspace_size);

  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));

  cublasLtMatrixLayout_t la, lb, lc, ld;
  PROBE(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, m, lda));
  PROBE(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
  PROBE(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride_a,
                                         sizeof(stride_a)));
  PROBE(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, ldb));
  PROBE(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
  PROBE(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride_b,
                                         sizeof(stride_b)));
  PROBE(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, ldc));
  PROBE(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
  PROBE(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride_c,
                                         sizeof(stride_c)));
  PROBE(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, ldd));
  PROBE(cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
  PROBE(cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride_d,
                                         sizeof(stride_d)));

  cublasLtMatmulPreference_t pref;
  PROBE(cublasLtMatmulPreferenceCreate(&pref));
  PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
                                             sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t result = {};
  int count = 0;
  PROBE(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 1, &result, &count));
  const cublasLtMatmulAlgo_t *algo = count > 0 ? &result.algo : nullptr;

  const float alpha = 1.0f, beta = 1.0f;
  PROBE(cublasLtMatmul(lt, desc, &alpha, A.dev, la, B.dev, lb, &beta, C.dev, lc, D.dev, ld, algo, workspace,
                       workspace_size, 0));
  if (timed) {
    // `batch` GEMMs of m x n x k each: report them as one (batch*m) x n x k problem.
    probe_tflops(batch * m, n, k, [&] {
      cublasLtMatmul(lt, desc, &alpha, A.dev, la, B.dev, lb, &beta, C.dev, lc, D.dev, ld, algo, workspace,
                     workspace_size, 0);
    });
  } else {
    ProbeCheck check;
    check.transa = true;
    check.A = &A, check.B = &B, check.C = &C, check.D = &D;
    check.beta = beta;
    check.tolerance = 0.1;  // BF16 rounding of D (|D| < 32)
    probe_verify(check);
  }

  cudaDeviceSynchronize();
  PROBE(cublasLtMatmulPreferenceDestroy(pref));
  PROBE(cublasLtMatrixLayoutDestroy(la));
  PROBE(cublasLtMatrixLayoutDestroy(lb));
  PROBE(cublasLtMatrixLayoutDestroy(lc));
  PROBE(cublasLtMatrixLayoutDestroy(ld));
  PROBE(cublasLtMatmulDescDestroy(desc));
  cudaFree(workspace);
  cudaFree(A.dev);
  cudaFree(B.dev);
  cudaFree(C.dev);
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
