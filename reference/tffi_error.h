/* Errors of the reference runtime: the per-thread raised slot and helpers
 * that raise the documented kinds. */
#ifndef TFFI_ERROR_H_
#define TFFI_ERROR_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>

#include "object.h"

/*
 * Makes a new Error object holding copies of kind, message and backtrace
 * (any may be NULL, meaning empty). Takes a new reference to cause_chain
 * and extra_context when they are not NULL. Returns NULL when memory runs
 * out (nothing raised: the caller decides).
 */
TVMFFIObject* tffi_error_new(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                             const TVMFFIByteArray* backtrace, TVMFFIObjectHandle cause_chain,
                             TVMFFIObjectHandle extra_context);

/* Raises an error of `kind` whose message is printf-formatted. Returns -1 so
 * that boundary checks read `return tffi_raise(...)`. */
int tffi_raise(const char* kind, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Raises MemoryError for a failed allocation of `size` bytes (the size is
 * not quoted: nothing could check it). Works without allocating: when even
 * the error object cannot be made, a preallocated one is raised instead.
 * Returns -1. */
int tffi_raise_oom(size_t size);

/* Replaces the calling thread's raised error, releasing the one it held.
 * Takes over the caller's reference to `error` (TVMFFIErrorSetRaised, by
 * contrast, adds one). An error still held when the thread exits is
 * released then. */
void tffi_set_raised(TVMFFIObject* error);

/* Allocates an object as tffi_object_alloc_from does, raising MemoryError
 * when memory runs out (a custom allocator raises its own). It lives here,
 * above object.c, because a raise itself allocates an error object. */
static inline void* tffi_object_alloc(size_t size, int32_t type_index,
                                      void (*deleter)(void* self, int flags)) {
  int custom;
  void* obj = tffi_object_alloc_from(size, type_index, deleter, &custom);
  if (obj == NULL && !custom) tffi_raise_oom(size);
  return obj;
}

/* As tffi_object_alloc with only the header initialised
 * (tffi_object_alloc_uninit_from), the default allocator's path inline and
 * free of the out-parameter the custom path needs. */
static inline void* tffi_object_alloc_uninit(size_t size, int32_t type_index,
                                             void (*deleter)(void* self, int flags)) {
  if (__builtin_expect(tffi_allocator_custom() != NULL, 0)) {
    int custom;
    void* obj = tffi_object_alloc_uninit_from(size, type_index, deleter, &custom);
    if (obj == NULL && !custom) tffi_raise_oom(size);
    return obj;
  }
  TVMFFIObject* obj = tffi_allocator_default_body(size);
  if (obj == NULL) {
    tffi_raise_oom(size);
    return NULL;
  }
  tffi_object_init_header(obj, type_index, deleter);
  return obj;
}

/* Kind names used across the runtime. */
#define TFFI_TYPE_ERROR "TypeError"
#define TFFI_VALUE_ERROR "ValueError"
#define TFFI_RUNTIME_ERROR "RuntimeError"
#define TFFI_INDEX_ERROR "IndexError"
#define TFFI_KEY_ERROR "KeyError"
#define TFFI_MEMORY_ERROR "MemoryError"

#endif
