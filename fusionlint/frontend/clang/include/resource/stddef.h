/* fusionlint stand-in for the compiler's <stddef.h> (the PyPI libclang wheel ships no
   resource headers). Used only when no other stddef.h is found on the include path. */
#ifndef FUSIONLINT_STDDEF_H
#define FUSIONLINT_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#ifndef __cplusplus
typedef __WCHAR_TYPE__ wchar_t;
#endif
typedef struct { long long __fl_ll; long double __fl_ld; } max_align_t;
#if defined(__cplusplus) && __cplusplus >= 201103L
typedef decltype(nullptr) nullptr_t;
#endif
#endif
#undef NULL
#ifdef __cplusplus
#define NULL __null
#else
#define NULL ((void *)0)
#endif
#ifndef offsetof
#define offsetof(t, d) __builtin_offsetof(t, d)
#endif
#undef __need_size_t
#undef __need_ptrdiff_t
#undef __need_wchar_t
#undef __need_NULL
#undef __need_wint_t
#ifndef FUSIONLINT_WINT_T
#define FUSIONLINT_WINT_T
typedef __WINT_TYPE__ wint_t;
#endif
