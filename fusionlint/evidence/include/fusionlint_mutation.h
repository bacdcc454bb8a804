// Helpers for the random-mutation programs that `python3 -m fusionlint.evidence.mutations_cublaslt
// generate` writes: buffers of any element type the mutations can give a matrix or a
// vector (complex types included, which fusionlint_probe.h does not hold), generously sized scale
// buffers, alpha/beta in device memory, and the "numerics skipped" line of the harness protocol.
// The cuBLASLt calls stay in the generated programs; nothing here calls cuBLASLt. Host code only.
//
// Output protocol additions (parsed by fusionlint/evidence/harness.py):
//   EVIDENCE cuda <cudaError name>            from mut_skip(), after cudaDeviceSynchronize()
//   EVIDENCE numerics skipped <why>           from mut_skip(): no host reference for this configuration
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "fusionlint_probe.h"

// Bytes per element of every type a mutated configuration can name (fusionlint_probe.h's
// probe_type_size counts complex types as 1 byte).
static size_t mut_type_size(cudaDataType_t t) {
  switch (t) {
    case CUDA_C_32F: return 8;
    case CUDA_C_64F: return 16;
    case CUDA_C_16F: case CUDA_C_16BF: return 4;
    default: return probe_type_size(t);
  }
}

// Store a real value as element i of `type` (complex types: the real part; imaginary part 0).
static void mut_store(cudaDataType_t t, void *dst, size_t i, float v) {
  switch (t) {
    case CUDA_C_32F: {
      float *p = static_cast<float *>(dst) + 2 * i;
      p[0] = v;
      p[1] = 0.0f;
      break;
    }
    case CUDA_C_64F: {
      double *p = static_cast<double *>(dst) + 2 * i;
      p[0] = v;
      p[1] = 0.0;
      break;
    }
    default: probe_store(t, dst, i, v); break;
  }
}

// probe_matrix() for any element type: the same host values (the same generator and seed), a
// device copy of the right size for the type (plus 16 bytes), zero-filled first.
static ProbeMatrix mut_matrix(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, unsigned seed,
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
  std::vector<unsigned char> bytes(total * mut_type_size(type) + 16, 0);
  for (size_t i = 0; i < total; ++i) mut_store(type, bytes.data(), i, m.host[i]);
  cudaMalloc(&m.dev, bytes.size());
  cudaMemcpy(m.dev, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  return m;
}

// A device vector of n elements of `type` (bias) and its host values.
static void *mut_vector(cudaDataType_t type, int64_t n, unsigned seed, std::vector<float> *values) {
  ProbeMatrix v = mut_matrix(type, n, 1, n, seed);
  if (values) *values = v.host;
  return v.dev;
}

// A zero-filled device buffer (aux outputs and inputs).
static void *mut_buffer(size_t bytes) {
  void *p = nullptr;
  cudaMalloc(&p, bytes);
  cudaMemset(p, 0, bytes);
  return p;
}

// A scale (or amax) buffer: 64 KiB of floats all equal to `value`, so that a per-tensor, outer-vector,
// 128-element or 128x128-block scale mode all read the same scale.
static void *mut_scale_buffer(float value) {
  const size_t count = 16384;
  std::vector<float> host(count, value);
  void *p = nullptr;
  cudaMalloc(&p, count * sizeof(float));
  cudaMemcpy(p, host.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  return p;
}

// n copies of `value` in device memory as `type` (alpha/beta for the DEVICE pointer modes, the
// alpha vectors of the vector modes); at least 256 bytes.
static void *mut_device_values(cudaDataType_t type, int64_t n, float value) {
  const size_t bytes = (size_t)n * mut_type_size(type);
  std::vector<unsigned char> host(bytes < 256 ? 256 : bytes, 0);
  for (int64_t i = 0; i < n; ++i) mut_store(type, host.data(), (size_t)i, value);
  void *p = nullptr;
  cudaMalloc(&p, host.size());
  cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice);
  return p;
}

// For a configuration the host reference does not model: wait for the GPU, report its error state
// and why D was not checked.
static void mut_skip(const char *why) {
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("EVIDENCE cuda %s\n", cudaGetErrorName(err));
  std::printf("EVIDENCE numerics skipped %s\n", why);
  std::fflush(stdout);
}
