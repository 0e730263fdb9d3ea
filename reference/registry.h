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

#endif
