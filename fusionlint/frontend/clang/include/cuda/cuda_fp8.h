/* fusionlint stand-in for cuda_fp8.h: the 8-bit float storage types. */
#ifndef FUSIONLINT_CUDA_FP8_H
#define FUSIONLINT_CUDA_FP8_H
#include <cuda_bf16.h>
typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
struct __nv_fp8_e4m3 { __nv_fp8_storage_t __x; };
struct __nv_fp8_e5m2 { __nv_fp8_storage_t __x; };
struct __nv_fp8x2_e4m3 { __nv_fp8x2_storage_t __x; };
struct __nv_fp8x2_e5m2 { __nv_fp8x2_storage_t __x; };
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;
#endif
