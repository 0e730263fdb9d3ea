/* Values "ffi.ReprPrint" (repr_print.c) spells without looking inside
 * them: POD values, the missing and keyword markers, big ints, shapes,
 * tensors. */
#ifndef TFFI_REPR_LEAF_H_
#define TFFI_REPR_LEAF_H_

#include <tvm/ffi/c_api.h>

#include "repr_text.h"

/* Appends "@<address>" when with_addr. */
void tffi_repr_addr(TffiText* out, int with_addr, const void* obj);

/* Appends a value of a type index below kTVMFFIStaticObjectBegin. Returns
 * 0, or -1 with the error raised (a dtype that names no type). */
int tffi_repr_pod(TffiText* out, const TVMFFIAny* v);

/* Appends v when it is an object printed without its children: 1 when it
 * was, 0 when not, -1 with the error raised. */
int tffi_repr_leaf(TffiText* out, int with_addr, const TVMFFIAny* v);

/* Whether type_index is ffi.Enum or derives from it. */
int tffi_repr_is_enum(int32_t type_index);

#endif
