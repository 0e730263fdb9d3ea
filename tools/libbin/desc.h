/* The text description that `libbin pack` turns into a blob.
 *
 * One module per non-blank line, in index order (line order = module index;
 * the first module is the root). '#' starts a comment. A line is a kind
 * followed by options separated by blanks:
 *     _lib imports=1,2
 *     my_kind imports=2 text=hello
 *     other hex=00ff10
 *     third file=payload.bin
 * imports=  comma-separated child module indices (may be left out)
 * text=     payload is the rest of the token, as is
 * hex=      payload is the hex digits decoded
 * file=     payload is the file's contents (relative to the description)
 * A kind other than _lib with no payload option gets an empty payload.
 * A kind is a name: letters, digits, '_', '.' and '-', starting with a
 * letter or '_' (the loader is the global `ffi.Module.load_from_bytes.<kind>`).
 */
#ifndef TOOLS_LIBBIN_DESC_H_
#define TOOLS_LIBBIN_DESC_H_

#include <stddef.h>
#include <stdio.h>

#include "reference/library_bin.h"

/* Owns everything the TffiLibraryBin points to. */
typedef struct {
  TffiLibraryBin bin;
  char** owned; /* kind and payload buffers, freed with the description */
  size_t num_owned;
} LibbinLibbinDesc;

/* Parses the description text; `base_dir` resolves file= paths. Returns 0,
 * or -1 after writing "NAME:LINE: reason" to `err` (NAME: the file's name,
 * for the message). */
int libbin_libbin_desc_parse(const char* text, const char* name, const char* base_dir,
                             LibbinLibbinDesc* out, FILE* err);

/* NULL when `kind` is a module kind a description may use, else why not. */
const char* libbin_kind_problem(const char* kind);

void libbin_libbin_desc_free(LibbinLibbinDesc* desc);

/* Reads a whole file (at most `limit` bytes) into a malloc'd buffer. */
int libbin_read_file(const char* path, size_t limit, unsigned char** data, size_t* size);

#endif
