/* The ELF facts of one library file as data: what elf_facts.h reads and
 * every check reads from. */
#ifndef CERT_ELF_IMAGE_H_
#define CERT_ELF_IMAGE_H_

#include <stddef.h>

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
  size_t index; /* its index in .dynsym */
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
  char* rpath;   /* DT_RPATH or NULL */
  char* runpath; /* DT_RUNPATH or NULL */
  char* soname;  /* DT_SONAME or NULL */
  /* The file itself, for checks that read symbol bytes: mapped privately
   * from the file (only the pages read cost memory, so a 500 MB needed
   * library costs its headers), or a private copy for cert_elf_read_memory. */
  unsigned char* image;
  size_t image_size;
  int image_mapped; /* image is an mmap of image_size bytes */
  int bind_now;     /* DT_BIND_NOW, DF_BIND_NOW or DF_1_NOW: every symbol bound at load */
  /* R_*_RELATIVE relocations of the dynamic relocation table, sorted by
   * offset: what a pointer variable in the file points to once loaded. */
  unsigned long long* relative_offsets;
  unsigned long long* relative_addends;
  size_t n_relative;
  CertSection* sections;
  size_t n_sections;
  /* Derived, for the dynamic stage: */
  int has_library_bin;        /* exports __tvm_ffi__library_bin */
  int imports_env_get_stream; /* imports TVMFFIEnvGetStream */
  int uses_cuda; /* imports cudaLaunchKernel/cuLaunchKernel/... or needs libcudart/libcuda */
} CertElf;

#endif
