// Device probe for the FL105 finding on Paddle's fused_gemm_epilogue_op.cu (2022, held out): for
// T = float16 it created the matmul descriptor with CUBLAS_COMPUTE_32F and scale type CUDA_R_16F
// (CUDA_R_16F A/B/C/D, epilogue BIAS/RELU_BIAS/GELU_BIAS); later Paddle keeps the scale type
// CUDA_R_32F. One line per case: heuristic status and count, matmul status (algo NULL).
// Build: nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe_scale tools/probe_paddle_scale_type.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cstdio>

struct Case {
  const char* name;
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cublasLtEpilogue_t epilogue;
};

int main() {
  const int m = 256, n = 256, k = 256;
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 2;
  void *A, *B, *D, *bias, *ws;
  cudaMalloc(&A, m * k * 8);
  cudaMalloc(&B, k * n * 8);
  cudaMalloc(&D, m * n * 8);
  cudaMalloc(&bias, m * 8);
  cudaMemset(A, 0, m * k * 8);
  cudaMemset(B, 0, k * n * 8);
  cudaMemset(bias, 0, m * 8);
  size_t wsBytes = 4 << 20;  // Paddle's workspace_size
  cudaMalloc(&ws, wsBytes);
  const Case cases[] = {
      {"fp16 COMPUTE_32F scale 16F BIAS (Paddle 2022)", CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_16F, CUBLASLT_EPILOGUE_BIAS},
      {"fp16 COMPUTE_32F scale 16F RELU_BIAS", CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_16F, CUBLASLT_EPILOGUE_RELU_BIAS},
      {"fp16 COMPUTE_32F scale 16F DEFAULT", CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_16F, CUBLASLT_EPILOGUE_DEFAULT},
      {"fp16 COMPUTE_32F scale 32F BIAS (later Paddle)", CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLASLT_EPILOGUE_BIAS},
      {"fp64 COMPUTE_64F scale 64F BIAS", CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLASLT_EPILOGUE_BIAS},
      {"fp32 COMPUTE_32F scale 32F GELU_BIAS", CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLASLT_EPILOGUE_GELU_BIAS},
  };
  for (const Case& c : cases) {
    cublasLtMatmulDesc_t desc;
    cublasStatus_t cs = cublasLtMatmulDescCreate(&desc, c.compute, c.scale);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epilogue, sizeof(c.epilogue));
    if (c.epilogue != CUBLASLT_EPILOGUE_DEFAULT)
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatrixLayoutCreate(&la, c.data, m, k, m);
    cublasLtMatrixLayoutCreate(&lb, c.data, k, n, k);
    cublasLtMatrixLayoutCreate(&ld, c.data, m, n, m);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof(wsBytes));
    cublasLtMatmulHeuristicResult_t res;
    int count = 0;
    cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &res, &count);
    double a64 = 1, b64 = 0;
    float a32 = 1, b32 = 0;
    __half a16 = __float2half(1.f), b16 = __float2half(0.f);
    const void* alpha = c.scale == CUDA_R_64F ? (const void*)&a64 : c.scale == CUDA_R_16F ? (const void*)&a16 : (const void*)&a32;
    const void* beta = c.scale == CUDA_R_64F ? (const void*)&b64 : c.scale == CUDA_R_16F ? (const void*)&b16 : (const void*)&b32;
    cublasStatus_t ms = cublasLtMatmul(lt, desc, alpha, A, la, B, lb, beta, D, ld, D, ld, nullptr, ws, wsBytes, 0);
    cudaError_t ce = cudaDeviceSynchronize();
    printf("%s: create=%d heuristic=%d(count %d) matmul=%d cuda=%d\n", c.name, (int)cs, (int)hs, count, (int)ms, (int)ce);
    cudaGetLastError();
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
  }
  return 0;
}
