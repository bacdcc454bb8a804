// fusionlint probe helpers, for fixture programs that double as device evidence and for the
// probes `fusionlint verify` generates. Programs are compiled with nvcc and run by
// `python3 -m fusionlint.evidence.harness`. The cuBLASLt calls themselves stay in the fixture
// (that is what the linter reads); this header only makes data, prints statuses, and checks D
// against a host reference.
//
// Output protocol (parsed by the harness):
//   EVIDENCE <call text> <CUBLAS_STATUS_...>       one line per PROBE(...) call
//   EVIDENCE numerics ok|mismatch max_abs_err=<x>  from probe_verify()
//   EVIDENCE numerics skipped <why>                 from probe_verify_skipped(): D has no host reference
//   EVIDENCE cuda <cudaError name>                  from probe_verify(): sticky/async errors
//   EVIDENCE tflops <value> m=<m> n=<n> k=<k>       from probe_tflops()
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

static const char *probe_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_OTHER";
  }
}

static cublasStatus_t probe_report(const char *what, cublasStatus_t s) {
  std::printf("EVIDENCE %s %s\n", what, probe_status_name(s));
  std::fflush(stdout);
  return s;
}
#define PROBE(call) probe_report(#call, (call))

// ---- host data in any cuBLASLt element type -------------------------------------------------
static size_t probe_type_size(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F: case CUDA_R_32I: return 4;
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    default: return 1;  // CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_8I
  }
}

static void probe_store(cudaDataType_t t, void *dst, size_t i, float v) {
  switch (t) {
    case CUDA_R_32F: static_cast<float *>(dst)[i] = v; break;
    case CUDA_R_64F: static_cast<double *>(dst)[i] = v; break;
    case CUDA_R_32I: static_cast<int32_t *>(dst)[i] = (int32_t)std::lrint(v); break;
    case CUDA_R_16F: static_cast<__half *>(dst)[i] = __float2half(v); break;
    case CUDA_R_16BF: static_cast<__nv_bfloat16 *>(dst)[i] = __float2bfloat16(v); break;
    case CUDA_R_8F_E4M3: static_cast<__nv_fp8_e4m3 *>(dst)[i] = __nv_fp8_e4m3(v); break;
    case CUDA_R_8F_E5M2: static_cast<__nv_fp8_e5m2 *>(dst)[i] = __nv_fp8_e5m2(v); break;
    case CUDA_R_8I: static_cast<int8_t *>(dst)[i] = (int8_t)std::lrint(v); break;
    default: break;
  }
}

static float probe_load(cudaDataType_t t, const void *src, size_t i) {
  switch (t) {
    case CUDA_R_32F: return static_cast<const float *>(src)[i];
    case CUDA_R_64F: return (float)static_cast<const double *>(src)[i];
    case CUDA_R_32I: return (float)static_cast<const int32_t *>(src)[i];
    case CUDA_R_16F: return __half2float(static_cast<const __half *>(src)[i]);
    case CUDA_R_16BF: return __bfloat162float(static_cast<const __nv_bfloat16 *>(src)[i]);
    case CUDA_R_8F_E4M3: return (float)static_cast<const __nv_fp8_e4m3 *>(src)[i];
    case CUDA_R_8F_E5M2: return (float)static_cast<const __nv_fp8_e5m2 *>(src)[i];
    case CUDA_R_8I: return (float)static_cast<const int8_t *>(src)[i];
    default: return 0.0f;
  }
}

// A matrix in device memory with its host copy (values exact in every type: k/8, |k| <= 8,
// or small integers for integer types).
struct ProbeMatrix {
  cudaDataType_t type;
  int64_t rows, cols, ld;
  bool row_major;
  int batch;
  int64_t stride;  // elements between batches
  void *dev;
  std::vector<float> host;
  size_t index(int64_t r, int64_t c, int b) const {
    return (size_t)b * (size_t)stride + (row_major ? (size_t)r * ld + c : (size_t)c * ld + r);
  }
  float at(int64_t r, int64_t c, int b = 0) const { return host[index(r, c, b)]; }
};

