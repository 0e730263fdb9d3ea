/* The process-wide object allocator (TVMFFIGetCustomAllocator and
 * TVMFFISetCustomAllocator) and the built-in default behind it. */
#ifndef TFFI_ALLOCATOR_H_
#define TFFI_ALLOCATOR_H_

#include <tvm/ffi/c_api.h>

/* The allocator new objects come from: the registered one, or the built-in
 * default when none is registered. Never NULL. */
TVMFFICustomAllocator* tffi_allocator_current(void);

/* The built-in default allocator. */
TVMFFICustomAllocator* tffi_allocator_default(void);

/* 1 when `allocator` is the built-in default. */
int tffi_allocator_is_default(const TVMFFICustomAllocator* allocator);

/* Registers `allocator` for new objects; NULL or the default restore the
 * default. */
void tffi_allocator_set(TVMFFICustomAllocator* allocator);

#endif
