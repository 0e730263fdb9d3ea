/* "ffi.String" and "ffi.Bytes": a str or bytes argument, in whichever form
 * it arrived (a C string or byte-array pointer, small, heap), handed back as
 * an owned value of the runtime's own form. */
#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "tffi_string.h"

/* "ffi.String"(str) -> str. */
static int tffi_string_call(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  const char* data;
  size_t size;
  if (tffi_args_count(self, num_args, 1) || tffi_args_str(self, args, 0, "value", &data, &size))
    return -1;
  return tffi_any_from_bytes(kTVMFFIStr, data, size, result);
}

/* "ffi.Bytes"(bytes) -> bytes. */
static int tffi_bytes_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (tffi_args_count(self, num_args, 1)) return -1;
  int32_t t = args[0].type_index;
  const char* data = NULL;
  size_t size = 0;
  if (t == kTVMFFIByteArrayPtr && args[0].v_ptr != NULL) {
    const TVMFFIByteArray* bytes = args[0].v_ptr;
    data = bytes->data;
    size = bytes->size;
    if (data == NULL && size == 0) data = "";
  } else if ((t == kTVMFFISmallBytes) || (t == kTVMFFIBytes && args[0].v_obj != NULL)) {
    data = tffi_any_str_data(&args[0], &size);
  }
  if (data == NULL)
    return tffi_args_error(TFFI_TYPE_ERROR, self, 0, "value",
                           "expected bytes but got type index %d", (int)t);
  return tffi_any_from_bytes(kTVMFFIBytes, data, size, result);
}

__attribute__((constructor)) static void tffi_string_globals_register(void) {
  tffi_builtin_register("ffi.String", tffi_string_call);
  tffi_builtin_register("ffi.Bytes", tffi_bytes_call);
}
