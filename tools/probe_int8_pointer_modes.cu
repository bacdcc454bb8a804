// Device probe for FL127's int8 rows of the support table (bitsandbytes' igemmlt<8, 1>):
// does cuBLASLt take POINTER_MODE ALPHA_DEVICE_VECTOR_BETA_ZERO with int8 A/B, COMPUTE_32I, at every
// transpose, or only fail at the base layout the table was measured at? One line per case: the
// transposes, D type, scale type, pointer mode, the status of cublasLtMatmulAlgoGetHeuristic and of
// cublasLtMatmul (algo NULL, as bitsandbytes calls it), and, where both succeed, whether D matches a
// CPU reference (alpha per row, int8 D saturated).
// Build: nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe tools/probe_int8_pointer_modes.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <vector>

static const char* mode_name(cublasLtPointerMode_t m) {
  switch (m) {
    case CUBLASLT_POINTER_MODE_HOST: return "HOST";
    case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO: return "ALPHA_DEVICE_VECTOR_BETA_ZERO";
    case CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST: return "ALPHA_DEVICE_VECTOR_BETA_HOST";
    default: return "?";
  }
}

int main() {
  const int m = 64, n = 64, k = 64;
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 2;
  std::vector<int8_t> hA(m * k), hB(k * n);
  for (int i = 0; i < m * k; ++i) hA[i] = (int8_t)((i * 7 + 3) % 3 - 1);
  for (int i = 0; i < k * n; ++i) hB[i] = (int8_t)((i * 5 + 1) % 3 - 1);
  int8_t *dA, *dB;
  void* dD;
  float* dAlphaF;
  int32_t* dAlphaI;
  cudaMalloc(&dA, m * k);
  cudaMalloc(&dB, k * n);
  cudaMalloc(&dD, m * n * 4);
  cudaMalloc(&dAlphaF, m * sizeof(float));
  cudaMalloc(&dAlphaI, m * sizeof(int32_t));
  cudaMemcpy(dA, hA.data(), m * k, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, hB.data(), k * n, cudaMemcpyHostToDevice);
  std::vector<float> alphaF(m);
  std::vector<int32_t> alphaI(m);
  for (int i = 0; i < m; ++i) { alphaF[i] = (float)(1 + i % 2); alphaI[i] = 1 + i % 2; }
  cudaMemcpy(dAlphaF, alphaF.data(), m * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dAlphaI, alphaI.data(), m * sizeof(int32_t), cudaMemcpyHostToDevice);
  void* ws;
  size_t wsBytes = 32 << 20;
  cudaMalloc(&ws, wsBytes);

  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T};
  const cublasLtPointerMode_t modes[] = {CUBLASLT_POINTER_MODE_HOST, CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO,
                                         CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST};
  struct Types { cudaDataType_t d; cudaDataType_t scale; const char* name; };
  const Types types[] = {{CUDA_R_8I, CUDA_R_32F, "D=8I scale=32F"}, {CUDA_R_32I, CUDA_R_32I, "D=32I scale=32I"}};
  for (auto ta : ops) for (auto tb : ops) for (const Types& t : types) for (auto mode : modes) {
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32I, t.scale);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode));
    // column-major storage of op(A) (m x k) and op(B) (k x n)
    const int aRows = ta == CUBLAS_OP_N ? m : k, aCols = ta == CUBLAS_OP_N ? k : m;
    const int bRows = tb == CUBLAS_OP_N ? k : n, bCols = tb == CUBLAS_OP_N ? n : k;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, aRows, aCols, aRows);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, bRows, bCols, bRows);
    cublasLtMatrixLayoutCreate(&ld, t.d, m, n, m);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof(wsBytes));
    cublasLtMatmulHeuristicResult_t res;
    int count = 0;
    cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &res, &count);
    float alphaHostF = 1.0f, betaF = 0.0f;
    int32_t alphaHostI = 1, betaI = 0;
    const bool floatScale = t.scale == CUDA_R_32F;
    const void* alpha = mode == CUBLASLT_POINTER_MODE_HOST ? (floatScale ? (const void*)&alphaHostF : (const void*)&alphaHostI)
                                                           : (floatScale ? (const void*)dAlphaF : (const void*)dAlphaI);
    const void* beta = floatScale ? (const void*)&betaF : (const void*)&betaI;
    cudaMemset(dD, 0x7f, m * n * 4);
    cublasStatus_t ms = cublasLtMatmul(lt, desc, alpha, dA, la, dB, lb, beta, dD, ld, dD, ld, nullptr, ws, wsBytes, 0);
    cudaError_t ce = cudaDeviceSynchronize();
    const char* check = "-";
    if (ms == CUBLAS_STATUS_SUCCESS && ce == cudaSuccess) {
      std::vector<uint8_t> raw(m * n * 4);
      cudaMemcpy(raw.data(), dD, m * n * (t.d == CUDA_R_8I ? 1 : 4), cudaMemcpyDeviceToHost);
      int bad = 0;
      for (int i = 0; i < m; ++i) for (int j = 0; j < n; ++j) {
        long long acc = 0;
        for (int p = 0; p < k; ++p) {
          const int8_t a = ta == CUBLAS_OP_N ? hA[i + p * aRows] : hA[p + i * aRows];
          const int8_t b = tb == CUBLAS_OP_N ? hB[p + j * bRows] : hB[j + p * bRows];
          acc += (long long)a * b;
        }
        const long long scale = mode == CUBLASLT_POINTER_MODE_HOST ? 1 : (1 + i % 2);
        long long want = acc * scale;
        long long got;
        if (t.d == CUDA_R_8I) {
          want = want > 127 ? 127 : (want < -128 ? -128 : want);
          got = ((const int8_t*)raw.data())[i + j * m];
        } else {
          got = ((const int32_t*)raw.data())[i + j * m];
        }
        bad += got != want;
      }
      check = bad ? "WRONG" : "ok";
    }
    printf("transa=%s transb=%s %s mode=%s heuristic=%d(count %d) matmul=%d cuda=%d check=%s\n", ta == CUBLAS_OP_N ? "N" : "T",
           tb == CUBLAS_OP_N ? "N" : "T", t.name, mode_name(mode), (int)hs, count, (int)ms, (int)ce, check);
    cudaGetLastError();
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
  }
  return 0;
}
