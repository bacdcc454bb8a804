/* fusionlint stand-in for <stdio.h>, used only when no C library header is found. */
#ifndef FUSIONLINT_STDIO_H
#define FUSIONLINT_STDIO_H
#include <stddef.h>
#include <stdarg.h>
typedef struct _FUSIONLINT_FILE FILE;
extern FILE *stdin, *stdout, *stderr;
#ifdef __cplusplus
extern "C" {
#endif
int printf(const char *, ...);
int fprintf(FILE *, const char *, ...);
int snprintf(char *, size_t, const char *, ...);
int sprintf(char *, const char *, ...);
int vfprintf(FILE *, const char *, va_list);
int puts(const char *);
int fflush(FILE *);
FILE *fopen(const char *, const char *);
int fclose(FILE *);
#ifdef __cplusplus
}
#endif
#endif
