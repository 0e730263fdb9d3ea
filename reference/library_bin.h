/*
 * The `__tvm_ffi__library_bin` blob: the parser (the packer, which no
 * runtime path needs, is tools/libbin/pack.h).
 *
 * Layout (all integers little-endian u64; see spec/library_bin.md):
 *   <nbytes> <indptr: vec<u64>> <child_indices: vec<u64>>
 *   then one entry per module: <kind: str> [<payload: bytes> unless kind is "_lib"]
 * where vec, str and bytes are <count: u64> followed by the elements.
 *
 * The parser is the single decoder of this format in the project: the loader
 * (library_loader.c), the libbin tool and the fuzz harness all call it. It
 * treats the blob as untrusted: it never reads at or past `data + size`, it
 * allocates at most O(size) bytes (every decoded element occupies at least
 * eight bytes of the blob), and it refuses anything malformed with a
 * ValueError whose message names the byte offset and the field.
 */
#ifndef TFFI_LIBRARY_BIN_H_
#define TFFI_LIBRARY_BIN_H_

#include <stddef.h>
#include <stdint.h>

/* The key that marks the position of the shared library itself. */
#define TFFI_LIBRARY_BIN_LIB_KEY "_lib"

/* One module of the blob. Pointers point into the parsed blob (no copies),
 * so they stay valid only as long as the blob does. */
typedef struct {
  const char* kind;       /* not NUL-terminated */
  size_t kind_size;
  int is_lib;             /* 1 when kind is "_lib" (then no payload) */
  const uint8_t* payload; /* NULL when is_lib */
  size_t payload_size;
  size_t offset;          /* byte offset of the entry's kind length in the blob */
} TffiLibraryBinEntry;

typedef struct {
  uint64_t nbytes;           /* the header: bytes that follow it */
  size_t num_modules;        /* = number of indptr elements - 1 */
  uint64_t* indptr;          /* num_modules + 1 elements, host order */
  uint64_t* child_indices;   /* num_children elements, host order */
  size_t num_children;
  TffiLibraryBinEntry* entries; /* num_modules elements */
  size_t lib_index;          /* index of the "_lib" entry, or SIZE_MAX if none */
  /* Filled on failure (the rest of the struct is then zero): where the blob
   * went wrong and which field, for tools that report without the error. */
  size_t error_offset;
  const char* error_field;
} TffiLibraryBin;

/*
 * Parses `size` bytes at `data` (the whole blob, starting with nbytes;
 * `size` is how many bytes may be read, e.g. the symbol's size: bytes past
 * 8 + nbytes are ignored as padding). Checks: nbytes fits in size; indptr
 * is non-empty, starts at 0, never decreases and ends at the number of child
 * indices; every child index names a module; the import graph has no cycle;
 * there is at least one module; at most one "_lib"; no kind is empty; every
 * length fits in what is left; no bytes are left over inside nbytes.
 * Returns 0, or -1 with a ValueError raised naming offset and field (or
 * MemoryError). `out` is always initialised; free it with
 * tffi_library_bin_free either way.
 */
int tffi_library_bin_parse(const uint8_t* data, size_t size, TffiLibraryBin* out);

/* Releases what parse or the caller attached to `bin` and zeroes it. Safe on a
 * zeroed or failed struct. */
void tffi_library_bin_free(TffiLibraryBin* bin);

#endif