static ProbeMatrix probe_matrix(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, unsigned seed,
                                bool row_major = false, int batch = 1, int64_t stride = -1) {
  ProbeMatrix m{type, rows, cols, ld, row_major, batch, 0, nullptr, {}};
  const int64_t one = (row_major ? rows : cols) * ld;
  m.stride = stride >= 0 ? stride : one;
  const size_t total = (size_t)(batch > 1 ? (batch - 1) * m.stride + one : one);
  m.host.assign(total, 0.0f);
  const bool integer = type == CUDA_R_8I || type == CUDA_R_32I;
  for (size_t i = 0; i < total; ++i) {
    seed = seed * 1664525u + 1013904223u;
    m.host[i] = integer ? (float)((int)((seed >> 9) % 9) - 4) : (float)((seed >> 9) % 17) / 8.0f - 1.0f;
  }
  std::vector<unsigned char> bytes(total * probe_type_size(type) + 16);
  for (size_t i = 0; i < total; ++i) probe_store(type, bytes.data(), i, m.host[i]);
  cudaMalloc(&m.dev, bytes.size());
  cudaMemcpy(m.dev, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  return m;
}

static void *probe_device_copy(const void *host, size_t bytes) {
  void *dev = nullptr;
  cudaMalloc(&dev, bytes < 256 ? 256 : bytes);
  cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
  return dev;
}

// A device vector of `n` elements of `type` (bias, scales...) and its host values.
static void *probe_vector(cudaDataType_t type, int64_t n, unsigned seed, std::vector<float> *values) {
  ProbeMatrix v = probe_matrix(type, n, 1, n, seed);
  if (values) *values = v.host;
  return v.dev;
}

static void *probe_workspace(size_t bytes) {
  void *ws = nullptr;
  cudaMalloc(&ws, bytes);
  return ws;
}

// ---- the host reference ------------------------------------------------------------------------
enum ProbeActivation { PROBE_NONE, PROBE_RELU, PROBE_GELU };

struct ProbeCheck {
  bool transa = false, transb = false;
  const ProbeMatrix *A = nullptr, *B = nullptr, *C = nullptr, *D = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  float scale = 1.0f;  // product of the A and B scales (and the D scale for FP8 outputs)
  const std::vector<float> *bias = nullptr;  // one value per row of D
  ProbeActivation activation = PROBE_NONE;
  double tolerance = 0.1;
  double rel_tolerance = 0;  // added per element, times |reference| (the rounding of an FP8 D)
};

static float probe_gelu(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
}

static void probe_verify(const ProbeCheck &chk) {
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("EVIDENCE cuda %s\n", cudaGetErrorName(err));
  const ProbeMatrix &D = *chk.D;
  const int64_t m = D.rows, n = D.cols;
  const int64_t k = chk.transa ? chk.A->rows : chk.A->cols;
  const size_t total = (size_t)((D.batch - 1) * D.stride + (D.row_major ? m : n) * D.ld);
  std::vector<unsigned char> bytes(total * probe_type_size(D.type));
  if (err == cudaSuccess) cudaMemcpy(bytes.data(), D.dev, bytes.size(), cudaMemcpyDeviceToHost);
  double worst = 0;
  size_t bad = 0;
  // Large problems (a timed GEMM replayed by `fusionlint verify`): check a spread of about 4096
  // elements per batch instead of all of them, so the host reference stays quick.
  const bool sample = (double)m * n * k * D.batch > 1e9;
  const int64_t step = sample ? ((m * n / 4096) | 1) : 1;
  for (int b = 0; b < D.batch; ++b)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        if (sample && (i + j * m) % step != 0) continue;
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          float a = chk.transa ? chk.A->at(p, i, chk.A->batch > 1 ? b : 0) : chk.A->at(i, p, chk.A->batch > 1 ? b : 0);
          float bb = chk.transb ? chk.B->at(j, p, chk.B->batch > 1 ? b : 0) : chk.B->at(p, j, chk.B->batch > 1 ? b : 0);
          acc += (double)a * bb;
        }
        double want = chk.alpha * chk.scale * acc;
        if (chk.C && chk.beta != 0.0f) want += chk.beta * chk.C->at(i, j, chk.C->batch > 1 ? b : 0);
        if (chk.bias) want += (*chk.bias)[i];
        if (chk.activation == PROBE_RELU) want = want > 0 ? want : 0;
        if (chk.activation == PROBE_GELU) want = probe_gelu((float)want);
        if (D.type == CUDA_R_8I) want = std::fmin(127.0, std::fmax(-128.0, std::nearbyint(want)));  // D saturates
        float got = err == cudaSuccess ? probe_load(D.type, bytes.data(), D.index(i, j, b)) : NAN;
        double diff = std::fabs(got - want);
        if (!(diff <= worst)) worst = std::isnan(diff) ? INFINITY : diff;
        if (!(diff <= chk.tolerance + chk.rel_tolerance * std::fabs(want))) ++bad;
      }
  std::printf("EVIDENCE numerics %s max_abs_err=%g\n", bad == 0 ? "ok" : "mismatch", worst);
}

// The end of a probe whose D the host reference cannot compute (an epilogue it does not model, e.g.
// DRELU / DGELU, whose D depends on the forward pass's aux input): the CUDA error state as
// probe_verify() prints it, then why D is not checked. The harness reads the run as "works (D not
// checked: <why>)" when every status succeeded; `fusionlint verify` as "numerics not checked".
static void probe_verify_skipped(const char *why) {
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("EVIDENCE cuda %s\n", cudaGetErrorName(err));
  std::printf("EVIDENCE numerics skipped %s\n", why);
  std::fflush(stdout);
}

// Time `launch` (one GEMM) and print TFLOP/s for an m x n x k problem.
static void probe_tflops(int64_t m, int64_t n, int64_t k, const std::function<void()> &launch, int iters = 20) {
  launch();
  cudaDeviceSynchronize();
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, 0);
  for (int i = 0; i < iters; ++i) launch();
  cudaEventRecord(stop, 0);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  double tflops = 2.0 * m * n * k * iters / (ms * 1e-3) / 1e12;
  std::printf("EVIDENCE tflops %.1f m=%lld n=%lld k=%lld\n", tflops, (long long)m, (long long)n, (long long)k);
}
