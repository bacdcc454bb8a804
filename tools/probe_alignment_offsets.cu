// Device probe: operand pointers offset from their allocation (A + 1 element, D + 3 elements, ...)
// with the matmul preference's CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES unset (the
// documented default is 256), set to the pointer's true alignment, or set larger than it. TN,
// m = n = k = 64 (lda = ldb = ldc = 64 + 16 so an offset row stays inside the buffer), alpha 1, beta 0,
// A and B small integers (exact in every type), D checked against a host reference.
// One line per case: type, operand offset (elements), preference, heuristic status and count,
// matmul status, CUDA error after synchronizing, and whether D matches.
// Run: for t in 0 1 2 3; do for o in $(seq 0 8); do for p in 0 1 2 3; do echo $t $o $p; done; done; done |
//   xargs -P8 -n3 /tmp/probe_alignment_offsets
// Build: nvcc -std=c++17 -O2 -arch=sm_90a -o /tmp/probe_alignment_offsets tools/probe_alignment_offsets.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Type { const char* name; cudaDataType_t ab, cd; int ab_bytes, cd_bytes; };

template <typename T> static void fill(std::vector<unsigned char>& bytes, const std::vector<float>& v) {
  bytes.resize(v.size() * sizeof(T));
  T* p = reinterpret_cast<T*>(bytes.data());
  for (size_t i = 0; i < v.size(); ++i) p[i] = T(v[i]);
}

static void to_bytes(cudaDataType_t t, const std::vector<float>& v, std::vector<unsigned char>& out) {
  if (t == CUDA_R_16BF) fill<__nv_bfloat16>(out, v);
  else if (t == CUDA_R_16F) fill<__half>(out, v);
  else if (t == CUDA_R_8F_E4M3) fill<__nv_fp8_e4m3>(out, v);
  else fill<float>(out, v);
}

static float from_bytes(cudaDataType_t t, const unsigned char* p, size_t i) {
  if (t == CUDA_R_16BF) return float(reinterpret_cast<const __nv_bfloat16*>(p)[i]);
  if (t == CUDA_R_16F) return float(reinterpret_cast<const __half*>(p)[i]);
  return reinterpret_cast<const float*>(p)[i];
}

