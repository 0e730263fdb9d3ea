/*
 * A `__tvm_ffi__library_bin` blob as arrays: the tree the tools print,
 * compare and pack (libbin, the fuzz harnesses, the unit tests). The
 * runtime never makes one: it checks a blob and reads it in place
 * (reference/library_bin.h); libbin_decode runs that same check first.
 */
#ifndef TOOLS_LIBBIN_TREE_H_
#define TOOLS_LIBBIN_TREE_H_

#include <stddef.h>
#include <stdint.h>

#include "reference/library_bin.h"

typedef struct {
  uint64_t nbytes;         /* the header: bytes that follow it */
  size_t num_modules;      /* = number of indptr elements - 1 */
  uint64_t* indptr;        /* num_modules + 1 elements, host order */
  uint64_t* child_indices; /* num_children elements, host order */
  size_t num_children;
  TffiLibraryBinEntry* entries; /* num_modules elements, pointing into the blob */
  size_t lib_index;             /* index of the "_lib" entry, or SIZE_MAX if none */
  /* Filled on failure (the rest of the struct is then zero): where the blob
   * went wrong and which field. */
  size_t error_offset;
  const char* error_field;
} LibbinTree;

/*
 * tffi_library_bin_check of `size` bytes at `data`, then its tables and
 * entries decoded into arrays of `out` (the entries point into the blob, so
 * they stay valid only as long as it does). Returns 0, or -1 with the error
 * raised. `out` is always initialised; free it with libbin_tree_free either
 * way.
 */
int libbin_decode(const uint8_t* data, size_t size, LibbinTree* out);

/* Releases what libbin_decode or the caller attached to `tree` and zeroes
 * it. Safe on a zeroed or failed tree. */
void libbin_tree_free(LibbinTree* tree);

#endif
