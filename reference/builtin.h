/* Registration of the runtime's own global functions ("ffi.Shape", ...). */
#ifndef TFFI_BUILTIN_H_
#define TFFI_BUILTIN_H_

#include <tvm/ffi/c_api.h>

/* Registers `call` as the global function `name` (no self, no deleter).
 * Called from load-time constructors, so failure is silent: the function
 * is then simply absent, which lookups report. `name` (a string that lives
 * as long as the process) is passed to `call` as its `self`. */
void tffi_builtin_register(const char* name, TVMFFISafeCallType call);

/* As tffi_builtin_register, with `self` (which lives as long as the
 * process) passed to `call` instead of the name. */
void tffi_builtin_register_self(const char* name, void* self, TVMFFISafeCallType call);

/* Calls the runtime's global function `name` with args (*out None
 * first); a name nobody registered is a RuntimeError naming `caller`. */
int tffi_builtin_call(const char* caller, const char* name, TVMFFIAny* args, int32_t n,
                      TVMFFIAny* out);

#endif
