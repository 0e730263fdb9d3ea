/* Test library: the export naming conventions, one symbol per case. */
#include <stdint.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "mod_common.h"

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
CONF_EXPORT int __tvm_ffi_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi__metadata_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                                            TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi__doc_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_main(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_handle_is_null(void* handle, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_fail(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_a(void* handle, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result);
CONF_EXPORT int plain_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_bad_meta(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi__metadata_bad_meta(void* handle, const TVMFFIAny* args, int32_t num_args,
                                             TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_bytes_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi__doc_bytes_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_small_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi__doc_small_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi__doc_fail(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_get_ctx(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_get_context_slot(void* handle, const TVMFFIAny* args, int32_t num_args,
                                           TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_call_import(void* handle, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result);
CONF_EXPORT int __tvm_ffi_lookup_twice(void* handle, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result);
__attribute__((visibility("hidden"))) int conf_notype_impl(void* handle, const TVMFFIAny* args,
                                                           int32_t num_args, TVMFFIAny* result);

/* Filled by the loader with this library's module. */
CONF_EXPORT void* __tvm_ffi__library_ctx = NULL;

/* Filled by the loader when the host registered a context symbol of this
 * name before loading. */
CONF_EXPORT void* conf_test_context_slot = NULL;

CONF_EXPORT int __tvm_ffi_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  (void)handle;
  int64_t v;
  if (conf_lib_want_int(args, num_args, &v) != 0) return -1;
  return conf_lib_return_int(result, v + 1);
}

/* SYM-009, SYM-010: a runtime asks a metadata or doc getter with no
 * arguments; anything else is refused, so a test sees it. */
static int getter_args(int32_t num_args) {
  return num_args == 0 ? 0 : conf_lib_raise("TypeError", "mod_basic: a getter was given arguments");
}

CONF_EXPORT int __tvm_ffi__metadata_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                                            TVMFFIAny* result) {
  (void)handle, (void)args;
  if (getter_args(num_args) != 0) return -1;
  return conf_lib_return_str(result, "{\"arg_types\": [\"int\"], \"ret\": \"int\"}");
}

CONF_EXPORT int __tvm_ffi__doc_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)handle, (void)args;
  if (getter_args(num_args) != 0) return -1;
  return conf_lib_return_str(result, "Returns its integer argument plus one.");
}

CONF_EXPORT int __tvm_ffi_main(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)handle, (void)args;
  return conf_lib_return_int(result, 7000 + num_args);
}

CONF_EXPORT int __tvm_ffi_handle_is_null(void* handle, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  (void)args, (void)num_args;
  result->type_index = kTVMFFIBool;
  result->v_int64 = handle == NULL;
  return 0;
}

CONF_EXPORT int __tvm_ffi_fail(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args, (void)result;
  return conf_lib_raise("ValueError", "mod_basic: fail was asked to fail");
}

/* A name that is no C identifier: only an assembler name can carry it. */
CONF_EXPORT int conf_add_two(void* handle, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) __asm__("__tvm_ffi_add.v2");
int conf_add_two(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)handle;
  int64_t v;
  if (conf_lib_want_int(args, num_args, &v) != 0) return -1;
  return conf_lib_return_int(result, v + 2);
}

/* For the embedded-NUL case: "a\0b" must not find this. */
CONF_EXPORT int __tvm_ffi_a(void* handle, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 100);
}

/* Data behind a function-shaped name: must never be called. */
CONF_EXPORT const uint64_t conf_data_symbol[4] __asm__("__tvm_ffi_data_symbol") = {
    0xdeadbeefdeadbeefull, 0, 0, 0};

/* The right signature but no prefix: not an export of the ABI. */
CONF_EXPORT int plain_add_one(void* handle, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  return __tvm_ffi_add_one(handle, args, num_args, result);
}

/* A metadata getter that returns an int instead of a str. */
CONF_EXPORT int __tvm_ffi_bad_meta(void* handle, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 0);
}
CONF_EXPORT int __tvm_ffi__metadata_bad_meta(void* handle, const TVMFFIAny* args, int32_t num_args,
                                             TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 5);
}

/* A doc getter that returns bytes (a small bytes value, no object) where a
 * str is due. */
CONF_EXPORT int __tvm_ffi_bytes_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 0);
}
CONF_EXPORT int __tvm_ffi__doc_bytes_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  result->type_index = kTVMFFISmallBytes;
  result->small_str_len = 3;
  result->v_int64 = 0;
  memcpy(result->v_bytes, "doc", 3);
  return 0;
}

/* A doc getter whose str is short enough to live inline (kTVMFFISmallStr). */
CONF_EXPORT int __tvm_ffi_small_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 0);
}
CONF_EXPORT int __tvm_ffi__doc_small_doc(void* handle, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  result->type_index = kTVMFFISmallStr;
  result->small_str_len = 4;
  result->v_int64 = 0;
  memcpy(result->v_bytes, "tiny", 4);
  return 0;
}

/* A metadata getter that fails. */
CONF_EXPORT int __tvm_ffi__doc_fail(void* handle, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args, (void)result;
  return conf_lib_raise("ValueError", "mod_basic: doc getter failed");
}

static int conf_return_ptr(TVMFFIAny* result, void* p) {
  result->type_index = kTVMFFIOpaquePtr;
  result->zero_padding = 0;
  result->v_ptr = p;
  return 0;
}

CONF_EXPORT int __tvm_ffi_get_ctx(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_return_ptr(result, __tvm_ffi__library_ctx);
}

CONF_EXPORT int __tvm_ffi_get_context_slot(void* handle, const TVMFFIAny* args, int32_t num_args,
                                           TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_return_ptr(result, conf_test_context_slot);
}

static int conf_want_name(const TVMFFIAny* args, int32_t num_args, const char** name) {
  if (num_args != 1 || args[0].type_index != kTVMFFIRawStr) {
    return conf_lib_raise("TypeError", "expected one C string argument");
  }
  *name = args[0].v_c_str;
  return 0;
}

/* What generated code does to call a function of an imported module. */
CONF_EXPORT int __tvm_ffi_call_import(void* handle, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  (void)handle;
  const char* name;
  TVMFFIObjectHandle fn = NULL;
  if (conf_want_name(args, num_args, &name) != 0) return -1;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, &fn) != 0) return -1;
  return TVMFFIFunctionCall(fn, NULL, 0, result);
}

/* Two lookups of one name: returns the handle when both agree, else fails. */
CONF_EXPORT int __tvm_ffi_lookup_twice(void* handle, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)handle;
  const char* name;
  TVMFFIObjectHandle a = NULL, b = NULL;
  if (conf_want_name(args, num_args, &name) != 0) return -1;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, &a) != 0) return -1;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name, &b) != 0) return -1;
  if (a != b) return conf_lib_raise("RuntimeError", "two lookups gave different handles");
  return conf_return_ptr(result, a);
}

/* A function symbol without an ELF type, as hand-written assembly leaves
 * it: a jump to ordinary C code. */
__attribute__((visibility("hidden"))) int conf_notype_impl(void* handle, const TVMFFIAny* args,
                                                           int32_t num_args, TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 1616);
}
#if defined(__x86_64__)
__asm__(".text\n.globl __tvm_ffi_notype_fn\n__tvm_ffi_notype_fn:\n  jmp conf_notype_impl\n");
#elif defined(__aarch64__)
__asm__(".text\n.globl __tvm_ffi_notype_fn\n__tvm_ffi_notype_fn:\n  b conf_notype_impl\n");
#endif
