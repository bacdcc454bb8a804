/* fusionlint stand-in for the CUDA toolkit's cuda_runtime_api.h: the runtime calls host code
   makes around a GEMM (allocation, copies, streams, events, device queries). */
#ifndef FUSIONLINT_CUDA_RUNTIME_API_H
#define FUSIONLINT_CUDA_RUNTIME_API_H
#include <stddef.h>
#include <driver_types.h>
#include <vector_types.h>
#define CUDART_VERSION 13000
#ifdef __cplusplus
extern "C" {
#endif
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value);
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
cudaError_t cudaDriverGetVersion(int *driverVersion);
#ifdef __cplusplus
}
template <class T> static inline cudaError_t cudaMalloc(T **devPtr, size_t size) { return ::cudaMalloc((void **)(void *)devPtr, size); }
template <class T> static inline cudaError_t cudaMallocHost(T **ptr, size_t size) { return ::cudaMallocHost((void **)(void *)ptr, size); }
template <class T> static inline cudaError_t cudaMallocAsync(T **devPtr, size_t size, cudaStream_t s) { return ::cudaMallocAsync((void **)(void *)devPtr, size, s); }
template <class T> static inline cudaError_t cudaFuncSetAttribute(T *entry, enum cudaFuncAttribute attr, int value) { return ::cudaFuncSetAttribute((const void *)entry, attr, value); }
#endif
#endif
