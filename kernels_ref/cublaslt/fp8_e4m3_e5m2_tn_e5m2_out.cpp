// Reference: FP8 GEMM on Hopper (sm_90) with an FP8 output, E4M3 x E5M2 -> E5M2, TN, column-major:
// D[m x n] = d_scale * (A^T * B), quantized to E5M2, with A (E4M3) stored k x m and B (E5M2) stored
// k x n (both K-major). An E5M2 D needs an E5M2 input (E4M3 x E4M3 -> E5M2 is not supported).
// C is CUDA_R_16BF (beta = 0, so it is not read). The D scale is a float in device memory and
// AMAX_D_POINTER receives max|D| taken before the D scale; A and B have no scale (1). Compute
// CUBLAS_COMPUTE_32F, scale type CUDA_R_32F. Checked at m=n=128, k=64 against a host reference
// (and amax printed beside the host value), then timed at m=n=k=8192.
#include <cmath>
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
  // TN storage: A is k x m (lda = k), B is k x n (ldb = k), C and D are m x n (ld = m). FP8 also
  // needs k, lda and ldb to be multiples of 16 and 16-byte aligned pointers.
  const int64_t lda = k, ldb = k, ldc = m, ldd = m;
  ProbeMatrix A{}, B{}, C{}, D{};
  if (timed) {
    A.dev = device_buffer(k * m * sizeof(__nv_fp8_e4m3));
    B.dev = device_buffer(k * n * sizeof(__nv_fp8_e5m2));
    C.dev = device_buffer(m * n * sizeof(__nv_bfloat16));
    D.dev = device_buffer(m * n * sizeof(__nv_fp8_e5m2));
  } else {
    A = probe_matrix(CUDA_R_8F_E4M3, k, m, lda, 1);
    B = probe_matrix(CUDA_R_8F_E5M2, k, n, ldb, 2);
    C = probe_matrix(CUDA_R_16BF, m, n, ldc, 3);
    D = probe_matrix(CUDA_R_8F_E5M2, m, n, ldd, 4);
  }
  // The quantization scale for D and the amax output: one device allocation each.
  const float d_scale_value = 0.25f, amax_init = 0.0f;
  const void *d_scale = probe_device_copy(&d_scale_value, sizeof(d_scale_value));
  void *amax_d = probe_device_copy(&amax_init, sizeof(amax_init));
  const uint64_t workspace_size = 32ull << 20;  // 32 MiB, the recommended size on Hopper
  void *workspace = probe_workspace(workspace_size);

  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &d_scale, sizeof(d_scale)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax_d, sizeof(amax_d)));

  cublasLtMatrixLayout_t la, lb, lc, ld;
  PROBE(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, m, lda));
  PROBE(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E5M2, k, n, ldb));
  PROBE(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, ldc));
  PROBE(cublasLtMatrixLayoutCreate(&ld, CUDA_R_8F_E5M2, m, n, ldd));

  cublasLtMatmulPreference_t pref;
  PROBE(cublasLtMatmulPreferenceCreate(&pref));
  PROBE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
                                             sizeof(workspace_size)));
  cublasLtMatmulHeuristicResult_t result = {};
  int count = 0;
  PROBE(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 1, &result, &count));
  const cublasLtMatmulAlgo_t *algo = count > 0 ? &result.algo : nullptr;

  const float alpha = 1.0f, beta = 0.0f;
  PROBE(cublasLtMatmul(lt, desc, &alpha, A.dev, la, B.dev, lb, &beta, C.dev, lc, D.dev, ld, algo, workspace,
                       workspace_size, 0));
  if (timed) {
    probe_tflops(m, n, k, [&] {
      cublasLtMatmul(lt, desc, &alpha, A.dev, la, B.dev, lb, &beta, C.dev, lc, D.dev, ld, algo, workspace,
                     workspace_size, 0);
    });
  } else {
    ProbeCheck check;
    check.transa = true;
    check.A = &A, check.B = &B, check.C = &C, check.D = &D;
    check.scale = d_scale_value;
    check.tolerance = 1.0;  // E5M2 rounding of D
    probe_verify(check);
    // amax is taken before the D scale (the next step's D scale is computed from it).
    float amax = NAN;
    cudaMemcpy(&amax, amax_d, sizeof(amax), cudaMemcpyDeviceToHost);
    double want = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += (double)A.at(p, i) * B.at(p, j);
        want = std::fmax(want, std::fabs(acc));
      }
    std::printf("amax_d %g host=%g\n", amax, want);
  }

  cudaDeviceSynchronize();
  PROBE(cublasLtMatmulPreferenceDestroy(pref));
  PROBE(cublasLtMatrixLayoutDestroy(la));
  PROBE(cublasLtMatrixLayoutDestroy(lb));
  PROBE(cublasLtMatrixLayoutDestroy(lc));
  PROBE(cublasLtMatrixLayoutDestroy(ld));
  PROBE(cublasLtMatmulDescDestroy(desc));
  cudaFree(workspace);
  cudaFree(const_cast<void *>(d_scale));
  cudaFree(amax_d);
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
