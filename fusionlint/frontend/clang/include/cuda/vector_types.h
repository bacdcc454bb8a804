/* fusionlint stand-in for the CUDA toolkit's vector_types.h. */
#ifndef FUSIONLINT_VECTOR_TYPES_H
#define FUSIONLINT_VECTOR_TYPES_H
struct uint3 { unsigned int x, y, z; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
typedef struct uint3 uint3;
struct dim3 {
  unsigned int x, y, z;
#ifdef __cplusplus
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
#endif
};
typedef struct dim3 dim3;
#endif
