/* Strings and bytes of the reference runtime: small values inline in a
 * TVMFFIAny, longer ones as heap objects (header, TVMFFIByteArray, bytes). */
#ifndef TFFI_STRING_H_
#define TFFI_STRING_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

/* Longest content kept inline in a TVMFFIAny: the 8 payload bytes less one
 * for the NUL terminator that C callers may rely on. */
#define TFFI_SMALL_STR_MAX 7

/*
 * Makes a heap String (type_index kTVMFFIStr) or Bytes (kTVMFFIBytes) object
 * holding a copy of data[0..size) followed by a NUL byte, whatever the size.
 * Returns a new reference, or NULL with MemoryError raised (also for a size
 * too large to allocate). Any other type_index returns NULL with ValueError.
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

/* The content of a string or bytes value of any of the four kinds, or NULL
 * when `value` holds something else. */
const char* tffi_any_str_data(const TVMFFIAny* value, size_t* size);

#endif
