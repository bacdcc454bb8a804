/* fusionlint stand-in for the CUDA toolkit's cuda_runtime.h: execution-space keywords,
   launch bounds, builtin variables and device-side declarations, so that CUDA sources parse
   (host side) without a toolkit. */
#ifndef FUSIONLINT_CUDA_RUNTIME_H
#define FUSIONLINT_CUDA_RUNTIME_H
#include <cuda_runtime_api.h>
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
#ifndef __forceinline__
#define __forceinline__ __inline__ __attribute__((always_inline))
#endif
#ifndef __noinline__
#define __noinline__ __attribute__((noinline))
#endif
#ifndef __restrict__
#define __restrict__ __restrict
#endif
#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif
#ifndef __device_builtin__
#define __device_builtin__
#endif
#ifndef __grid_constant__
#define __grid_constant__
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#endif
#ifndef __cluster_dims__
#define __cluster_dims__(...)
#endif
#ifdef __cplusplus
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;
extern "C" {
__device__ int printf(const char *, ...);
__device__ void __assertfail(const char *, const char *, unsigned, const char *, size_t);
}
__device__ void __syncthreads(void);
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ void __threadfence(void);
__device__ unsigned __activemask(void);
__device__ int atomicAdd(int *, int);
__device__ unsigned atomicAdd(unsigned *, unsigned);
__device__ float atomicAdd(float *, float);
__device__ double atomicAdd(double *, double);
__device__ int atomicMax(int *, int);
__device__ int atomicCAS(int *, int, int);
__device__ float __shfl_sync(unsigned, float, int, int = 32);
__device__ int __shfl_sync(unsigned, int, int, int = 32);
__device__ float __shfl_xor_sync(unsigned, float, int, int = 32);
__device__ int __shfl_xor_sync(unsigned, int, int, int = 32);
__device__ float __shfl_down_sync(unsigned, float, unsigned, int = 32);
__device__ float __fdividef(float, float);
__device__ float __expf(float);
__device__ long long clock64(void);
#endif
#endif
