/*
 * The `__tvm_ffi__library_bin` packer: the inverse of libbin_decode
 * (tools/libbin/tree.h), for the tools that make blobs (libbin pack, the
 * fuzz harnesses, the unit tests). It lives outside the runtime because no
 * runtime path encodes a blob.
 */
#ifndef TOOLS_LIBBIN_PACK_H_
#define TOOLS_LIBBIN_PACK_H_

#include <stddef.h>
#include <stdint.h>

#include "tools/libbin/tree.h"

/*
 * Encodes `bin` (num_modules, indptr, child_indices, num_children, entries'
 * kind/is_lib/payload are read; nbytes, offsets and lib_index are ignored)
 * into a new malloc'd blob, then checks the result with the runtime's
 * tffi_library_bin_check so that only well-formed blobs come out. Returns 0 with *out (free with
 * free()) and *out_size set, or -1 with a ValueError / MemoryError raised.
 */
int libbin_pack(const LibbinTree* bin, uint8_t** out, size_t* out_size);

#endif
