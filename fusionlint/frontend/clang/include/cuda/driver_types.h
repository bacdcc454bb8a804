/* fusionlint stand-in for the CUDA toolkit's driver_types.h (used only when the toolkit's
   headers are not on the include path). Declares what host code needs to type-check. */
#ifndef FUSIONLINT_DRIVER_TYPES_H
#define FUSIONLINT_DRIVER_TYPES_H
#include <stddef.h>
enum cudaError {
  cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3, cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17, cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100, cudaErrorInvalidDevice = 101, cudaErrorNoKernelImageForDevice = 209,
  cudaErrorIllegalAddress = 700, cudaErrorLaunchFailure = 719, cudaErrorNotSupported = 801,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4
};
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUgraph_st *cudaGraph_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;
struct cudaDeviceProp {
  char name[256]; size_t totalGlobalMem; size_t sharedMemPerBlock; int regsPerBlock;
  int warpSize; int maxThreadsPerBlock; int maxThreadsDim[3]; int maxGridSize[3];
  int major; int minor; int multiProcessorCount; size_t sharedMemPerBlockOptin;
  size_t l2CacheSize; int clockRate;
};
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9
};
#endif
