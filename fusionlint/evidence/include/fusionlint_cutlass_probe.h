// fusionlint probe helpers for CUTLASS programs: rule fixtures (fixtures/cutlass/rules/), reference
// kernels (kernels_ref/cutlass/) that double as device evidence, and the probes `fusionlint verify`
// generates (fusionlint/evidence/probegen_cutlass.py). The GEMM configuration stays in the program
// (that is what the linter reads); this header makes operand data, drives the
// can_implement / initialize / run sequence, checks D against a host reference and times large runs.
// It is the CUTLASS counterpart of fusionlint_probe.h (cuBLASLt); fixtures/cutlass/cutlass_probe.h
// only includes it.
//
// Output protocol (parsed by python3 -m fusionlint.evidence.harness):
//   EVIDENCE step can_implement|initialize|run <Success|ErrorInternal|Invalid|...>
//   EVIDENCE cuda <cudaError name>                  after cudaDeviceSynchronize()
//   EVIDENCE numerics ok|mismatch max_abs_err=<x>  D vs a host reference (only when every step succeeded)
//   EVIDENCE numerics skipped <why>                 no host reference for this epilogue (ProbeOptions)
//   EVIDENCE tflops <value> m=<m> n=<n> k=<k>       probe_gemm3x / probe_gemm2x with a timed size
//
// Data: A, B and C hold small integers in [-2, 2], exact in every element type used (fp8 e4m3, fp16,
// bf16, tf32, fp32), so with K = 256 every product and partial sum is exact in the FP32 accumulator and a
// correct kernel differs from the reference only by the rounding of D to its own type.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/numeric_types.h"
#include "cutlass/layout/matrix.h"
#include "cutlass/kernel_hardware_info.h"
#include "cutlass/gemm/gemm.h"
#include "cutlass/util/packed_stride.hpp"

// ---- statuses ----------------------------------------------------------------------------------------
// One token per status (the harness reads "EVIDENCE step <name> <status>").
static const char *probe_status_word(cutlass::Status s) {
  switch (s) {
    case cutlass::Status::kSuccess: return "Success";
    case cutlass::Status::kErrorMisalignedOperand: return "ErrorMisalignedOperand";
    case cutlass::Status::kErrorInvalidDataType: return "ErrorInvalidDataType";
    case cutlass::Status::kErrorInvalidLayout: return "ErrorInvalidLayout";
    case cutlass::Status::kErrorInvalidProblem: return "ErrorInvalidProblem";
    case cutlass::Status::kErrorNotSupported: return "ErrorNotSupported";
    case cutlass::Status::kErrorWorkspaceNull: return "ErrorWorkspaceNull";
    case cutlass::Status::kErrorInternal: return "ErrorInternal";
    case cutlass::Status::kErrorArchMismatch: return "ErrorArchMismatch";
    case cutlass::Status::kErrorInsufficientDriver: return "ErrorInsufficientDriver";
    case cutlass::Status::kErrorMemoryAllocation: return "ErrorMemoryAllocation";
    case cutlass::Status::kInvalid: return "Invalid";
    default: return "ErrorUnknown";
  }
}

static cutlass::Status probe_step(const char *name, cutlass::Status s) {
  std::printf("EVIDENCE step %s %s\n", name, probe_status_word(s));
  std::fflush(stdout);
  return s;
}

static cudaError_t probe_sync() {
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("EVIDENCE cuda %s\n", cudaGetErrorName(err));
  std::fflush(stdout);
  return err;
}

// ---- operands ----------------------------------------------------------------------------------------
template <class Layout>
constexpr bool probe_is_row_major() {
  return std::is_same_v<Layout, cutlass::layout::RowMajor>;
}

// A rows x cols matrix of T in device memory, packed (ld = cols if row-major, rows if column-major),
// with the exact values it holds as floats on the host (empty for the timed, device-filled runs).
template <class T>
struct ProbeTensor {
  int64_t rows = 0, cols = 0;
  bool row_major = true;
  T *dev = nullptr;
  std::vector<float> host;
  size_t size() const { return (size_t)rows * (size_t)cols; }
  size_t index(int64_t r, int64_t c) const {
    return row_major ? (size_t)r * (size_t)cols + (size_t)c : (size_t)c * (size_t)rows + (size_t)r;
  }
  float at(int64_t r, int64_t c) const { return host[index(r, c)]; }
  void release() {
    if (dev) cudaFree(dev);
    dev = nullptr;
  }
};

