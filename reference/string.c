/* Strings and bytes: TVMFFIStringFromByteArray, TVMFFIBytesFromByteArray and
 * the helpers other parts of the runtime build them with. */
#include "tffi_string.h"

#include <string.h>

#include "arg.h"
#include "tffi_error.h"
#include "object.h"

/* A heap string is one allocation: header, the TVMFFIByteArray that callers
 * read through TVMFFIBytesGetByteArrayPtr, then the bytes and a NUL. */
typedef struct {
  TVMFFIObject header;
  TVMFFIByteArray bytes;
} TffiStr;

/* The storage of a heap string when a custom allocator is registered or
 * the size is beyond what the default allocator takes (raising then): out
 * of line, so that the common path keeps a short frame. */
__attribute__((noinline)) static TffiStr* tffi_str_alloc_rare(int32_t type_index, size_t size) {
  /* Refuse sizes whose total would wrap before asking for memory. */
  if (size > SIZE_MAX - sizeof(TffiStr) - 1) {
    tffi_raise_oom(size);
    return NULL;
  }
  return tffi_object_alloc_uninit(sizeof(TffiStr) + size + 1, type_index, tffi_object_delete_plain);
}

/* The largest size the default allocator's inline path is asked for. */
#define TFFI_STR_INLINE_MAX (PTRDIFF_MAX - TFFI_BODY_OFFSET - sizeof(TffiStr) - 1)

/* A heap String or Bytes holding data[0..size) and a NUL, stored in *out
 * (None on failure). Inlined into its callers so that an owned string costs
 * one frame from the measure to the copy; the copy comes last, so that only
 * the return is left after it. */
static inline __attribute__((always_inline)) int tffi_heap_str(int32_t type_index, const char* data,
                                                               size_t size, TVMFFIAny* out) {
  TffiStr* str;
  if (__builtin_expect(tffi_allocator_custom() == NULL && size <= TFFI_STR_INLINE_MAX, 1)) {
    str = tffi_allocator_default_body(sizeof(TffiStr) + size + 1);
    if (str != NULL)
      tffi_object_init_header(&str->header, type_index, tffi_object_delete_plain);
    else
      tffi_raise_oom(size);
  } else {
    str = tffi_str_alloc_rare(type_index, size);
  }
  if (str == NULL) {
    *out = (TVMFFIAny){0};
    return -1;
  }
  char* chars = (char*)(str + 1);
  chars[size] = '\0';
  str->bytes.data = chars;
  str->bytes.size = size;
  out->type_index = type_index;
  out->zero_padding = 0;
  out->v_obj = &str->header;
  memcpy(chars, data, size);
  return 0;
}

TVMFFIObject* tffi_str_new(int32_t type_index, const char* data, size_t size) {
  TVMFFIAny made;
  return tffi_heap_str(type_index, data, size, &made) == 0 ? made.v_obj : NULL;
}

/* Small values inline in *out, longer ones on the heap. */
static inline __attribute__((always_inline)) int tffi_from_bytes(int32_t type_index,
                                                                 const char* data, size_t size,
                                                                 TVMFFIAny* out) {
  if (size > TFFI_SMALL_STR_MAX) return tffi_heap_str(type_index, data, size, out);
  tffi_any_small_str(type_index == kTVMFFIStr ? kTVMFFISmallStr : kTVMFFISmallBytes, data, size,
                     out);
  return 0;
}

int tffi_any_from_bytes(int32_t type_index, const char* data, size_t size, TVMFFIAny* out) {
  return tffi_from_bytes(type_index, data, size, out);
}

int tffi_any_from_c_str(const char* s, TVMFFIAny* out) {
  return tffi_from_bytes(kTVMFFIStr, s, strlen(s), out);
}

const char* tffi_any_str_data(const TVMFFIAny* value, size_t* size) {
  switch (value->type_index) {
    case kTVMFFISmallStr:
    case kTVMFFISmallBytes: *size = value->small_str_len; return value->v_bytes;
    case kTVMFFIStr:
    case kTVMFFIBytes: {
      const TVMFFIByteArray* bytes = TVMFFIBytesGetByteArrayPtr(value->v_obj);
      *size = bytes->size;
      return bytes->data;
    }
    default: *size = 0; return NULL;
  }
}

static int tffi_from_byte_array(int32_t type_index, const char* api, const TVMFFIByteArray* input,
                                TVMFFIAny* out) {
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
