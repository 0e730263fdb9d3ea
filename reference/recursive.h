/* What the recursive walks of values share (recursive_compare.c,
 * recursive_hash.c, and any later walk): the reflected fields of an object
 * in order, the hooks a type may install in its attribute columns, and the
 * names of types for messages. */
#ifndef TFFI_RECURSIVE_H_
#define TFFI_RECURSIVE_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "map.h"

/* Deepest nesting a walk that recurses in C follows before it refuses
 * (the C stack): the JSON graph reader and writer. */
#define TFFI_RECURSIVE_MAX_DEPTH 4096

/* The most frames a walk with a stack of its own holds (compare, hash,
 * repr, deep copy): upstream's bound on its traversal stacks, 2^20. */
#define TFFI_WALK_MAX_DEPTH (1 << 20)

/* The value of the type attribute `column` for type_index when it is a
 * Function, else NULL. `cache` keeps the column between calls. */
const TVMFFIAny* tffi_rec_hook(const TVMFFITypeAttrColumn** cache, const char* column,
                               int32_t type_index);

/*
 * Reads every reflected field of `obj` (its ancestors' first, then its
 * own) whose flags share no bit with skip_mask, through the fields'
 * getters: *out a new array of *n owned values (NULL when none), given back
 * with tffi_rec_values_free. Returns 0, or -1 with the error raised.
 */
int tffi_rec_fields(TVMFFIObject* obj, int64_t skip_mask, TVMFFIAny** out, int32_t* n);
void tffi_rec_values_free(TVMFFIAny* values, int32_t n);

/* The child that comes after those a walk has taken of a sequence (obj,
 * an Array or List) or of a map (m, a Map or Dict, entry by entry: its key
 * when *i is even, then its value), counting in *i (and the entry in *p,
 * which starts at tffi_map_begin); NULL when there is none left. */
const TVMFFIAny* tffi_rec_seq_child(TVMFFIObject* obj, int64_t* i);
const TVMFFIAny* tffi_rec_map_child(const TffiMap* m, uint64_t* p, int64_t* i);

/* The type key of type_index (for messages); "?" when unknown. */
const char* tffi_rec_type_key(int32_t type_index, int* len);

/* The content of a str (is_bytes 0) or bytes (1) value, or NULL when the
 * value is not of that kind. */
const char* tffi_rec_text(const TVMFFIAny* value, int is_bytes, size_t* size);

#endif
