/* Strings and bytes of the reference runtime: small values inline in a
 * TVMFFIAny, longer ones as heap objects (header, TVMFFIByteArray, bytes). */
#ifndef TFFI_STRING_H_
#define TFFI_STRING_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

/* Longest content kept inline in a TVMFFIAny: the 8 payload bytes less one
 * for the NUL terminator that C callers may rely on. */
#define TFFI_SMALL_STR_MAX 7

/*
 * Stores data[0..size) (size <= TFFI_SMALL_STR_MAX) as an inline value of
 * kind `small_kind` (kTVMFFISmallStr or kTVMFFISmallBytes); the payload's
 * unused bytes are zero, so a NUL always follows the content. Two
 * overlapping fixed-size moves instead of a memcpy call, reading no byte
 * outside data[0..size).
 */
static inline void tffi_any_small_str(int32_t small_kind, const char* data, size_t size,
                                      TVMFFIAny* out) {
  out->type_index = small_kind;
  out->small_str_len = (uint32_t)size;
  out->v_int64 = 0;
  if (size >= 4) {
    memcpy(out->v_bytes, data, 4);
    memcpy(out->v_bytes + size - 4, data + size - 4, 4);
  } else if (size >= 2) {
    memcpy(out->v_bytes, data, 2);
    memcpy(out->v_bytes + size - 2, data + size - 2, 2);
  } else if (size == 1) {
    out->v_bytes[0] = data[0];
  }
}

/*
 * Makes a heap String (type_index kTVMFFIStr) or Bytes (kTVMFFIBytes) object
 * holding a copy of data[0..size) followed by a NUL byte, whatever the size.
 * Returns a new reference, or NULL with MemoryError raised (also for a size
 * too large to allocate). type_index is kTVMFFIStr or kTVMFFIBytes: every
 * caller passes one of them as a constant, so nothing here checks it.
 */
TVMFFIObject* tffi_str_new(int32_t type_index, const char* data, size_t size);

/*
 * Stores a copy of data[0..size) in *out exactly as TVMFFIStringFromByteArray
 * (type_index kTVMFFIStr) or TVMFFIBytesFromByteArray (kTVMFFIBytes) would:
 * inline as kTVMFFISmallStr/kTVMFFISmallBytes up to TFFI_SMALL_STR_MAX bytes,
 * as a heap object beyond. *out is overwritten, not released. Returns 0, or
 * -1 with the error raised (then *out is None).
 */
int tffi_any_from_bytes(int32_t type_index, const char* data, size_t size, TVMFFIAny* out);

/* As tffi_any_from_bytes(kTVMFFIStr, s, strlen(s), out): the C string s
 * (not NULL) as an owned str, measured once. */
int tffi_any_from_c_str(const char* s, TVMFFIAny* out);

/* The content of a string or bytes value of any of the four kinds, or NULL
 * when `value` holds something else. */
const char* tffi_any_str_data(const TVMFFIAny* value, size_t* size);

#endif
