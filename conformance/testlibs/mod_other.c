/* Test library returned by the test's module loaders: `which` tells which
 * library a lookup reached. */
#include "mod_common.h"

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
CONF_EXPORT int __tvm_ffi_which(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_other_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi__doc_other_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_third_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result);

#ifndef CONF_WHICH
#define CONF_WHICH 1
#endif

CONF_EXPORT int __tvm_ffi_which(void* handle, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, CONF_WHICH);
}

#if CONF_WHICH == 1
CONF_EXPORT int __tvm_ffi_other_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 42);
}
CONF_EXPORT int __tvm_ffi__doc_other_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_str(result, "other_fn lives in mod_other.");
}
#else
CONF_EXPORT int __tvm_ffi_third_fn(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 43);
}
#endif
