/* fusionlint CUDA prelude: force-included before every CUDA translation unit, as nvcc
   pre-includes cuda_runtime.h. Defines nvcc's version macros (nvcc 13.0 by default; a
   project may override them with -D). The runtime header is the toolkit's when one is on
   the include path, otherwise fusionlint's stand-in. */
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 13
#endif
#ifndef __CUDACC_VER_MINOR__
#define __CUDACC_VER_MINOR__ 0
#endif
#ifndef __CUDACC_VER_BUILD__
#define __CUDACC_VER_BUILD__ 0
#endif
#ifndef __CUDA_API_VER_MAJOR__
#define __CUDA_API_VER_MAJOR__ __CUDACC_VER_MAJOR__
#endif
#ifndef __CUDA_API_VER_MINOR__
#define __CUDA_API_VER_MINOR__ __CUDACC_VER_MINOR__
#endif
#define __FUSIONLINT__ 1
/* Execution-space keywords as clang's CUDA mode spells them; the toolkit's host_defines.h
   keeps a definition it finds in place when __CUDACC__ is not defined. */
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __constant__
#define __constant__ __attribute__((constant))
#endif
#ifndef __managed__
#define __managed__ __attribute__((managed))
#endif
#include <cuda_runtime.h>
/* clang lowers kernel<<<grid, block, smem, stream>>>(...) to this call. */
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, __SIZE_TYPE__ sharedMem = 0,
                                                 void *stream = 0);
#ifndef FUSIONLINT_CUDA_RUNTIME_H
/* The toolkit's headers declare the builtin variables only for nvcc itself. */
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;
extern "C" __device__ int printf(const char *, ...);
extern "C" __device__ void __assertfail(const char *, const char *, unsigned, const char *, __SIZE_TYPE__);
#endif
/* Host-mode toolkit headers leave these undefined; device code uses them. */
#ifndef __launch_bounds__
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#endif
#ifndef __grid_constant__
#define __grid_constant__
#endif
#ifndef __cluster_dims__
#define __cluster_dims__(...)
#endif
/* Instantiated mode (the CUTLASS headers and the CUDA toolkit's on the include path): fusionlint
   parses the host side only (no __CUDA_ARCH__), but as nvcc compiles for sm_90a, the bodies of
   CUTLASS's kernels and of the collectives' __device__ members must be instantiated too, since
   that is where many of CUTLASS's static_asserts are. Those bodies are compiled only under the
   sm_90a feature macro, and CuTe marks its functions __host__ __device__ only under __CUDACC__
   (defined here after the toolkit's runtime header, so that header keeps its host reading).
   The bodies call device intrinsics that nvcc (or clang's CUDA runtime wrapper) provides:
   their declarations follow, deliberately permissive (templates) -- only declarations, nothing
   here is ever run, and a call the real intrinsic would reject is not what fusionlint checks.
   -DFUSIONLINT_NO_DEVICE_BODIES turns this off. */
#if !defined(__CUDA_ARCH__) && !defined(FUSIONLINT_NO_DEVICE_BODIES) && defined(__has_include)
/* (a header only CUTLASS itself includes: an empty stand-in for a missing cutlass/cutlass.h must not count) */
#if __has_include(<cutlass/detail/helper_macros.hpp>) && __has_include(<crt/host_defines.h>) && !defined(__CUDACC__)
#define FUSIONLINT_DEVICE_BODIES 1
/* the reader asks the parsed unit for this name to know that device bodies were instantiated */
namespace fusionlint_device_bodies {}
#include <cuda.h>

/* warp-level */
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
template <class T> __device__ T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32);
template <class T> __device__ T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32);
template <class T> __device__ T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32);
__device__ unsigned __ballot_sync(unsigned mask, int predicate);
__device__ int __all_sync(unsigned mask, int predicate);
__device__ int __any_sync(unsigned mask, int predicate);
__device__ unsigned __activemask();
template <class T> __device__ unsigned __match_any_sync(unsigned mask, T value);
template <class T> __device__ T __reduce_add_sync(unsigned mask, T value);
template <class T> __device__ T __reduce_max_sync(unsigned mask, T value);
template <class T> __device__ T __reduce_min_sync(unsigned mask, T value);

/* block-level */
__device__ void __syncthreads();
__device__ int __syncthreads_and(int predicate);
__device__ int __syncthreads_or(int predicate);
__device__ int __syncthreads_count(int predicate);
__device__ void __threadfence();
__device__ void __threadfence_block();
__device__ void __threadfence_system();
__device__ void __nanosleep(unsigned ns);
__device__ void __trap();
__device__ void __brkpt();

/* integer and bit intrinsics */
__device__ unsigned __byte_perm(unsigned x, unsigned y, unsigned s);
template <class T> __device__ T __dp4a(T a, T b, T c);
template <class T, class U> __device__ T __dp2a_lo(T a, U b, T c);
template <class T, class U> __device__ T __dp2a_hi(T a, U b, T c);
__device__ int __ffs(int x);
__device__ int __ffsll(long long x);
__device__ int __popc(unsigned x);
__device__ int __popcll(unsigned long long x);
__device__ int __clz(int x);
__device__ int __clzll(long long x);
__device__ unsigned __brev(unsigned x);
__device__ unsigned long long __brevll(unsigned long long x);
__device__ unsigned __umulhi(unsigned x, unsigned y);
__device__ unsigned long long __umul64hi(unsigned long long x, unsigned long long y);
__device__ int __mulhi(int x, int y);
__device__ unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift);
__device__ unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift);

