/* fusionlint stand-in for cuda_fp16.h: the 16-bit float storage types. */
#ifndef FUSIONLINT_CUDA_FP16_H
#define FUSIONLINT_CUDA_FP16_H
struct __attribute__((aligned(2))) __half { unsigned short __x; };
struct __attribute__((aligned(4))) __half2 { __half x, y; };
typedef struct __half half;
typedef struct __half2 half2;
typedef struct { unsigned short x; } __half_raw;
#endif
