#include "names.h"

#include <stdint.h>
#include <string.h>

#include "tffi_error.h"
#include "mem.h"

char* tffi_prefixed_in(char* buf, size_t cap, const char* prefix, const char* name, size_t len) {
  size_t plen = strlen(prefix);
  /* Whole, NUL included, or not at all: nothing is written past cap. */
  if (len >= cap || plen >= cap - len) return tffi_prefixed(prefix, name, len);
  memcpy(buf, prefix, plen);
  memcpy(buf + plen, name, len);
  buf[plen + len] = '\0';
  return buf;
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
