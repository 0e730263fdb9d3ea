/* Test library returned by the test's module loaders: `which` tells which
 * library a lookup reached. */
#include "mod_common.h"

#ifndef TFFI_WHICH
#define TFFI_WHICH 1
#endif

TFFI_EXPORT int __tvm_ffi_which(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return tffi_lib_return_int(result, TFFI_WHICH);
}

#if TFFI_WHICH == 1
TFFI_EXPORT int __tvm_ffi_other_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return tffi_lib_return_int(result, 42);
}
TFFI_EXPORT int __tvm_ffi__doc_other_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return tffi_lib_return_str(result, "other_fn lives in mod_other.");
}
#else
TFFI_EXPORT int __tvm_ffi_third_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return tffi_lib_return_int(result, 43);
}
#endif
