/*
 * The one vocabulary for bad arguments at the ABI boundary. Every message
 * names the API function first and the argument second (Lua's
 * "bad argument #1 to 'f'"), so a caller can find the mistake from the
 * message alone:
 *
 *   "<api>: <param> is NULL"                              a C parameter
 *   "<api>: <param> <detail>"                             a C parameter
 *   "<fn>: argument #<i> (<name>) expected <type> but got type index <t>"
 *   "<fn>: expected <n> arguments but got <m>"            packed arguments
 *
 * Each returns -1 with the error raised, so checks read
 * `if (x == NULL) return tffi_arg_null("TVMFFIFoo", "x");`.
 */
#ifndef TFFI_ARG_H_
#define TFFI_ARG_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* ValueError "<api>: <param> is NULL". */
int tffi_arg_null(const char* api, const char* param);

/* `kind` "<api>: <param> <printf detail>". */
int tffi_arg_error(const char* kind, const char* api, const char* param, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Packed arguments of a global function (TVMFFIAny args[n]). */
int tffi_args_count(const char* fn, int32_t got, int32_t want);

/* `kind` "<fn>: argument #<i> (<name>) <printf detail>". */
int tffi_args_error(const char* kind, const char* fn, int32_t i, const char* name, const char* fmt,
                    ...) __attribute__((format(printf, 5, 6)));

/* An object of exactly `type_index` (named `type_key` in the message), not
 * NULL; *out borrows it. */
int tffi_args_object(const char* fn, const TVMFFIAny* args, int32_t i, const char* name,
                     int32_t type_index, const char* type_key, TVMFFIObject** out);

/* An int (a bool counts). */
int tffi_args_int(const char* fn, const TVMFFIAny* args, int32_t i, const char* name, int64_t* out);

/* A bool (an int counts: nonzero is true). */
int tffi_args_bool(const char* fn, const TVMFFIAny* args, int32_t i, const char* name, int* out);

/* A str (raw C string, small or heap string); *data is not NUL-terminated
 * for small strings beyond *size. */
int tffi_args_str(const char* fn, const TVMFFIAny* args, int32_t i, const char* name,
                  const char** data, size_t* size);

#endif
