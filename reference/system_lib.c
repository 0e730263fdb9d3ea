#include "system_lib.h"

#include <pthread.h>
#include <string.h>

#include "tffi_error.h"
#include "library_loader.h"
#include "mem.h"
#include "object.h"
#include "vec.h"

typedef struct {
  char* prefix;
  size_t len;           /* of prefix, which holds no NUL */
  TVMFFIObject* module; /* the table's own reference */
} TffiSystemModule;

static pthread_mutex_t tffi_system_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  TffiSystemModule* items;
  size_t n, cap;
} tffi_system_modules;

/* Lock held. */
static int tffi_system_lib_create(const char* prefix, size_t len, TVMFFIObject** out) {
  TffiLibrary* lib = tffi_library_system(prefix, len);
  if (lib == NULL) return -1;
  int rc = tffi_library_module_create(lib, out);
  tffi_library_release(lib);
  if (rc != 0) return -1;
  TffiSystemModule entry = {tffi_strndup(prefix, len), len, *out};
  if (entry.prefix == NULL || TFFI_VEC_PUSH(&tffi_system_modules, entry) != 0) {
    tffi_free(entry.prefix);
    tffi_decref(*out);
    *out = NULL;
    return tffi_raise_oom(len + sizeof entry);
  }
  tffi_incref(*out);
  return 0;
}

int tffi_system_lib_get(const char* prefix, size_t len, TVMFFIObject** out) {
  if (memchr(prefix, '\0', len) != NULL) {
    return tffi_raise(TFFI_VALUE_ERROR,
                      "ffi.SystemLib: argument #0 (symbol_prefix) contains a NUL byte");
  }
  int rc = 0;
  *out = NULL;
  pthread_mutex_lock(&tffi_system_lock);
  for (size_t i = 0; i < tffi_system_modules.n && *out == NULL; ++i) {
    const TffiSystemModule* e = &tffi_system_modules.items[i];
    if (e->len == len && memcmp(e->prefix, prefix, len) == 0) *out = e->module;
  }
  if (*out)
    tffi_incref(*out);
  else
    rc = tffi_system_lib_create(prefix, len, out);
  pthread_mutex_unlock(&tffi_system_lock);
  return rc;
}
