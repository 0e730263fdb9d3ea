/*
 * Test-only C entry points to the reference's library_bin parser and
 * packer, for the hypothesis property tests (fuzz/gen/libbin_test.py),
 * which load this library with ctypes.
 *
 * The parser's own symbols are internal (tffi_ prefix, hidden), so this
 * library links the runtime statically and exports a handle-based view of
 * a parse result: ctypes never needs to mirror LibbinTree's layout,
 * and a change to that struct is caught here by the compiler.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "tools/libbin/pack.h"
#include "tools/libbin/tree.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  LibbinTree bin;
  int rc;
  char error[512]; /* "Kind: message" of the raised error, if any */
} FuzzParse;

/* The entry points Python reaches through ctypes; no header declares
 * them, so they are declared here (-Wmissing-prototypes). */
EXPORT FuzzParse* fuzz_libbin_parse(const uint8_t* data, size_t size);
EXPORT void fuzz_libbin_free(FuzzParse* p);
EXPORT int fuzz_libbin_rc(const FuzzParse* p);
EXPORT const char* fuzz_libbin_error(const FuzzParse* p);
EXPORT const char* fuzz_libbin_error_field(const FuzzParse* p);
EXPORT size_t fuzz_libbin_error_offset(const FuzzParse* p);
EXPORT uint64_t fuzz_libbin_nbytes(const FuzzParse* p);
EXPORT size_t fuzz_libbin_num_modules(const FuzzParse* p);
EXPORT size_t fuzz_libbin_num_children(const FuzzParse* p);
EXPORT uint64_t fuzz_libbin_indptr(const FuzzParse* p, size_t i);
EXPORT uint64_t fuzz_libbin_child(const FuzzParse* p, size_t j);
EXPORT size_t fuzz_libbin_lib_index(const FuzzParse* p);
EXPORT size_t fuzz_libbin_kind(const FuzzParse* p, size_t i, const char** out);
EXPORT int fuzz_libbin_is_lib(const FuzzParse* p, size_t i);
EXPORT size_t fuzz_libbin_payload(const FuzzParse* p, size_t i, const uint8_t** out);
EXPORT int fuzz_libbin_pack(size_t num_modules, const uint64_t* indptr, size_t num_children,
                            const uint64_t* children, const char* const* kinds,
                            const size_t* kind_sizes, const uint8_t* const* payloads,
                            const size_t* payload_sizes, uint8_t** out, size_t* out_size, char* err,
                            size_t err_cap);
EXPORT void fuzz_libbin_release_blob(uint8_t* blob);

/* Moves the raised error (if any) into `buf` as "Kind: message". */
static void take_error(char* buf, size_t cap) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) {
    snprintf(buf, cap, "(nothing raised)");
    return;
  }
  const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  snprintf(buf, cap, "%.*s: %.*s", (int)cell->kind.size, cell->kind.data, (int)cell->message.size,
           cell->message.data);
  TVMFFIObjectDecRef(err);
}

EXPORT FuzzParse* fuzz_libbin_parse(const uint8_t* data, size_t size) {
  FuzzParse* p = calloc(1, sizeof(*p));
  if (p == NULL) return NULL;
  p->rc = libbin_decode(data, size, &p->bin);
  if (p->rc != 0) take_error(p->error, sizeof p->error);
  return p;
}

EXPORT void fuzz_libbin_free(FuzzParse* p) {
  if (p == NULL) return;
  libbin_tree_free(&p->bin);
  free(p);
}

EXPORT int fuzz_libbin_rc(const FuzzParse* p) { return p->rc; }
EXPORT const char* fuzz_libbin_error(const FuzzParse* p) { return p->error; }
EXPORT const char* fuzz_libbin_error_field(const FuzzParse* p) {
  return p->bin.error_field ? p->bin.error_field : "";
}
EXPORT size_t fuzz_libbin_error_offset(const FuzzParse* p) { return p->bin.error_offset; }
EXPORT uint64_t fuzz_libbin_nbytes(const FuzzParse* p) { return p->bin.nbytes; }
EXPORT size_t fuzz_libbin_num_modules(const FuzzParse* p) { return p->bin.num_modules; }
EXPORT size_t fuzz_libbin_num_children(const FuzzParse* p) { return p->bin.num_children; }
EXPORT uint64_t fuzz_libbin_indptr(const FuzzParse* p, size_t i) { return p->bin.indptr[i]; }
EXPORT uint64_t fuzz_libbin_child(const FuzzParse* p, size_t j) { return p->bin.child_indices[j]; }
EXPORT size_t fuzz_libbin_lib_index(const FuzzParse* p) { return p->bin.lib_index; }

/* Module i's kind and payload: pointer out, size returned. */
EXPORT size_t fuzz_libbin_kind(const FuzzParse* p, size_t i, const char** out) {
  *out = p->bin.entries[i].kind;
  return p->bin.entries[i].kind_size;
}
EXPORT int fuzz_libbin_is_lib(const FuzzParse* p, size_t i) { return p->bin.entries[i].is_lib; }
EXPORT size_t fuzz_libbin_payload(const FuzzParse* p, size_t i, const uint8_t** out) {
  *out = p->bin.entries[i].payload;
  return p->bin.entries[i].payload_size;
}

/*
 * Packs a tree given as flat arrays (kinds and payloads as pointer + size
 * per module; a kind of "_lib" has no payload). Returns 0 with a malloc'd
 * blob in *out (release with fuzz_libbin_release_blob), or -1 with the
 * error text in `err`.
 */
EXPORT int fuzz_libbin_pack(size_t num_modules, const uint64_t* indptr, size_t num_children,
                            const uint64_t* children, const char* const* kinds,
                            const size_t* kind_sizes, const uint8_t* const* payloads,
                            const size_t* payload_sizes, uint8_t** out, size_t* out_size, char* err,
                            size_t err_cap) {
  TffiLibraryBinEntry* entries = calloc(num_modules ? num_modules : 1, sizeof(*entries));
  if (entries == NULL) return -1;
  for (size_t i = 0; i < num_modules; ++i) {
    entries[i].kind = kinds[i];
    entries[i].kind_size = kind_sizes[i];
    entries[i].is_lib = kind_sizes[i] == 4 && memcmp(kinds[i], "_lib", 4) == 0;
    entries[i].payload = entries[i].is_lib ? NULL : payloads[i];
    entries[i].payload_size = entries[i].is_lib ? 0 : payload_sizes[i];
  }
  LibbinTree bin;
  memset(&bin, 0, sizeof(bin));
  bin.num_modules = num_modules;
  bin.indptr = (uint64_t*)indptr;
  bin.num_children = num_children;
  bin.child_indices = (uint64_t*)children;
  bin.entries = entries;
  int rc = libbin_pack(&bin, out, out_size);
  if (rc != 0) take_error(err, err_cap);
  free(entries);
  return rc;
}

EXPORT void fuzz_libbin_release_blob(uint8_t* blob) { free(blob); }
