// Device probe for llm.c's matmul_forward3 with has_bias false (held out): epilogue
// DEFAULT with CUBLASLT_MATMUL_DESC_BIAS_POINTER set to a null pointer, next to the same with a
// non-null pointer and with epilogue BIAS. fp32 data, CUBLAS_COMPUTE_32F and _FAST_TF32, TRANSA=T,
// TRANSB=N as llm.c writes it. One line per case: heuristic status and count, matmul status.
// Build: nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe_null_bias tools/probe_null_bias.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>

int main() {
  const int C = 256, OC = 256, BT = 256;
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 2;
  float *weight, *inp, *out, *bias_buffer;
  cudaMalloc(&weight, C * OC * 4);
  cudaMalloc(&inp, C * BT * 4);
  cudaMalloc(&out, OC * BT * 4);
  cudaMalloc(&bias_buffer, OC * 4);
  cudaMemset(weight, 0, C * OC * 4);
  cudaMemset(inp, 0, C * BT * 4);
  cudaMemset(bias_buffer, 0, OC * 4);
  size_t wsBytes = 32 << 20;
  void* ws;
  cudaMalloc(&ws, wsBytes);
  const cublasComputeType_t computes[] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
  struct Case { const char* name; cublasLtEpilogue_t epilogue; bool set_pointer; const float* pointer; };
  const Case cases[] = {
      {"DEFAULT, BIAS_POINTER not set", CUBLASLT_EPILOGUE_DEFAULT, false, nullptr},
      {"DEFAULT, BIAS_POINTER = nullptr (llm.c, has_bias false)", CUBLASLT_EPILOGUE_DEFAULT, true, nullptr},
      {"DEFAULT, BIAS_POINTER = a buffer", CUBLASLT_EPILOGUE_DEFAULT, true, bias_buffer},
      {"BIAS, BIAS_POINTER = a buffer", CUBLASLT_EPILOGUE_BIAS, true, bias_buffer},
      {"GELU, BIAS_POINTER = nullptr", CUBLASLT_EPILOGUE_GELU, true, nullptr},
  };
  for (auto compute : computes) for (const Case& c : cases) {
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F);
    cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof(n));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epilogue, sizeof(c.epilogue));
    cublasStatus_t ps = CUBLAS_STATUS_SUCCESS;
    if (c.set_pointer) ps = cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c.pointer, sizeof(c.pointer));
    cublasLtMatrixLayout_t wl, il, ol;
    cublasLtMatrixLayoutCreate(&wl, CUDA_R_32F, C, OC, C);
    cublasLtMatrixLayoutCreate(&il, CUDA_R_32F, C, BT, C);
    cublasLtMatrixLayoutCreate(&ol, CUDA_R_32F, OC, BT, OC);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof(wsBytes));
    cublasLtMatmulHeuristicResult_t res;
    int count = 0;
    cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, desc, wl, il, ol, ol, pref, 1, &res, &count);
    const float alpha = 1.f, beta = 0.f;
    cublasStatus_t ms = cublasLtMatmul(lt, desc, &alpha, weight, wl, inp, il, &beta, out, ol, out, ol,
                                       count > 0 ? &res.algo : nullptr, ws, wsBytes, 0);
    cudaError_t ce = cudaDeviceSynchronize();
    printf("%s %s: set=%d heuristic=%d(count %d) matmul=%d cuda=%d\n",
           compute == CUBLAS_COMPUTE_32F ? "COMPUTE_32F" : "COMPUTE_32F_FAST_TF32", c.name, (int)ps, (int)hs, count,
           (int)ms, (int)ce);
    cudaGetLastError();
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(wl);
    cublasLtMatrixLayoutDestroy(il);
    cublasLtMatrixLayoutDestroy(ol);
    cublasLtMatmulDescDestroy(desc);
  }
  return 0;
}
