/* Helpers shared by the conformance test libraries. These libraries are
 * what a DSL compiler would emit: plain C exporting `__tvm_ffi_*` symbols.
 * The TVMFFI* functions they call stay undefined here and resolve against
 * the runtime under test, which the suite loads with RTLD_GLOBAL. */
#ifndef TESTLIBS_MOD_COMMON_H_
#define TESTLIBS_MOD_COMMON_H_

#include <string.h>
#include <tvm/ffi/c_api.h>

#define CONF_EXPORT __attribute__((visibility("default")))

static inline int conf_lib_raise(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

static inline int conf_lib_return_int(TVMFFIAny* result, int64_t v) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = v;
  return 0;
}

/* An owned str result, made by the runtime under test. */
static inline int conf_lib_return_str(TVMFFIAny* result, const char* s) {
  TVMFFIByteArray bytes = {s, strlen(s)};
  return TVMFFIStringFromByteArray(&bytes, result);
}

static inline int conf_lib_want_int(const TVMFFIAny* args, int32_t num_args, int64_t* v) {
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    return conf_lib_raise("TypeError", "expected one int argument");
  }
  *v = args[0].v_int64;
  return 0;
}

#endif