int main(int argc, char** argv) {
  // with three arguments (type, offset, preference: indices), only that case, in a process of its own
  // (a misaligned access is a sticky CUDA error that ends the process's use of the GPU)
  const int only_t = argc == 4 ? std::atoi(argv[1]) : -1, only_o = argc == 4 ? std::atoi(argv[2]) : -1,
            only_p = argc == 4 ? std::atoi(argv[3]) : -1;
  const int m = 64, n = 64, k = 64, ld = 80;
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 2;
  const Type types[] = {{"bf16", CUDA_R_16BF, CUDA_R_16BF, 2, 2}, {"fp16", CUDA_R_16F, CUDA_R_16F, 2, 2},
                        {"fp32", CUDA_R_32F, CUDA_R_32F, 4, 4}, {"fp8e4m3->bf16", CUDA_R_8F_E4M3, CUDA_R_16BF, 1, 2}};
  // which operand is offset, by how many elements
  struct Off { const char* what; int a, b, d; };
  const Off offsets[] = {{"none", 0, 0, 0}, {"A+1", 1, 0, 0}, {"A+2", 2, 0, 0}, {"A+4", 4, 0, 0}, {"A+8", 8, 0, 0},
                         {"B+1", 0, 1, 0}, {"D+1", 0, 0, 1}, {"D+3", 0, 0, 3}, {"D+8", 0, 0, 8}};
  const char* prefs[] = {"unset", "true", "16", "256"};
  std::vector<float> a(ld * m + 64), b(ld * n + 64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 5) - 2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 3 % 5) - 2);
  size_t ws_bytes = 32 << 20;
  void* ws;
  cudaMalloc(&ws, ws_bytes);
  void *da, *db, *dd;
  cudaMalloc(&da, (ld * m + 64) * 4);
  cudaMalloc(&db, (ld * n + 64) * 4);
  cudaMalloc(&dd, (ld * n + 64) * 4);
  for (int ti = 0; ti < 4; ++ti) {
    const Type& t = types[ti];
    if (only_t >= 0 && ti != only_t) continue;
    std::vector<unsigned char> ha, hb;
    to_bytes(t.ab, a, ha);
    to_bytes(t.ab, b, hb);
    cudaMemcpy(da, ha.data(), ha.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice);
    for (int oi = 0; oi < 9; ++oi) for (int pi = 0; pi < 4; ++pi) {
      if ((only_o >= 0 && oi != only_o) || (only_p >= 0 && pi != only_p)) continue;
      const Off& o = offsets[oi];
      const char* pref_kind = prefs[pi];
      cublasLtMatmulDesc_t desc;
      cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
      cublasOperation_t tr = CUBLAS_OP_T, nt = CUBLAS_OP_N;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &tr, sizeof(tr));
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof(nt));
      cublasLtMatrixLayout_t la, lb, lc;
      cublasLtMatrixLayoutCreate(&la, t.ab, k, m, ld);
      cublasLtMatrixLayoutCreate(&lb, t.ab, k, n, ld);
      cublasLtMatrixLayoutCreate(&lc, t.cd, m, n, ld);
      const unsigned char* pa = static_cast<unsigned char*>(da) + o.a * t.ab_bytes;
      const unsigned char* pb = static_cast<unsigned char*>(db) + o.b * t.ab_bytes;
      unsigned char* pd = static_cast<unsigned char*>(dd) + o.d * t.cd_bytes;
      cublasLtMatmulPreference_t pref;
      cublasLtMatmulPreferenceCreate(&pref);
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes));
      if (std::strcmp(pref_kind, "unset") != 0) {
        auto align = [&](const void* p) -> uint32_t {
          if (std::strcmp(pref_kind, "true") != 0) return uint32_t(std::atoi(pref_kind));
          uintptr_t v = reinterpret_cast<uintptr_t>(p);
          uint32_t al = 1;
          while (al < 256 && v % (al * 2) == 0) al *= 2;
          return al;
        };
        uint32_t aa = align(pa), ab = align(pb), ad = align(pd);
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aa, sizeof(aa));
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ab, sizeof(ab));
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ad, sizeof(ad));
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ad, sizeof(ad));
      }
      cudaMemset(dd, 0, (ld * n + 64) * 4);
      cublasLtMatmulHeuristicResult_t res;
      int count = 0;
      cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &res, &count);
      float alpha = 1.f, beta = 0.f;
      cublasStatus_t ms = cublasLtMatmul(lt, desc, &alpha, pa, la, pb, lb, &beta, pd, lc, pd, lc,
                                         count > 0 ? &res.algo : nullptr, ws, ws_bytes, 0);
      cudaError_t ce = cudaDeviceSynchronize();
      const char* numerics = "not run";
      if (ms == CUBLAS_STATUS_SUCCESS && ce == cudaSuccess) {
        std::vector<unsigned char> hd((ld * n + 64) * 4);
        cudaMemcpy(hd.data(), dd, hd.size(), cudaMemcpyDeviceToHost);
        float err = 0;
        for (int j = 0; j < n; ++j) for (int i = 0; i < m; ++i) {
          float ref = 0;
          for (int p = 0; p < k; ++p) ref += a[o.a + i * ld + p] * b[o.b + j * ld + p];
          err = std::fmax(err, std::fabs(ref - from_bytes(t.cd, hd.data(), o.d + j * ld + i)));
        }
        numerics = err <= 0.5f ? "ok" : "mismatch";
      }
      std::printf("ALIGN type=%s offset=%s pref=%s heuristic=%d count=%d matmul=%d cuda=%s numerics=%s\n", t.name,
                  o.what, pref_kind, int(hs), count, int(ms), cudaGetErrorName(ce), numerics);
      if (ce != cudaSuccess) {  // a sticky error ends the process's use of the GPU: say so and stop
        std::printf("ALIGN sticky CUDA error, stopping\n");
        return 3;
      }
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatmulDescDestroy(desc);
    }
  }
  return 0;
}
