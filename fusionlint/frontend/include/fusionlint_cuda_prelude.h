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
