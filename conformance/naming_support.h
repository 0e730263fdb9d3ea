/* The shape of a refusal's message, read through the ABI: it names the API
 * function (the whole name), then the offending argument, then what is
 * wrong with it. A message with those parts out of order, or with one of
 * them missing, leaves the caller guessing which call and which argument
 * failed. */
#ifndef CONFORMANCE_NAMING_SUPPORT_H_
#define CONFORMANCE_NAMING_SUPPORT_H_

#include <string.h>

#include "core_support.h"

/* Where `api` occurs in [at, end) as a whole name (not the head of a longer
 * identifier such as TVMFFITensorFromDLPackVersioned), or NULL. */
static inline const char* naming_find_api(const char* at, const char* end, const char* api) {
  size_t n = strlen(api);
  while ((at = memmem(at, (size_t)(end - at), api, n)) != NULL) {
    char next = at + n < end ? at[n] : ' ';
    int ident = next == '_' || (next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') ||
                (next >= '0' && next <= '9');
    if (!ident) return at;
    at += n;
  }
  return NULL;
}

/* Takes the raised error and checks its kind exactly (any kind when `kind`
 * is NULL), and that its message
 * holds `api`, then `arg` after it, then each of `detail` and `detail2`
 * (either may be NULL) after the argument. */
static inline void naming_expect(const char* kind, const char* api, const char* arg,
                                 const char* detail, const char* detail2) {
  TVMFFIObjectHandle err = core_take_raised();
  cr_assert(err != NULL && err != (TVMFFIObjectHandle)(uintptr_t)0x1,
            "%s: nothing raised (%s expected)", api, kind ? kind : "an error");
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((const char*)err + sizeof(TVMFFIObject));
  const char* msg = cell->message.data;
  const char* end = msg + cell->message.size;
  int size = (int)cell->message.size;
  cr_expect(kind == NULL ||
                (cell->kind.size == strlen(kind) && memcmp(cell->kind.data, kind, strlen(kind)) == 0),
            "%s: raised %.*s, expected %s (message: %.*s)", api, (int)cell->kind.size,
            cell->kind.data, kind ? kind : "", size, msg);
  const char* at = naming_find_api(msg, end, api);
  cr_expect(at != NULL, "%s: the message does not name the function: %.*s", api, size, msg);
  const char* after_api = at ? at + strlen(api) : msg;
  const char* at_arg = memmem(after_api, (size_t)(end - after_api), arg, strlen(arg));
  cr_expect(at_arg != NULL, "%s: the message does not name `%s` after the function: %.*s", api,
            arg, size, msg);
  const char* after_arg = at_arg ? at_arg + strlen(arg) : after_api;
  const char* details[2] = {detail, detail2};
  for (int i = 0; i < 2; ++i) {
    if (details[i] == NULL) continue;
    cr_expect(memmem(after_arg, (size_t)(end - after_arg), details[i], strlen(details[i])) != NULL,
              "%s: the message does not say \"%s\" after `%s`: %.*s", api, details[i], arg, size,
              msg);
  }
  API(TVMFFIObjectDecRef)(err);
}

#endif
