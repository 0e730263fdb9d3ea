/* The type registry of the reference runtime: type keys, indices and the
 * TVMFFITypeInfo records behind TVMFFIGetTypeInfo. */
#ifndef TFFI_TYPE_H_
#define TFFI_TYPE_H_

#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* TVMFFITypeGetOrAllocIndex's parent_type_index that means "look up only". */
#define TFFI_TYPE_QUERY_ONLY (-2)

/* Indices of types registered at run time start here. */
#define TFFI_TYPE_DYN_BEGIN kTVMFFIDynObjectBegin

/* Most types the registry will hold: bounds memory taken from callers. */
#define TFFI_TYPE_MAX_INDEX (1 << 20)

/* Longest type key accepted. */
#define TFFI_TYPE_KEY_MAX 4096

/*
 * For the reflection records (reflection.c): locks the registry and returns
 * the record of a registered type for the caller to extend, or NULL when
 * `type_index` names none (nothing raised). The lock is held either way
 * until tffi_type_unlock. Records never move, so a pointer stays valid.
 */
TVMFFITypeInfo* tffi_type_lock(int32_t type_index);
void tffi_type_unlock(void);

/* Calls visit(ctx, info) for every registered type in index order, under
 * the registry's lock (visit must not use the registry); stops at the
 * first nonzero return, which it returns. */
int tffi_type_each(int (*visit)(void* ctx, const TVMFFITypeInfo* info), void* ctx);

/* ffi.Object's metadata, set when the registry starts. */
extern const TVMFFITypeMetadata tffi_object_metadata;

#endif
