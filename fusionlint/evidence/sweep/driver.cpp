// fusionlint support sweep driver: asks cuBLASLt, in one process, whether each configuration
// read from standard input is supported. Built and run by fusionlint/evidence/sweep/runner.py
// (`fusionlint calibrate`); host code only, built with nvcc and linked with cuBLASLt.
//
// Input: one configuration per line, whitespace-separated integers in FIELD order below
// (-1: the attribute is not set). Output: one line per configuration,
//   <line number> <status> <algorithms returned> <matmul status or -1> <cuda error name> <first failing call>
// where <status> is the first failing set-up call's status (desc_create, desc_set:<attribute>,
// layout_create, layout_set:<attribute>) or else the heuristic's.
// Shapes, leading dimensions and pointers are fixed and well aligned (m = n = k = 64, every ld
// 64, aux ld 128, 256-byte aligned buffers large enough for any element type), so a verdict is
// about type / mode legality only. After a CUDA error (sticky) the driver prints the line and
// exits with status 3; the runner restarts it after that line.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cublasLt.h>
#include <cuda_runtime.h>

enum Field {
  A_TYPE, B_TYPE, C_TYPE, D_TYPE, COMPUTE, SCALE, TRANSA, TRANSB, ORDER_A, ORDER_B, ORDER_C, ORDER_D,
  BATCH, EPILOGUE, BIAS_POINTER, BIAS_TYPE, AUX_POINTER, AUX_LD, AUX_TYPE, A_SCALE_POINTER,
  B_SCALE_POINTER, C_SCALE_POINTER, D_SCALE_POINTER, AMAX_D_POINTER, A_SCALE_MODE, B_SCALE_MODE,
  FAST_ACCUM, POINTER_MODE, NFIELDS
};

static const int64_t M = 64, N = 64, K = 64, AUX_LD_VALUE = 128;
static const size_t BIG = 4u << 20;  // bytes per operand buffer (64 x 64 x 16 bytes x batch, with room)

static void *device_buffer(size_t bytes, unsigned char fill) {
  void *p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    std::exit(2);
  }
  cudaMemset(p, fill, bytes);
  return p;
}

// 1 in the scale type (alpha), 0 (beta); enough bytes for a complex double.
static void scalar_bytes(int scale_type, double v, unsigned char out[16]) {
  std::memset(out, 0, 16);
  switch (scale_type) {
    case CUDA_R_32F: case CUDA_C_32F: { float f = (float)v; std::memcpy(out, &f, 4); break; }
    case CUDA_R_64F: case CUDA_C_64F: std::memcpy(out, &v, 8); break;
    case CUDA_R_32I: case CUDA_C_32I: { int32_t i = (int32_t)v; std::memcpy(out, &i, 4); break; }
    case CUDA_R_16F: case CUDA_C_16F: { uint16_t h = v == 1.0 ? 0x3c00 : 0; std::memcpy(out, &h, 2); break; }
    case CUDA_R_16BF: case CUDA_C_16BF: { uint16_t h = v == 1.0 ? 0x3f80 : 0; std::memcpy(out, &h, 2); break; }
    default: { float f = (float)v; std::memcpy(out, &f, 4); }
  }
}

