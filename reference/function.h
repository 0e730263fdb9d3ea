/* Function objects and the process-wide registry of global functions. */
#ifndef TFFI_FUNCTION_H_
#define TFFI_FUNCTION_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>

/*
 * Makes a Function object that calls `call(self, args, num_args, result)`.
 * `deleter(self)` runs once when the last reference goes (may be NULL).
 * As upstream does, a function made with both self and deleter NULL stores
 * `call` directly in its cell, so `call` then receives the function object
 * itself as its handle. Returns a new reference, or NULL with a MemoryError
 * raised.
 */
TVMFFIObject* tffi_function_new(void* self, TVMFFISafeCallType call, void (*deleter)(void* self));

/*
 * Looks up the global function `name[0..len)` (embedded NULs are part of the
 * name). Sets *out to a new reference, or to NULL when no function has that
 * name; returns 0. Returns -1 with an error raised only on bad arguments.
 */
int tffi_global_get(const char* name, size_t len, TVMFFIObject** out);

/*
 * Registers `fn` (a Function object; the registry takes its own reference)
 * under `name[0..len)`. When the name is taken and allow_override is 0,
 * returns -1 with a RuntimeError raised; otherwise replaces the entry and
 * releases the old function. Returns 0 on success.
 */
int tffi_global_set(const char* name, size_t len, TVMFFIObject* fn, int allow_override);

#endif
