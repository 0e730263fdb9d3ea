/* Helpers for the runtime's own global functions. */
#include "builtin.h"

#include <string.h>

#include "error.h"
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
