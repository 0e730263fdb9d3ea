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

#endif
