// Reference: BF16 GEMM on Hopper (sm_90), TN, column-major, with the RELU_AUX epilogue (the
// forward pass that keeps the ReLU mask for the backward pass): D[m x n] = ReLU(A^T * B), and the
// aux buffer receives a bit-mask with one bit per element of D. Its ld (an int64_t) counts bits and
// must be a multiple of 128 and >= m; here aux ld = m (128 and 8192), so the mask takes m*n/8 bytes.
// A, B, C and D are CUDA_R_16BF; compute CUBLAS_COMPUTE_32F, scale type CUDA_R_32F; C is D (in
// place, beta = 0). Checked at m=n=128, k=64 against a host reference, then timed at m=n=k=8192.
#include <bitset>
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
  // TN storage: A is k x m (lda = k), B is k x n (ldb = k), D is m x n (ldd = m).
  const int64_t lda = k, ldb = k, ldd = m;
  const int64_t aux_ld = m;  // in bits: a multiple of 128, >= m
  const size_t aux_bytes = aux_ld * n / 8;
  ProbeMatrix A{}, B{}, D{};
  if (timed) {
    A.dev = device_buffer(k * m * sizeof(__nv_bfloat16));
    B.dev = device_buffer(k * n * sizeof(__nv_bfloat16));
    D.dev = device_buffer(m * n * sizeof(__nv_bfloat16));
  } else {
    A = probe_matrix(CUDA_R_16BF, k, m, lda, 1);
    B = probe_matrix(CUDA_R_16BF, k, n, ldb, 2);
    D = probe_matrix(CUDA_R_16BF, m, n, ldd, 3);
  }
  void *aux = nullptr;
  cudaMalloc(&aux, aux_bytes);
  const uint64_t workspace_size = 32ull << 20;  // 32 MiB, the recommended size on Hopper
  void *workspace = probe_workspace(workspace_size);

  cublasLtMatmulDesc_t desc;
  PROBE(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const int32_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_AUX;
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));
  PROBE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld)));

  cublasLtMatrixLayout_t la, lb, ld;
  PROBE(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, m, lda));
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
    check.transa = true;
    check.A = &A, check.B = &B, check.D = &D;
    check.activation = PROBE_RELU;
    check.tolerance = 0.1;  // BF16 rounding of D (|D| < 32)
    probe_verify(check);
    // The mask has one bit per element of D (ld == m: no padding bits). Count its set bits against
    // the host's pre-activation values: on the H200 (cuBLASLt 13.1) a bit is set where A^T * B >= 0,
    // so bits_set = host_positive + host_zero.
    std::vector<unsigned char> mask(aux_bytes);
    cudaMemcpy(mask.data(), aux, aux_bytes, cudaMemcpyDeviceToHost);
    size_t bits = 0, positive = 0, zero = 0;
    for (unsigned char byte : mask) bits += std::bitset<8>(byte).count();
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += (double)A.at(p, i) * B.at(p, j);
        positive += acc > 0;
        zero += acc == 0;
      }
    std::printf("relu_mask bits_set=%zu host_positive=%zu host_zero=%zu\n", bits, positive, zero);
  }

  cudaDeviceSynchronize();
  PROBE(cublasLtMatmulPreferenceDestroy(pref));
  PROBE(cublasLtMatrixLayoutDestroy(la));
  PROBE(cublasLtMatrixLayoutDestroy(lb));
  PROBE(cublasLtMatrixLayoutDestroy(ld));
  PROBE(cublasLtMatmulDescDestroy(desc));
  cudaFree(workspace);
  cudaFree(aux);
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
