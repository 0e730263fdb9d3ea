/* TVMFFIGetCustomAllocator / TVMFFISetCustomAllocator: the ABI face of the
 * object allocator (allocator.c), kept apart so that the allocator itself
 * sits below errors. */
#include <tvm/ffi/c_api.h>

#include "allocator.h"
#include "arg.h"

TVMFFICustomAllocator* TVMFFIGetCustomAllocator(void) { return tffi_allocator_current(); }

int TVMFFISetCustomAllocator(TVMFFICustomAllocator* allocator) {
  if (allocator != NULL && allocator->allocate == NULL)
    return tffi_arg_null("TVMFFISetCustomAllocator", "allocator->allocate");
  tffi_allocator_set(allocator);
  return 0;
}