static uint32_t probe_hash(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}

template <class T>
__global__ void probe_fill_kernel(T *p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 0x9e3779b9U ^ seed;
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    p[i] = T(float((int)(x % 5u) - 2));
  }
}

// Small integers in [-2, 2]. With `host_copy` the values are made on the host and kept for the
// reference; without it (large timed runs) they are made on the device.
template <class T, class Layout>
ProbeTensor<T> probe_tensor(int64_t rows, int64_t cols, uint32_t seed, bool host_copy = true) {
  ProbeTensor<T> t;
  t.rows = rows, t.cols = cols, t.row_major = probe_is_row_major<Layout>();
  cudaMalloc(&t.dev, t.size() * sizeof(T));
  if (!host_copy) {
    probe_fill_kernel<T><<<1024, 256>>>(t.dev, t.size(), seed);
    return t;
  }
  std::vector<T> values(t.size());
  t.host.resize(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    values[i] = T(float((int)(probe_hash((uint32_t)i * 2654435761U + seed) % 5u) - 2));
    t.host[i] = float(values[i]);
  }
  cudaMemcpy(t.dev, values.data(), t.size() * sizeof(T), cudaMemcpyHostToDevice);
  return t;
}

// ---- the host reference --------------------------------------------------------------------------------
// Relative precision of a D element type, used as the default relative tolerance.
template <class T>
double probe_rel_tolerance() {
  if constexpr (std::is_same_v<T, float>) return 1e-6;
  else if constexpr (std::is_same_v<T, cutlass::half_t>) return 1.0 / 1024;
  else if constexpr (std::is_same_v<T, cutlass::bfloat16_t>) return 1.0 / 128;
  else return 1.0 / 8;  // 8-bit floating point outputs
}

// D (M x N) = alpha * A (M x K) * B (K x N) + beta * C, in double. A mismatch is an element with
// |got - want| > atol + rtol * |want|; rtol < 0 picks the default for D's type.
template <class TA, class TB, class TC, class TD>
bool probe_check(const ProbeTensor<TA> &A, const ProbeTensor<TB> &B, const ProbeTensor<TC> *C,
                 const ProbeTensor<TD> &D, float alpha, float beta, double atol = 1e-3, double rtol = -1) {
  if (rtol < 0) rtol = probe_rel_tolerance<TD>();
  std::vector<TD> got(D.size());
  cudaMemcpy(got.data(), D.dev, D.size() * sizeof(TD), cudaMemcpyDeviceToHost);
  const int64_t M = D.rows, N = D.cols, K = A.cols;
  // Transposed copies so that the inner loop is contiguous whatever the layouts.
  std::vector<float> a((size_t)M * K), b((size_t)N * K);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t p = 0; p < K; ++p) a[(size_t)i * K + p] = A.at(i, p);
  for (int64_t j = 0; j < N; ++j)
    for (int64_t p = 0; p < K; ++p) b[(size_t)j * K + p] = B.at(p, j);
  double worst = 0;
  size_t bad = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      const float *ar = &a[(size_t)i * K], *br = &b[(size_t)j * K];
      for (int64_t p = 0; p < K; ++p) acc += (double)ar[p] * br[p];
      double want = alpha * acc + (C && beta != 0.0f ? beta * (double)C->at(i, j) : 0.0);
      double diff = std::fabs((double)float(got[D.index(i, j)]) - want);
      if (std::isnan(diff)) diff = INFINITY;
      if (diff > worst) worst = diff;
      if (!(diff <= atol + rtol * std::fabs(want))) ++bad;
    }
  std::printf("probe: %zu of %lld elements of D outside tolerance (atol=%g rtol=%g)\n", bad, (long long)(M * N),
              atol, rtol);
  std::printf("EVIDENCE numerics %s max_abs_err=%g\n", bad == 0 ? "ok" : "mismatch", worst);
  std::fflush(stdout);
  return bad == 0;
}

