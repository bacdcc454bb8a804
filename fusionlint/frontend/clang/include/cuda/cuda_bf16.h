/* fusionlint stand-in for cuda_bf16.h: the bfloat16 storage types. */
#ifndef FUSIONLINT_CUDA_BF16_H
#define FUSIONLINT_CUDA_BF16_H
#include <cuda_fp16.h>
struct __attribute__((aligned(2))) __nv_bfloat16 { unsigned short __x; };
struct __attribute__((aligned(4))) __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef struct __nv_bfloat16 nv_bfloat16;
typedef struct __nv_bfloat162 nv_bfloat162;
#endif
