/* The process-wide object allocator (TVMFFIGetCustomAllocator and
 * TVMFFISetCustomAllocator) and the built-in default behind it. */
#ifndef TFFI_ALLOCATOR_H_
#define TFFI_ALLOCATOR_H_

#include <tvm/ffi/c_api.h>

/* The allocator new objects come from: the registered one, or the built-in
 * default when none is registered. Never NULL. */
TVMFFICustomAllocator* tffi_allocator_current(void);

/* The registered custom allocator, or NULL when the default is in charge. */
TVMFFICustomAllocator* tffi_allocator_custom(void);

/* What the default allocator's allocate does for an object body of `size`
 * bytes (its natural alignment), without the indirect call: the body, with
 * the allocation header before it set, or NULL when memory runs out. */
void* tffi_allocator_default_body(size_t size);

/* Gives an object body back to the allocator that made it, through the
 * allocation header before it. */
void tffi_allocator_free_body(void* body);

/* The built-in default allocator. */
TVMFFICustomAllocator* tffi_allocator_default(void);

/* 1 when `allocator` is the built-in default. */
int tffi_allocator_is_default(const TVMFFICustomAllocator* allocator);

/* Registers `allocator` for new objects; NULL or the default restore the
 * default. */
void tffi_allocator_set(TVMFFICustomAllocator* allocator);

#endif
