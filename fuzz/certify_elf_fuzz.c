/*
 * Fuzz harness: certify's whole static stage on an untrusted file. The
 * input is read with cert_elf_read_memory (libelf on a private copy), then
 * cert_static_checks runs every check with the same bytes written to a
 * temporary file as the runtime (so cert_elf_read of a hostile runtime is
 * fuzzed too), including the loader model's library search and the
 * library_bin, metadata (Jansson) and release-table paths.
 *
 * Invariants: a refused file comes with a reason; a read file's symbol
 * bytes lie inside the file and its callable names are exports; the checks
 * return 0 (only running out of memory is a tool error) and every finding
 * has a check id, a known verdict and a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz_common.h"
#include "tools/certify/elf_facts.h"

static char runtime_path[4096];

static void remove_runtime(void) { unlink(runtime_path); }

/* One temporary file per process, rewritten for every input. */
static const char* write_runtime(const uint8_t* data, size_t size) {
  if (runtime_path[0] == '\0') {
    const char* dir = getenv("TEST_TMPDIR");
    snprintf(runtime_path, sizeof runtime_path, "%s/certify_elf_fuzz_%d.so", dir ? dir : "/tmp",
             (int)getpid());
    atexit(remove_runtime);
  }
  FILE* f = fopen(runtime_path, "wb");
  if (f == NULL) return NULL;
  size_t put = fwrite(data, 1, size, f);
  fclose(f);
  return put == size ? runtime_path : NULL;
}

static void check_symbols(const CertElf* elf, const CertSymbols* list) {
  for (size_t i = 0; i < list->n; ++i) {
    const CertSymbol* s = &list->items[i];
    FUZZ_CHECK(s->name != NULL && s->name[0] != '\0', "a symbol without a name");
    FUZZ_CHECK(
        s->file_offset <= elf->image_size && s->file_bytes <= elf->image_size - s->file_offset,
        "%s: bytes [%zu, +%zu) outside the %zu-byte file", s->name, s->file_offset, s->file_bytes,
        elf->image_size);
    FUZZ_CHECK(s->file_bytes <= s->size, "%s: %zu file bytes for a %zu-byte symbol", s->name,
               s->file_bytes, s->size);
  }
}

static void check_facts(const CertElf* elf, size_t size) {
  FUZZ_CHECK(elf->image_size == size, "image of %zu bytes for a %zu-byte input", elf->image_size,
             size);
  check_symbols(elf, &elf->exports);
  check_symbols(elf, &elf->imports);
  for (size_t i = 0; i < elf->n_sections; ++i) {
    const CertSection* s = &elf->sections[i];
    FUZZ_CHECK(s->offset <= size && s->size <= size - s->offset, "a section outside the file");
  }
  const char* names[8];
  size_t n = cert_elf_callable(elf, names, 8);
  FUZZ_CHECK(n <= 8, "cert_elf_callable filled %zu of 8", n);
  for (size_t i = 0; i < n; ++i) {
    char full[4096];
    snprintf(full, sizeof full, "__tvm_ffi_%s", names[i]);
    const CertSymbol* s = cert_elf_find(elf, full, 0);
    FUZZ_CHECK(s != NULL && s->is_function, "callable %s is not an exported function", names[i]);
  }
}

static void check_findings(const CertFindings* f) {
  for (size_t i = 0; i < f->n; ++i) {
    const CertFinding* x = &f->items[i];
    FUZZ_CHECK(strncmp(x->check, "static.", 7) == 0, "check id '%s'", x->check);
    FUZZ_CHECK(x->verdict >= CERT_PASS && x->verdict <= CERT_FAIL, "verdict %d", (int)x->verdict);
    FUZZ_CHECK(x->reason[0] != '\0', "%s came without a reason", x->check);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CertElf elf;
  char err[256] = "";
  if (cert_elf_read_memory(data, size, &elf, err, sizeof err) != 0) {
    FUZZ_CHECK(err[0] != '\0', "a refused file came without a reason");
    return 0;
  }
  check_facts(&elf, size);
  CertFindings findings = {0};
  const char* runtime = write_runtime(data, size);
  int rc = cert_static_checks(&elf, runtime, &findings);
  FUZZ_CHECK(rc == 0, "cert_static_checks returned %d", rc);
  check_findings(&findings);
  cert_findings_free(&findings);
  cert_elf_free(&elf);
  return 0;
}
