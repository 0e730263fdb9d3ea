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

/*
 * Registers `hook` (at most 16 in all, from load-time constructors) to run
 * before the first call that uses the registry does its own work, outside
 * the lock: the runtime's own reflected types are defined then, not at
 * load, so that a process's first use of the registry is where its
 * allocations happen (and can fail). A hook returns 0, or -1 when
 * something failed (for memory): all hooks then run again at the next
 * call, so each must be safe to run again over what it did before.
 */
void tffi_type_on_ready(int (*hook)(void));

/* Runs those hooks now unless they all succeeded before: for readers of
 * what they define that do not go through the registry (attribute
 * columns). */
void tffi_type_ready(void);

/* Calls visit(ctx, info) for every registered type in index order, under
 * the registry's lock (visit must not use the registry); stops at the
 * first nonzero return, which it returns. */
int tffi_type_each(int (*visit)(void* ctx, const TVMFFITypeInfo* info), void* ctx);

/* ffi.Object's metadata, set when the registry starts. */
extern const TVMFFITypeMetadata tffi_object_metadata;

#endif
