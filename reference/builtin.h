/* Registration of the runtime's own global functions ("ffi.Shape", ...). */
#ifndef TFFI_BUILTIN_H_
#define TFFI_BUILTIN_H_

#include <tvm/ffi/c_api.h>

/* Registers `call` as the global function `name` (no self, no deleter).
 * Called from load-time constructors, so failure is silent: the function
 * is then simply absent, which lookups report. */
void tffi_builtin_register(const char* name, TVMFFISafeCallType call);

/* The shared argument checks of built-in functions; each returns 0, or -1
 * with TypeError raised naming the function and the argument. */
int tffi_builtin_check_count(const char* fn, int32_t got, int32_t want);
int tffi_builtin_check_object(const char* fn, const TVMFFIAny* args, int32_t i,
                              int32_t type_index, const char* type_key);
int tffi_builtin_check_int(const char* fn, const TVMFFIAny* args, int32_t i);

#endif
