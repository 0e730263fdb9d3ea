/* Helpers for the runtime's own global functions. */
#include "builtin.h"

#include <string.h>

#include "error.h"
#include "function.h"
#include "object.h"

void tffi_builtin_register(const char* name, TVMFFISafeCallType call) {
  TVMFFIObject* fn = tffi_function_new(NULL, call, NULL);
  if (fn == NULL) {
    tffi_set_raised(NULL); /* nobody is there to see it at load time */
    return;
  }
  if (tffi_global_set(name, strlen(name), fn, 1) != 0) tffi_set_raised(NULL);
  tffi_decref(fn);
}

int tffi_builtin_check_count(const char* fn, int32_t got, int32_t want) {
  if (got == want) return 0;
  return tffi_raise(TFFI_TYPE_ERROR, "%s: expected %d arguments but got %d", fn, (int)want,
                    (int)got);
}

int tffi_builtin_check_object(const char* fn, const TVMFFIAny* args, int32_t i,
                              int32_t type_index, const char* type_key) {
  if (args[i].type_index == type_index && args[i].v_obj != NULL) return 0;
  return tffi_raise(TFFI_TYPE_ERROR, "%s: argument #%d must be %s but has type_index %d", fn,
                    (int)i, type_key, (int)args[i].type_index);
}

int tffi_builtin_check_int(const char* fn, const TVMFFIAny* args, int32_t i) {
  if (args[i].type_index == kTVMFFIInt || args[i].type_index == kTVMFFIBool) return 0;
  return tffi_raise(TFFI_TYPE_ERROR, "%s: argument #%d must be int but has type_index %d", fn,
                    (int)i, (int)args[i].type_index);
}
