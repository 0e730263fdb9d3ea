/* Strings and bytes: TVMFFIStringFromByteArray, TVMFFIBytesFromByteArray and
 * the helpers other parts of the runtime build them with. */
#include "string.h"

#include <string.h>

#include "arg.h"
#include "error.h"
#include "object.h"

/* A heap string is one allocation: header, the TVMFFIByteArray that callers
 * read through TVMFFIBytesGetByteArrayPtr, then the bytes and a NUL. */
typedef struct {
  TVMFFIObject header;
  TVMFFIByteArray bytes;
} TffiStr;

TVMFFIObject* tffi_str_new(int32_t type_index, const char* data, size_t size) {
  /* Refuse sizes whose total would wrap before asking for memory. */
  if (size > SIZE_MAX - sizeof(TffiStr) - 1) {
    tffi_raise_oom(size);
    return NULL;
  }
  TffiStr* str = tffi_object_alloc_uninit(sizeof(TffiStr) + size + 1, type_index,
                                          tffi_object_delete_plain);
  if (str == NULL) return NULL;
  char* chars = (char*)(str + 1);
  memcpy(chars, data, size); /* size > 0: short values stay inline */
  chars[size] = '\0';
  str->bytes.data = chars;
  str->bytes.size = size;
  return &str->header;
}

int tffi_any_from_bytes(int32_t type_index, const char* data, size_t size, TVMFFIAny* out) {
  *out = (TVMFFIAny){0};
  if (size <= TFFI_SMALL_STR_MAX) {
    tffi_any_small_str(type_index == kTVMFFIStr ? kTVMFFISmallStr : kTVMFFISmallBytes, data,
                       size, out);
    return 0;
  }
  TVMFFIObject* obj = tffi_str_new(type_index, data, size);
  if (obj == NULL) return -1;
  out->type_index = type_index;
  out->v_obj = obj;
  return 0;
}

const char* tffi_any_str_data(const TVMFFIAny* value, size_t* size) {
  switch (value->type_index) {
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes:
      *size = value->small_str_len;
      return value->v_bytes;
    case kTVMFFIStr:
    case kTVMFFIBytes: {
      const TVMFFIByteArray* bytes = TVMFFIBytesGetByteArrayPtr(value->v_obj);
      *size = bytes->size;
      return bytes->data;
    }
    default:
      *size = 0;
      return NULL;
  }
}

static int tffi_from_byte_array(int32_t type_index, const char* api,
                                const TVMFFIByteArray* input, TVMFFIAny* out) {
  if (out == NULL) return tffi_arg_null(api, "out");
  if (input == NULL) {
    *out = (TVMFFIAny){0};
    return tffi_arg_null(api, "input");
  }
  if (input->data == NULL && input->size != 0) {
    *out = (TVMFFIAny){0};
    return tffi_raise(TFFI_VALUE_ERROR, "%s: input->data is NULL with input->size %zu", api,
                      input->size);
  }
  return tffi_any_from_bytes(type_index, input->data, input->size, out);
}

int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return tffi_from_byte_array(kTVMFFIStr, "TVMFFIStringFromByteArray", input, out);
}

int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out) {
  return tffi_from_byte_array(kTVMFFIBytes, "TVMFFIBytesFromByteArray", input, out);
}