int main() {
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasLtCreate failed\n");
    return 2;
  }
  void *A = device_buffer(BIG, 0), *B = device_buffer(BIG, 0), *C = device_buffer(BIG, 0), *D = device_buffer(BIG, 0);
  void *bias = device_buffer(1 << 16, 0), *aux = device_buffer(BIG, 0);
  void *scales = device_buffer(1 << 20, 0x3c);  // bytes 0x3c: a float near 0.0115, an E4M3 of 1.5
  void *amax = device_buffer(256, 0);
  void *alpha_dev = device_buffer(1 << 12, 0), *beta_dev = device_buffer(1 << 12, 0);
  const size_t workspace_size = 32u << 20;
  void *workspace = device_buffer(workspace_size, 0);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_size,
                                       sizeof(workspace_size));
  cudaStream_t stream;
  cudaStreamCreate(&stream);

  char line[1024];
  long lineno = 0;
  while (std::fgets(line, sizeof line, stdin)) {
    ++lineno;
    long v[NFIELDS];
    char *p = line;
    int n = 0;
    for (; n < NFIELDS; ++n) {
      char *end;
      v[n] = std::strtol(p, &end, 10);
      if (end == p) break;
      p = end;
    }
    if (n != NFIELDS) {
      std::printf("%ld bad-line\n", lineno);
      continue;
    }
    cublasLtMatmulDesc_t desc = nullptr;
    cublasStatus_t hs = cublasLtMatmulDescCreate(&desc, (cublasComputeType_t)v[COMPUTE], (cudaDataType_t)v[SCALE]);
    char where[64] = "heuristic";  // the call that failed first
    if (hs != CUBLAS_STATUS_SUCCESS) std::strcpy(where, "desc_create");
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
    int returned = 0;
    int ms = -1;
    const int batch = (int)v[BATCH];
    if (hs == CUBLAS_STATUS_SUCCESS) {
      auto set = [&](cublasLtMatmulDescAttributes_t a, const void *buf, size_t size) {
        cublasStatus_t s = cublasLtMatmulDescSetAttribute(desc, a, buf, size);
        if (s != CUBLAS_STATUS_SUCCESS && hs == CUBLAS_STATUS_SUCCESS) {
          hs = s;
          std::snprintf(where, sizeof where, "desc_set:%d", (int)a);
        }
      };
      int32_t i32;
      i32 = (int32_t)v[TRANSA]; set(CUBLASLT_MATMUL_DESC_TRANSA, &i32, 4);
      i32 = (int32_t)v[TRANSB]; set(CUBLASLT_MATMUL_DESC_TRANSB, &i32, 4);
      if (v[EPILOGUE] >= 0) { uint32_t e = (uint32_t)v[EPILOGUE]; set(CUBLASLT_MATMUL_DESC_EPILOGUE, &e, 4); }
      if (v[BIAS_POINTER] > 0) set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
      if (v[BIAS_TYPE] >= 0) { i32 = (int32_t)v[BIAS_TYPE]; set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &i32, 4); }
      if (v[AUX_POINTER] > 0) set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux));
      if (v[AUX_LD] > 0) { int64_t l = AUX_LD_VALUE; set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &l, 8); }
      if (v[AUX_POINTER] > 0 && batch > 1) {
        int64_t s = AUX_LD_VALUE * N;
        set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &s, 8);
      }
      if (v[AUX_TYPE] >= 0) { i32 = (int32_t)v[AUX_TYPE]; set(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &i32, 4); }
      if (v[A_SCALE_POINTER] > 0) set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scales, sizeof(scales));
      if (v[B_SCALE_POINTER] > 0) set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scales, sizeof(scales));
      if (v[C_SCALE_POINTER] > 0) set(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, &scales, sizeof(scales));
      if (v[D_SCALE_POINTER] > 0) set(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &scales, sizeof(scales));
      if (v[AMAX_D_POINTER] > 0) set(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax, sizeof(amax));
      if (v[A_SCALE_MODE] >= 0) { i32 = (int32_t)v[A_SCALE_MODE]; set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &i32, 4); }
      if (v[B_SCALE_MODE] >= 0) { i32 = (int32_t)v[B_SCALE_MODE]; set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &i32, 4); }
      if (v[FAST_ACCUM] >= 0) { int8_t f = (int8_t)v[FAST_ACCUM]; set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, &f, 1); }
      if (v[POINTER_MODE] >= 0) { i32 = (int32_t)v[POINTER_MODE]; set(CUBLASLT_MATMUL_DESC_POINTER_MODE, &i32, 4); }

      auto layout = [&](cublasLtMatrixLayout_t *l, long type, int64_t rows, int64_t cols, long order) {
        const int64_t lead = order == CUBLASLT_ORDER_ROW ? cols : rows;
        cublasStatus_t s = cublasLtMatrixLayoutCreate(l, (cudaDataType_t)type, rows, cols, lead);
        const char *step = "layout_create";
        if (s == CUBLAS_STATUS_SUCCESS) {
          step = "layout_set:1";
          int32_t o = (int32_t)order;
          s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_ORDER, &o, 4);
        }
        if (s == CUBLAS_STATUS_SUCCESS && batch > 1) {
          int32_t b = batch;
          int64_t stride = rows * cols;
          step = "layout_set:5";
          s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, 4);
          if (s == CUBLAS_STATUS_SUCCESS) {
            step = "layout_set:6";
            s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, 8);
          }
        }
        if (s != CUBLAS_STATUS_SUCCESS && hs == CUBLAS_STATUS_SUCCESS) {
          hs = s;
          std::snprintf(where, sizeof where, "%s", step);
        }
      };
      // op(A) is m x k, op(B) k x n: stored transposed when TRANS != N (square here anyway)
      layout(&la, v[A_TYPE], v[TRANSA] ? K : M, v[TRANSA] ? M : K, v[ORDER_A]);
      layout(&lb, v[B_TYPE], v[TRANSB] ? N : K, v[TRANSB] ? K : N, v[ORDER_B]);
      layout(&lc, v[C_TYPE], M, N, v[ORDER_C]);
      layout(&ld, v[D_TYPE], M, N, v[ORDER_D]);
    }
    // hs is the status of the set-up calls; the heuristic's own status replaces it when they succeeded
    int setup_failed = hs != CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0, sizeof result);
    if (!setup_failed) hs = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 1, &result, &returned);
    cudaError_t ce = cudaSuccess;
    if (!setup_failed && hs == CUBLAS_STATUS_SUCCESS && returned > 0) {
      unsigned char alpha[16], beta[16];
      scalar_bytes((int)v[SCALE], 1.0, alpha);
      scalar_bytes((int)v[SCALE], 0.0, beta);
      const void *pa = alpha, *pb = beta;
      const long pm = v[POINTER_MODE];
      if (pm == CUBLASLT_POINTER_MODE_DEVICE || pm == CUBLASLT_POINTER_MODE_DEVICE_VECTOR ||
          pm == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO ||
          pm == CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST) {
        std::vector<unsigned char> vec(16 * M);
        for (int64_t i = 0; i < M; ++i) std::memcpy(&vec[16 * i], alpha, 16);
        cudaMemcpy(alpha_dev, vec.data(), vec.size(), cudaMemcpyHostToDevice);
        pa = alpha_dev;
        if (pm == CUBLASLT_POINTER_MODE_DEVICE || pm == CUBLASLT_POINTER_MODE_DEVICE_VECTOR) pb = beta_dev;
      }
      cublasStatus_t s = cublasLtMatmul(lt, desc, pa, A, la, B, lb, pb, C, lc, D, ld, &result.algo, workspace,
                                        workspace_size, stream);
      ms = (int)s;
      ce = cudaStreamSynchronize(stream);
      if (ce == cudaSuccess) ce = cudaGetLastError();
    }
    std::printf("%ld %d %d %d %s %s\n", lineno, (int)hs, returned, ms, cudaGetErrorName(ce), where);
    // every answer out before the next line runs: a line that kills the process (cuBLASLt aborts on
    // some configurations) must not take the buffered answers of earlier lines with it, or the
    // runner blames the first unanswered line instead of the one that killed it
    std::fflush(stdout);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (ce != cudaSuccess) {
      std::fflush(stdout);
      return 3;  // the context may be lost: the runner restarts after this line
    }
  }
  std::fflush(stdout);
  return 0;
}
