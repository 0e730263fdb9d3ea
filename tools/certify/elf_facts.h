/* What certify learns from a library file without running it, read with
 * elfutils' libelf. Everything here comes from an untrusted file: every
 * count and string is bounded by the file's own size. */
#ifndef CERT_ELF_FACTS_H_
#define CERT_ELF_FACTS_H_

#include <stddef.h>

#include "elf_build.h"
#include "elf_image.h"
#include "finding.h"

/* Reads `path`. Returns 0, or -1 with a one-line reason in `err`; on
 * failure `out` holds nothing that needs freeing. Never aborts on a
 * malformed file. */
int cert_elf_read(const char* path, CertElf* out, char* err, size_t errlen);

/* Same, from a file image in memory (the fuzz harness's entry). */
int cert_elf_read_memory(const void* image, size_t size, CertElf* out, char* err, size_t errlen);

void cert_elf_free(CertElf* elf);

/* The exported (or, with imports=1, imported) symbol named `name`, or NULL. */
const CertSymbol* cert_elf_find(const CertElf* elf, const char* name, int imports);

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