// Time `launch` (one GEMM) and print TFLOP/s for an m x n x k problem.
static void probe_tflops(int64_t m, int64_t n, int64_t k, const std::function<void()> &launch, int iters = 20) {
  for (int i = 0; i < 3; ++i) launch();
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
  std::fflush(stdout);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

struct ProbeOptions {
  float alpha = 1.0f, beta = 1.0f;
  double atol = 1e-3, rtol = -1;  // rtol < 0: the default for D's element type
  const char *no_reference = nullptr;  // set: D is not checked (the epilogue has no host reference)
};

// Checks D, or says why it is not checked.
template <class TA, class TB, class TC, class TD>
bool probe_check_or_skip(const ProbeTensor<TA> &A, const ProbeTensor<TB> &B, const ProbeTensor<TC> *C,
                         const ProbeTensor<TD> &D, const ProbeOptions &opt, float beta) {
  if (opt.no_reference) {
    std::printf("EVIDENCE numerics skipped %s\n", opt.no_reference);
    std::fflush(stdout);
    return true;
  }
  return probe_check(A, B, C, D, opt.alpha, beta, opt.atol, opt.rtol);
}

// The kernel's problem shape (M, N, K, L) or (M, N, K) for one GEMM.
template <class ProblemShape>
ProblemShape probe_problem_shape(int M, int N, int K) {
  if constexpr (cute::rank_v<ProblemShape> == 3) return ProblemShape{M, N, K};
  else return ProblemShape{M, N, K, 1};
}

// ---- CUTLASS 3.x: GemmUniversalAdapter<GemmUniversal<Shape<int,int,int,int>, ...>> ----------------------
// Runs D = alpha * A * B + beta * C once at M x N x K with the usual user sequence (packed strides,
// can_implement, initialize with workspace, run), then checks D on the host (`timed` = false) or times it.
// Layouts come from the kernel's strides; element types are the collectives' (user-facing) ones. With
// ElementC = void (no source) C is not read: the kernel gets a null C and the reference uses beta = 0.
template <class Gemm>
bool probe_gemm3x(int M, int N, int K, bool timed = false, ProbeOptions opt = {}) {
  using Kernel = typename Gemm::GemmKernel;
  using ElementA = typename Gemm::ElementA;
  using ElementB = typename Gemm::ElementB;
  using ElementD = typename Gemm::ElementD;
  constexpr bool kHasC = !std::is_void_v<typename Gemm::ElementC>;
  using ElementC = std::conditional_t<kHasC, typename Gemm::ElementC, ElementD>;
  const float beta = kHasC ? opt.beta : 0.0f;
  using LayoutA = cutlass::gemm::detail::StrideToLayoutTagA_t<typename Kernel::StrideA>;
  using LayoutB = cutlass::gemm::detail::StrideToLayoutTagB_t<typename Kernel::StrideB>;
  using LayoutC = cutlass::gemm::detail::StrideToLayoutTagC_t<typename Kernel::StrideC>;
  using LayoutD = cutlass::gemm::detail::StrideToLayoutTagC_t<typename Kernel::StrideD>;

  auto A = probe_tensor<ElementA, LayoutA>(M, K, 1, !timed);
  auto B = probe_tensor<ElementB, LayoutB>(K, N, 2, !timed);
  auto C = probe_tensor<ElementC, LayoutC>(M, N, 3, !timed);
  auto D = probe_tensor<ElementD, LayoutD>(M, N, 4, !timed);  // prefilled, so unwritten elements show

  auto stride_A = cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, {M, K, 1});
  auto stride_B = cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, {N, K, 1});
  auto stride_C = cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, {M, N, 1});
  auto stride_D = cutlass::make_cute_packed_stride(typename Kernel::StrideD{}, {M, N, 1});
  cutlass::KernelHardwareInfo hw_info;
  hw_info.device_id = 0;
  hw_info.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hw_info.device_id);

  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                probe_problem_shape<typename Kernel::ProblemShape>(M, N, K),
                                {A.dev, stride_A, B.dev, stride_B},
                                {{opt.alpha, beta}, kHasC ? C.dev : nullptr, stride_C, D.dev, stride_D},
                                hw_info};
  Gemm gemm;
  void *workspace = nullptr;
  size_t workspace_bytes = Gemm::get_workspace_size(args);
  if (workspace_bytes) cudaMalloc(&workspace, workspace_bytes);

  bool ok = probe_step("can_implement", gemm.can_implement(args)) == cutlass::Status::kSuccess &&
            probe_step("initialize", gemm.initialize(args, workspace)) == cutlass::Status::kSuccess &&
            probe_step("run", gemm.run()) == cutlass::Status::kSuccess;
  ok = probe_sync() == cudaSuccess && ok;
  if (ok && timed) {
    probe_tflops(M, N, K, [&] { gemm.run(); });
    ok = probe_sync() == cudaSuccess;
  } else if (ok) {
    ok = probe_check_or_skip(A, B, &C, D, opt, beta);
  }
  if (workspace) cudaFree(workspace);
  A.release(), B.release(), C.release(), D.release();
  return ok;
}

