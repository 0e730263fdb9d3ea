/* Where the dynamic loader would find a DT_NEEDED library: glibc's order
 * (DT_RPATH of the requester and its loaders when the requester has no
 * DT_RUNPATH, LD_LIBRARY_PATH, the requester's DT_RUNPATH, the ld.so cache,
 * the default directories), with $ORIGIN, $LIB and $PLATFORM expanded. A
 * candidate counts only when it is an ELF file of the requester's machine
 * and class, as ld.so skips others. */
#ifndef CERT_LIB_SEARCH_H_
#define CERT_LIB_SEARCH_H_

#include <stddef.h>

typedef struct {
  const char* path;    /* the requesting object's file (for $ORIGIN) */
  const char* rpath;   /* its DT_RPATH or NULL */
  const char* runpath; /* its DT_RUNPATH or NULL */
} CertSearchScope;

/* Searches for `name` on behalf of scopes[0] (the requester); scopes[1..n)
 * are its loaders, nearest first, whose DT_RPATH also applies when the
 * requester has no DT_RUNPATH. `machine` and `elf_class` (1 = 32-bit,
 * 2 = 64-bit) select acceptable files. Writes the path found into `out` and
 * returns 1, or returns 0 and writes into `out` where it looked (one line,
 * truncated to outlen). */
int cert_search_library(const char* name, const CertSearchScope* scopes, size_t n_scopes,
                        int machine, int elf_class, char* out, size_t outlen);

/* For a library only the NVIDIA driver installs ("libcuda.so.1",
 * "libnvidia-ml.so.1"): the file name of the stub the CUDA toolkit ships
 * for it in its lib64/stubs folder ("libcuda.so"), into buf; 1, or 0 when
 * `needed` is not a driver library. A machine without a GPU lacks these:
 * that is the machine's gap, not the library's. */
/* The folder of `path` into out (at most `size` bytes): "." when it has
 * no '/', "/" for a file at the root. */
void cert_dirname(const char* path, char* out, size_t size);

int cert_driver_stub_name(const char* needed, char* buf, size_t size);

/* The ELF machine and class of a file, or -1 when it is not a readable ELF. */
int cert_elf_ident(const char* path, int* machine, int* elf_class);

#endif
