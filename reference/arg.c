#include "arg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tffi_error.h"

int tffi_arg_null(const char* api, const char* param) {
  return tffi_raise(TFFI_VALUE_ERROR, "%s: %s is NULL", api, param);
}

int tffi_arg_error(const char* kind, const char* api, const char* param, const char* fmt, ...) {
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return tffi_raise(kind, "%s: %s %s", api, param, detail);
}

int tffi_args_count(const char* fn, int32_t got, int32_t want) {
  if (got == want) return 0;
  return tffi_raise(TFFI_TYPE_ERROR, "%s: expected %d arguments but got %d", fn, (int)want,
                    (int)got);
}

int tffi_args_error(const char* kind, const char* fn, int32_t i, const char* name, const char* fmt,
                    ...) {
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return tffi_raise(kind, "%s: argument #%d (%s) %s", fn, (int)i, name, detail);
}

static int tffi_args_mismatch(const char* fn, const TVMFFIAny* args, int32_t i, const char* name,
                              const char* type_key) {
  return tffi_args_error(TFFI_TYPE_ERROR, fn, i, name, "expected %s but got type index %d",
                         type_key, (int)args[i].type_index);
}

int tffi_args_object(const char* fn, const TVMFFIAny* args, int32_t i, const char* name,
                     int32_t type_index, const char* type_key, TVMFFIObject** out) {
  if (args[i].type_index != type_index) return tffi_args_mismatch(fn, args, i, name, type_key);
  /* An object-tagged value with no object would be dereferenced later. */
  if (args[i].v_obj == NULL)
    return tffi_args_error(TFFI_TYPE_ERROR, fn, i, name, "is a NULL %s", type_key);
  *out = args[i].v_obj;
  return 0;
}

int tffi_args_int(const char* fn, const TVMFFIAny* args, int32_t i, const char* name,
                  int64_t* out) {
  if (args[i].type_index != kTVMFFIInt && args[i].type_index != kTVMFFIBool)
    return tffi_args_mismatch(fn, args, i, name, "int");
  *out = args[i].v_int64;
  return 0;
}

int tffi_args_bool(const char* fn, const TVMFFIAny* args, int32_t i, const char* name, int* out) {
  if (args[i].type_index != kTVMFFIBool && args[i].type_index != kTVMFFIInt)
    return tffi_args_mismatch(fn, args, i, name, "bool");
  *out = args[i].v_int64 != 0;
  return 0;
}

int tffi_args_str(const char* fn, const TVMFFIAny* args, int32_t i, const char* name,
                  const char** data, size_t* size) {
  int32_t t = args[i].type_index;
  *data = NULL;
  if (t == kTVMFFIRawStr && args[i].v_c_str != NULL) {
    *data = args[i].v_c_str;
    *size = strlen(*data);
  } else if (t == kTVMFFISmallStr) {
    *data = args[i].v_bytes;
    *size = args[i].small_str_len;
  } else if (t == kTVMFFIStr && args[i].v_obj != NULL) {
    const TVMFFIByteArray* bytes = TVMFFIBytesGetByteArrayPtr(args[i].v_obj);
    *data = bytes->data;
    *size = bytes->size;
  }
  if (*data == NULL) return tffi_args_mismatch(fn, args, i, name, "str");
  return 0;
}
