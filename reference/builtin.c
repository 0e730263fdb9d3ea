/* Helpers for the runtime's own global functions. */
#include "builtin.h"

#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "function.h"
#include "object.h"
#include "registry.h"

void tffi_builtin_register(const char* name, TVMFFISafeCallType call) {
  /* The name is the function's self: its messages name it from there. */
  tffi_builtin_register_self(name, (void*)name, call);
}

void tffi_builtin_register_self(const char* name, void* self, TVMFFISafeCallType call) {
  TVMFFIObject* fn = tffi_function_new(self, call, NULL);
  if (fn == NULL) {
    tffi_set_raised(NULL); /* nobody is there to see it at load time */
    return;
  }
  if (tffi_global_set(name, strlen(name), fn, 1) != 0) tffi_set_raised(NULL);
  tffi_decref(fn);
}

int tffi_builtin_call(const char* caller, const char* name, TVMFFIAny* args, int32_t n,
                      TVMFFIAny* out) {
  TVMFFIObject* fn = NULL;
  *out = tffi_any_none();
  if (tffi_global_get(name, strlen(name), &fn) != 0) return -1;
  if (fn == NULL) return tffi_raise(TFFI_RUNTIME_ERROR, "%s: %s is missing", caller, name);
  int rc = TVMFFIFunctionCall(fn, args, n, out);
  tffi_decref(fn);
  return rc;
}