// ---- CUTLASS 2.x: cutlass::gemm::device::Gemm<...> (and GemmSplitKParallel, GemmUniversal, GemmBatched) ----
// The device GEMMs take their arguments in different forms; Api picks the form (one GEMM, batch count 1).
enum class Probe2x { kGemm, kUniversal, kBatched };

template <class Gemm, Probe2x Api = Probe2x::kGemm>
bool probe_gemm2x(int M, int N, int K, bool timed = false, ProbeOptions opt = {}) {
  using ElementA = typename Gemm::ElementA;
  using ElementB = typename Gemm::ElementB;
  using ElementC = typename Gemm::ElementC;
  using LayoutA = typename Gemm::LayoutA;
  using LayoutB = typename Gemm::LayoutB;
  using LayoutC = typename Gemm::LayoutC;

  auto A = probe_tensor<ElementA, LayoutA>(M, K, 1, !timed);
  auto B = probe_tensor<ElementB, LayoutB>(K, N, 2, !timed);
  auto C = probe_tensor<ElementC, LayoutC>(M, N, 3, !timed);
  auto D = probe_tensor<ElementC, LayoutC>(M, N, 4, !timed);

  auto make_args = [&]() -> typename Gemm::Arguments {
    if constexpr (Api == Probe2x::kUniversal) {
      return typename Gemm::Arguments(cutlass::gemm::GemmUniversalMode::kGemm, {M, N, K}, 1, {opt.alpha, opt.beta},
                                      A.dev, B.dev, C.dev, D.dev, (int64_t)M * K, (int64_t)K * N, (int64_t)M * N,
                                      (int64_t)M * N, LayoutA::packed({M, K}).stride(),
                                      LayoutB::packed({K, N}).stride(), LayoutC::packed({M, N}).stride(),
                                      LayoutC::packed({M, N}).stride());
    } else if constexpr (Api == Probe2x::kBatched) {
      return typename Gemm::Arguments({M, N, K}, {A.dev, LayoutA::packed({M, K})}, (int64_t)M * K,
                                      {B.dev, LayoutB::packed({K, N})}, (int64_t)K * N,
                                      {C.dev, LayoutC::packed({M, N})}, (int64_t)M * N,
                                      {D.dev, LayoutC::packed({M, N})}, (int64_t)M * N, {opt.alpha, opt.beta}, 1);
    } else {
      return typename Gemm::Arguments{{M, N, K},
                                      {A.dev, LayoutA::packed({M, K})},
                                      {B.dev, LayoutB::packed({K, N})},
                                      {C.dev, LayoutC::packed({M, N})},
                                      {D.dev, LayoutC::packed({M, N})},
                                      {opt.alpha, opt.beta}};
    }
  };
  typename Gemm::Arguments args = make_args();
  Gemm gemm;
  void *workspace = nullptr;
  size_t workspace_bytes = Gemm::get_workspace_size(args);
  if (workspace_bytes) cudaMalloc(&workspace, workspace_bytes);

  bool ok = probe_step("can_implement", gemm.can_implement(args)) == cutlass::Status::kSuccess &&
            probe_step("initialize", gemm.initialize(args, workspace)) == cutlass::Status::kSuccess &&
            probe_step("run", gemm.run()) == cutlass::Status::kSuccess;
  ok = probe_sync() == cudaSuccess && ok;
  if (ok && timed) {
    probe_tflops(M, N, K, [&] { gemm.run(); });
    ok = probe_sync() == cudaSuccess;
  } else if (ok) {
    ok = probe_check_or_skip(A, B, &C, D, opt, opt.beta);
  }
  if (workspace) cudaFree(workspace);
  A.release(), B.release(), C.release(), D.release();
  return ok;
}
