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
  int is_weak;     /* STB_WEAK */
  /* A dynamic relocation names it: the loader resolves it, at load or (see
   * is_lazy) at the first call that reaches it. An undefined symbol nothing
   * relocates against is never looked up. */
  int is_referenced;
  /* Every relocation naming it is a PLT slot (a function call): with lazy
   * binding, as hosts load kernel libraries, the loader looks it up only
   * when a call first reaches it, not when the library loads. */
  int is_lazy;
  size_t index;    /* its index in .dynsym */
  /* Where the symbol's bytes lie in the file (defined symbols in a section
   * with file contents): `file_bytes` bytes from `file_offset`, never past
   * the end of the section or the file, and at most `size`. 0 bytes when the
   * symbol has none (undefined, .bss, absolute). */
  size_t file_offset;
  size_t file_bytes;
  unsigned long long value; /* st_value */
} CertSymbol;

typedef struct {
  CertSymbol* items;
  size_t n;
} CertSymbols;

/* An allocated section with file contents: where the loaded address range
 * [addr, addr + size) comes from in the file. */
typedef struct {
  unsigned long long addr;
  size_t offset;
  size_t size;
} CertSection;

typedef struct {
  char* path;
  int is_shared_object; /* ET_DYN */
  int machine;          /* e_machine */
  int elf_class;        /* ELFCLASS32 (1) or ELFCLASS64 (2) */
  CertSymbols exports;  /* defined, global/weak, default/protected visibility */
  CertSymbols imports;  /* undefined dynamic symbols */
  char** needed;        /* DT_NEEDED, in order */
  size_t n_needed;
  char* rpath;          /* DT_RPATH or NULL */
  char* runpath;        /* DT_RUNPATH or NULL */
  char* soname;         /* DT_SONAME or NULL */
  /* The file itself, for checks that read symbol bytes: mapped privately
   * from the file (only the pages read cost memory, so a 500 MB needed
   * library costs its headers), or a private copy for cert_elf_read_memory. */
  unsigned char* image;
  size_t image_size;
  int image_mapped;     /* image is an mmap of image_size bytes */
  int bind_now;         /* DT_BIND_NOW, DF_BIND_NOW or DF_1_NOW: every symbol bound at load */
  /* R_*_RELATIVE relocations of the dynamic relocation table, sorted by
   * offset: what a pointer variable in the file points to once loaded. */
  unsigned long long* relative_offsets;
  unsigned long long* relative_addends;
  size_t n_relative;
  CertSection* sections;
  size_t n_sections;
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

/* The exported (or, with imports=1, imported) symbol named `name`, or NULL. */
const CertSymbol* cert_elf_find(const CertElf* elf, const char* name, int imports);

/* The file bytes at virtual address `vaddr` (the loaded image's address),
 * at most `max` of them and never past their section or the file. Returns
 * the count (0 when the address has no file contents) and sets *bytes. */
size_t cert_elf_bytes_at(const CertElf* elf, unsigned long long vaddr, size_t max,
                         const unsigned char** bytes);

/* The exported __tvm_ffi_<name> functions a caller may call: those that
 * are functions and are not the reserved __tvm_ffi__* metadata names.
 * Fills at most `max` of `names` (borrowed from `elf`, no prefix) and
 * returns how many it filled; with names == NULL, returns how many there are. */
size_t cert_elf_callable(const CertElf* elf, const char** names, size_t max);

/* All static checks (symbols, library_bin, metadata, imports against the
 * runtime at `runtime_path`, DT_NEEDED resolution, release range, CUDA
 * stream use), appended to `out`. Returns 0, or -1 on a tool error (out of
 * memory). Check ids (spec/certify_static.md): static.exports,
 * static.export-kind, static.reserved-kind, static.library-bin,
 * static.metadata, static.doc, static.described-exists,
 * static.runtime-needed, static.cuda-stream, static.releases do not
 * depend on the runtime (their `runtime` is ""). static.runtime-imports,
 * static.needed-found (the runtime answers to DT_NEEDED libtvm_ffi.so by
 * its soname), static.runtime-findable and static.undefined do: their
 * `runtime` is `runtime_path`. An unreadable runtime
 * makes runtime-imports and undefined a SKIP with the reason. Functions
 * named in findings are without the __tvm_ffi_ prefix. */
int cert_static_checks(const CertElf* elf, const char* runtime_path, CertFindings* out);

/* What the process the library is loaded into holds besides the runtime,
 * for the loader model: the objects LD_PRELOAD names (loaded before
 * anything else, so they answer DT_NEEDED by soname and define symbols),
 * and where the CUDA toolkit's driver stubs are, which certify loads in
 * place of an NVIDIA driver this machine lacks (the dynamic stage does the
 * same). */
typedef struct {
  const char* preload;      /* LD_PRELOAD's value (spaces or colons between), or NULL */
  const char* driver_stubs; /* a folder holding libcuda.so and friends, or NULL */
} CertLoadEnv;

/* cert_static_checks with the loader environment spelt out; the plain
 * one uses LD_PRELOAD from the environment and no driver stubs. */
int cert_static_checks_in(const CertElf* elf, const char* runtime_path, const CertLoadEnv* env,
                          CertFindings* out);

/* A C++ symbol of upstream's tvm::ffi namespace (`_ZN3tvm3ffi...`): only
 * upstream's libtvm_ffi.so defines these; the C ABI has none. */
int cert_is_upstream_cxx_symbol(const char* name);

#endif
