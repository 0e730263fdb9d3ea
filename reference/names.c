#include "names.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "mem.h"

char* tffi_prefixed_in(char* buf, size_t cap, const char* prefix, const char* name, size_t len) {
  if (len >= cap) return tffi_prefixed(prefix, name, len);
  /* snprintf never writes past cap: a name that does not fit whole, NUL
   * included, is only cut short in buf, and then made on the heap. */
  int n = snprintf(buf, cap, "%s%.*s", prefix, (int)len, name);
  if (n >= 0 && (size_t)n < cap) return buf;
  return tffi_prefixed(prefix, name, len);
}

void tffi_prefixed_done(char* name, const char* buf) {
  if (name != buf) tffi_free(name);
}

char* tffi_prefixed(const char* prefix, const char* name, size_t len) {
  size_t plen = strlen(prefix);
  if (len > SIZE_MAX - plen - 1) {
    tffi_raise_oom(SIZE_MAX);
    return NULL;
  }
  char* out = tffi_malloc(plen + len + 1);
  if (out == NULL) {
    tffi_raise_oom(plen + len + 1);
    return NULL;
  }
  memcpy(out, prefix, plen);
  if (len) memcpy(out + plen, name, len);
  out[plen + len] = '\0';
  return out;
}
