/* CST-003 and CST-005: reserved names of the wrong kind, metadata and doc
 * given as data (an array and a pointer), an orphan getter, an unknown
 * reserved name. */
#include <tvm/ffi/c_api.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int __tvm_ffi_add(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFINone;
  return 0;
}

EXPORT const char __tvm_ffi__metadata_add[] = "{\"arg_names\": [\"x\"], \"bound\": 3}";
EXPORT const char* __tvm_ffi__doc_add = "adds one";

/* A getter for a function the library does not export. */
EXPORT int __tvm_ffi__metadata_ghost(void* handle, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)num_args;
  result->type_index = kTVMFFINone;
  return 0;
}

/* Runtimes write a pointer here: a function is the wrong kind. */
EXPORT void __tvm_ffi__library_ctx(void) {}

EXPORT int __tvm_ffi__unknown = 7;
