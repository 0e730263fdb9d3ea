/* What certify learns from a library file without running it, read with
 * elfutils' libelf. Everything here comes from an untrusted file: every
 * count and string is bounded by the file's own size. */
#ifndef CERT_ELF_FACTS_H_
#define CERT_ELF_FACTS_H_

#include <stddef.h>

#include "finding.h"

typedef struct {
  char* name;      /* the full symbol name, e.g. "__tvm_ffi_scale" */
  int is_function; /* STT_FUNC (or STT_GNU_IFUNC) rather than data */
  size_t size;     /* st_size */
} CertSymbol;

typedef struct {
  CertSymbol* items;
  size_t n;
} CertSymbols;

typedef struct {
  char* path;
  int is_shared_object; /* ET_DYN */
  int machine;          /* e_machine */
  CertSymbols exports;  /* defined, global/weak, default/protected visibility */
  CertSymbols imports;  /* undefined dynamic symbols */
  char** needed;        /* DT_NEEDED, in order */
  size_t n_needed;
  char* rpath;          /* DT_RPATH or NULL */
  char* runpath;        /* DT_RUNPATH or NULL */
  /* Derived, for the dynamic stage: */
  int has_library_bin;  /* exports __tvm_ffi__library_bin */
  int imports_env_get_stream; /* imports TVMFFIEnvGetStream */
  int uses_cuda;        /* imports cudaLaunchKernel/cuLaunchKernel/... or needs libcudart/libcuda */
} CertElf;

/* Reads `path`. Returns 0, or -1 with a one-line reason in `err`; on
 * failure `out` holds nothing that needs freeing. Never aborts on a
 * malformed file. */
int cert_elf_read(const char* path, CertElf* out, char* err, size_t errlen);

/* Same, from a file image in memory (the fuzz harness's entry). */
int cert_elf_read_memory(const void* image, size_t size, CertElf* out, char* err, size_t errlen);

void cert_elf_free(CertElf* elf);

/* The exported __tvm_ffi_<name> functions a caller may call: those that
 * are functions and are not the reserved __tvm_ffi__* metadata names.
 * Returns a count and fills `names` (borrowed from `elf`, no prefix). */
size_t cert_elf_callable(const CertElf* elf, const char** names, size_t max);

/* All static checks (symbols, library_bin, metadata, imports against the
 * runtime at `runtime_path`, DT_NEEDED resolution, release range, CUDA
 * stream use), appended to `out`. Returns 0, or -1 on a tool error. */
int cert_static_checks(const CertElf* elf, const char* runtime_path, CertFindings* out);

#endif
