/* Helpers for the runtime's own global functions. */
#include "builtin.h"

#include <string.h>

#include "tffi_error.h"
#include "function.h"
#include "object.h"
#include "registry.h"

void tffi_builtin_register(const char* name, TVMFFISafeCallType call) {
  /* The name is the function's self: its messages name it from there. */
  TVMFFIObject* fn = tffi_function_new((void*)name, call, NULL);
  if (fn == NULL) {
    tffi_set_raised(NULL); /* nobody is there to see it at load time */
    return;
  }
  if (tffi_global_set(name, strlen(name), fn, 1) != 0) tffi_set_raised(NULL);
  tffi_decref(fn);
}