/* float intrinsics */
__device__ float __fmaf_rn(float, float, float);
__device__ float __fdividef(float, float);
__device__ float __expf(float);
__device__ float __logf(float);
__device__ float __frcp_rn(float);
__device__ int __float_as_int(float);
__device__ float __int_as_float(int);
__device__ unsigned __float_as_uint(float);
__device__ float __uint_as_float(unsigned);
__device__ int __float2int_rn(float);
__device__ int __float2int_rz(float);
__device__ unsigned __float2uint_rz(float);
__device__ unsigned __float2uint_rn(float);
__device__ long long __double_as_longlong(double);
__device__ double __longlong_as_double(long long);
template <class T> __device__ T __hfma2(T, T, T);
template <class T> __device__ T __hfma(T, T, T);
template <class T> __device__ T __hfma2_relu(T, T, T);
template <class T> __device__ T __hfma_relu(T, T, T);

/* atomics */
template <class T, class U> __device__ T atomicAdd(T *address, U value);
template <class T, class U> __device__ T atomicSub(T *address, U value);
template <class T, class U> __device__ T atomicExch(T *address, U value);
template <class T, class U> __device__ T atomicMin(T *address, U value);
template <class T, class U> __device__ T atomicMax(T *address, U value);
template <class T, class U> __device__ T atomicAnd(T *address, U value);
template <class T, class U> __device__ T atomicOr(T *address, U value);
template <class T, class U> __device__ T atomicXor(T *address, U value);
template <class T, class U> __device__ T atomicInc(T *address, U value);
template <class T, class U> __device__ T atomicDec(T *address, U value);
template <class T, class U, class V> __device__ T atomicCAS(T *address, U compare, V value);

/* memory spaces and loads */
__device__ unsigned long long __cvta_generic_to_shared(const void *);
__device__ unsigned long long __cvta_generic_to_global(const void *);
__device__ void *__cvta_shared_to_generic(unsigned long long);
__device__ unsigned __isShared(const void *);
__device__ unsigned __isGlobal(const void *);
template <class T> __device__ T __ldg(const T *);
template <class T> __device__ T __ldcg(const T *);
template <class T> __device__ T __ldcs(const T *);
template <class T> __device__ T __ldlu(const T *);
template <class T> __device__ void __stcg(T *, T);
template <class T> __device__ void __stcs(T *, T);
template <class T> __device__ void __stwt(T *, T);
__device__ long long clock64();
__device__ int clock();
__device__ unsigned long long __globaltimer();

/* conversions the toolkit's cuda_fp16.hpp / cuda_bf16.hpp call from device code */
__device__ float __fsub_rn(float, float);
__device__ float __fadd_rn(float, float);
__device__ float __fmul_rn(float, float);
__device__ float __fmaf_ieee_rn(float, float, float);
__device__ float __int2float_rn(int);
__device__ float __int2float_rz(int);
__device__ float __int2float_ru(int);
__device__ float __int2float_rd(int);
__device__ float __uint2float_rn(unsigned);
__device__ float __uint2float_rz(unsigned);
__device__ float __uint2float_ru(unsigned);
__device__ float __uint2float_rd(unsigned);
__device__ float __ll2float_rn(long long);
__device__ float __ll2float_rz(long long);
__device__ float __ll2float_ru(long long);
__device__ float __ll2float_rd(long long);
__device__ float __ull2float_rn(unsigned long long);
__device__ float __ull2float_rz(unsigned long long);
__device__ float __ull2float_ru(unsigned long long);
__device__ float __ull2float_rd(unsigned long long);
__device__ int __float2int_ru(float);
__device__ int __float2int_rd(float);
__device__ unsigned __float2uint_ru(float);
__device__ unsigned __float2uint_rd(float);
__device__ long long __float2ll_rn(float);
__device__ long long __float2ll_rz(float);
__device__ long long __float2ll_ru(float);
__device__ long long __float2ll_rd(float);
__device__ unsigned long long __float2ull_rn(float);
__device__ unsigned long long __float2ull_rz(float);
__device__ unsigned long long __float2ull_ru(float);
__device__ unsigned long long __float2ull_rd(float);

/* the C library's math and memory functions as device code sees them */
__device__ float tanhf(float);
__device__ float truncf(float);
__device__ float rintf(float);
__device__ float fabsf(float);
__device__ float sinf(float);
__device__ float cosf(float);
__device__ float expf(float);
__device__ float exp2f(float);
__device__ float logf(float);
__device__ float log2f(float);
__device__ float sqrtf(float);
__device__ float rsqrtf(float);
__device__ float fmaxf(float, float);
__device__ float fminf(float, float);
__device__ float floorf(float);
__device__ float ceilf(float);
__device__ float erff(float);
__device__ float powf(float, float);
__device__ float fmaf(float, float, float);
extern "C" __device__ void *memcpy(void *, const void *, __SIZE_TYPE__);
extern "C" __device__ void *memset(void *, int, __SIZE_TYPE__);

/* the runtime API's templates that the toolkit's cuda_runtime.h defines only for nvcc */
template <class T, class A> cudaError_t cudaFuncSetAttribute(T *entry, A attr, int value);
template <class T> cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *entry);
template <class T> cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *num_blocks, T func, int block_size,
                                                                             __SIZE_TYPE__ dynamic_smem);
template <class T, class C> cudaError_t cudaOccupancyMaxActiveClusters(int *num_clusters, T *func, const C *config);
template <class C, class... E, class... A> cudaError_t cudaLaunchKernelEx(const C *config, void (*kernel)(E...),
                                                                         A &&...args);

/* the C assert of device code (clang's CUDA wrapper declares a device overload as well) */
extern "C" __device__ void __assert_fail(const char *message, const char *file, unsigned line,
                                         const char *function);

#define __CUDACC__ 1
#ifndef __CUDA_ARCH_FEAT_SM90_ALL
#define __CUDA_ARCH_FEAT_SM90_ALL 1
#endif
#endif
#endif
