/* Text for "ffi.ReprPrint" (repr_print.c): a growable buffer and the
 * spellings upstream's printer uses for str, bytes, big ints, devices. */
#ifndef TFFI_REPR_TEXT_H_
#define TFFI_REPR_TEXT_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

typedef struct {
  char* items;
  size_t n, cap;
  int failed; /* set once an append ran out of memory; later appends do nothing */
} TffiText;

/* Appends bytes, a C string, or printf output (memory failure sets
 * `failed`, reported once by the caller). */
void tffi_text_add(TffiText* t, const char* data, size_t size);
void tffi_text_str(TffiText* t, const char* s);
/* Appends `size` bytes of `from` at `start`; `from` may be t itself. */
void tffi_text_copy(TffiText* t, const TffiText* from, size_t start, size_t size);
void tffi_text_printf(TffiText* t, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* A str as a double-quoted Python literal: \n \t \r \\ \" escaped, other
 * control bytes as \xNN, UTF-8 sequences as \uXXXX or \UXXXXXXXX, ANSI
 * colour sequences (ESC [ digits ; m or K) kept, bad bytes as \xNN. */
void tffi_text_quoted(TffiText* t, const char* data, size_t size);

/* bytes as b"...": printable ASCII as is, anything else (and " \) \xNN. */
void tffi_text_bytes(TffiText* t, const char* data, size_t size);

/* A big int's words (two's complement, least significant first) in
 * decimal. */
void tffi_text_bigint(TffiText* t, const char* words, size_t size);

/* A device as "<kind name>:<id>" ("cpu:0", "cuda:1", "unknown:3"). */
void tffi_text_device(TffiText* t, DLDevice device);

#endif
