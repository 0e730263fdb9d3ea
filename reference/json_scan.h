/* A strict, small JSON reader for the runtime's own parsers (the JSON
 * graphs of "ffi.FromJSONGraphString"): tokens read in place from a byte
 * span, nesting bounded, every error a ValueError naming the byte. */
#ifndef TFFI_JSON_SCAN_H_
#define TFFI_JSON_SCAN_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char* fn; /* named first in every error */
  const char* s;
  size_t n, at;
  int depth;
} TffiJson;

/* ValueError "<fn>: <what> at byte <n>"; returns -1. */
int tffi_json_fail(const TffiJson* j, const char* what);

/* Skips blanks; takes `c` when it comes next (1), else 0. */
void tffi_json_space(TffiJson* j);
int tffi_json_eat(TffiJson* j, char c);

/* Takes `c`, or fails. */
int tffi_json_expect(TffiJson* j, char c);

/* A string, unescaped (\uXXXX and surrogate pairs to UTF-8), into a new
 * NUL-terminated buffer (*out, *len; give it back with tffi_free). */
int tffi_json_string(TffiJson* j, char** out, size_t* len);

/* Skips one value of any kind. */
int tffi_json_skip(TffiJson* j);

/* A number or literal (true, NaN, ...) as text in buf[0..cap). */
int tffi_json_token(TffiJson* j, char* buf, size_t cap);

/* An integer that fits int64. */
int tffi_json_int(TffiJson* j, int64_t* out);

#endif
