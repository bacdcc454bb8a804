/* fusionlint stand-in for the CUDA driver API header: the version macro host code tests. */
#ifndef FUSIONLINT_CUDA_H
#define FUSIONLINT_CUDA_H
#define CUDA_VERSION 13000
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
#endif
