/*
 * The `__tvm_ffi__library_bin` blob: the checker, and the reads of a checked
 * blob in place.
 *
 * Layout (all integers little-endian u64; see spec/library_bin.md):
 *   <nbytes> <indptr: vec<u64>> <child_indices: vec<u64>>
 *   then one entry per module: <kind: str> [<payload: bytes> unless kind is "_lib"]
 * where vec, str and bytes are <count: u64> followed by the elements.
 *
 * The checker is the single validator of this format in the project: the
 * loader (library_loader.c), libbin, certify and the fuzz harnesses all call
 * it (the array form of a blob that the tools print and pack, which no
 * runtime path needs, is tools/libbin/tree.h; the packer is
 * tools/libbin/pack.h). It treats the blob as untrusted: it never reads at
 * or past `data + size`, it allocates at most O(size) bytes (every element
 * occupies at least eight bytes of the blob), and it refuses anything
 * malformed with a ValueError whose message names the byte offset and the
 * field.
 */
#ifndef TFFI_LIBRARY_BIN_H_
#define TFFI_LIBRARY_BIN_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The key that marks the position of the shared library itself. */
#define TFFI_LIBRARY_BIN_LIB_KEY "_lib"

/* One module of the blob. Pointers point into the blob (no copies), so they
 * stay valid only as long as the blob does. */
typedef struct {
  const char* kind; /* not NUL-terminated */
  size_t kind_size;
  int is_lib;             /* 1 when kind is "_lib" (then no payload) */
  const uint8_t* payload; /* NULL when is_lib */
  size_t payload_size;
  size_t offset; /* byte offset of the entry's kind length in the blob */
} TffiLibraryBinEntry;

/* A checked blob read in place: what the loader walks, with no copy of its
 * tables (they stay little-endian in the blob; read them through the
 * functions below). Offsets count from the start of the blob. */
typedef struct {
  const uint8_t* data;
  size_t num_modules;
  size_t num_children;
  size_t indptr_at;   /* indptr[0] */
  size_t children_at; /* child_indices[0] */
  size_t entries_at;  /* the first entry */
  size_t lib_index;   /* the "_lib" entry, or SIZE_MAX */
  /* Filled on failure: where the blob went wrong and which field. */
  size_t error_offset;
  const char* error_field;
} TffiLibraryBinView;

/*
 * Checks `size` bytes at `data` (the whole blob, starting with nbytes;
 * `size` is how many bytes may be read, e.g. the symbol's size: bytes past
 * 8 + nbytes are ignored as padding): nbytes fits in size; indptr is
 * non-empty, starts at 0, never decreases and ends at the number of child
 * indices; every child index names a module; the import graph has no cycle;
 * there is at least one module; at most one "_lib"; no kind is empty; every
 * length fits in what is left; no bytes are left over inside nbytes. Reads
 * each table in place; allocates only the cycle search's work space, and
 * only when there are imports. Returns 0, or -1 with a ValueError raised
 * naming offset and field (also in error_offset and error_field), or
 * MemoryError.
 */
int tffi_library_bin_check(const uint8_t* data, size_t size, TffiLibraryBinView* out);

/* The blob's little-endian u64 at data + at (any alignment). */
static inline uint64_t tffi_library_bin_u64(const uint8_t* data, size_t at) {
  uint64_t v;
  memcpy(&v, data + at, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

/* indptr[i] and child_indices[j] of a checked blob. */
static inline uint64_t tffi_library_bin_indptr(const TffiLibraryBinView* bin, size_t i) {
  return tffi_library_bin_u64(bin->data, bin->indptr_at + 8 * i);
}

static inline uint64_t tffi_library_bin_child(const TffiLibraryBinView* bin, size_t j) {
  return tffi_library_bin_u64(bin->data, bin->children_at + 8 * j);
}

/* Decodes the entry at offset `at` of a checked blob into *e; returns the
 * offset of the next one. Entry i is reached from entries_at in i steps. */
size_t tffi_library_bin_entry(const TffiLibraryBinView* bin, size_t at, TffiLibraryBinEntry* e);

#endif
