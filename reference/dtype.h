/* DLPack data types as strings: TVMFFIDataTypeFromString and
 * TVMFFIDataTypeToString. */
#ifndef TFFI_DTYPE_H_
#define TFFI_DTYPE_H_

#include <dlpack/dlpack.h>
#include <limits.h>
#include <stddef.h>

/* Longest dtype string accepted; longer input is refused before parsing.
 * Any length a message can quote (its %.*s precision is an int) is read,
 * as upstream reads any length: leading zeros may pad a number freely. */
#define TFFI_DTYPE_STR_MAX INT_MAX

/* Longest text TVMFFIDataTypeToString can produce, NUL included. */
#define TFFI_DTYPE_TEXT_MAX 48

/* Parses text[0..len) into *out. Returns 0, or -1 with ValueError raised. */
int tffi_dtype_parse(const char* text, size_t len, DLDataType* out);

/* Writes the canonical text of `dtype` into buf (TFFI_DTYPE_TEXT_MAX bytes)
 * and returns its length, or -1 with ValueError raised. The text ends in a
 * NUL, except the void type's empty text: buf is left as it was. */
int tffi_dtype_format(DLDataType dtype, char* buf);

#endif
