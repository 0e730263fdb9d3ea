/* The global function registry (TVMFFIFunctionSetGlobal and friends) as
 * the runtime itself uses it. */
#ifndef TFFI_REGISTRY_H_
#define TFFI_REGISTRY_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/*
 * Looks up the global function `name[0..len)` (embedded NULs are part of the
 * name). Sets *out to a new reference, or to NULL when no function has that
 * name; returns 0. Returns -1 with an error raised only on bad arguments.
 */
int tffi_global_get(const char* name, size_t len, TVMFFIObject** out);

/*
 * A number that changes whenever a global function is registered or
 * replaced. A caller that read it before tffi_global_get may keep the
 * function it got for that name while the number stays the same.
 */
uint64_t tffi_global_version(void);

/*
 * Registers `fn` (a Function object; the registry takes its own reference)
 * under `name[0..len)`. When the name is taken and allow_override is 0,
 * returns -1 with a RuntimeError raised; otherwise replaces the entry and
 * releases the old function. Returns 0 on success.
 */
int tffi_global_set(const char* name, size_t len, TVMFFIObject* fn, int allow_override);

/* As tffi_global_set, keeping a copy of metadata[0..metadata_len) with the
 * entry (NULL: none, which reads back as ""). A replaced entry takes the
 * new registration's metadata. */
int tffi_global_set_with_metadata(const char* name, size_t len, TVMFFIObject* fn,
                                  int allow_override, const char* metadata, size_t metadata_len);

/* Removes the entry for `name[0..len)`, releasing its function. Returns 1
 * when there was one, 0 when not, -1 with an error raised on a bad name. */
int tffi_global_remove(const char* name, size_t len);

/*
 * The metadata registered with `name[0..len)`: 1 with *out a new
 * NUL-terminated copy (free with tffi_free) of *out_len bytes, "" when none
 * was given; 0 when no function has that name; -1 with an error raised.
 */
int tffi_global_metadata(const char* name, size_t len, char** out, size_t* out_len);

/*
 * Calls visit(ctx, name, len) for every registered name, under the
 * registry's lock (visit must not use the registry), in no particular
 * order; stops at the first nonzero return, which it returns.
 */
int tffi_global_each(int (*visit)(void* ctx, const char* name, size_t len), void* ctx);

#endif
