#include "library.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "tffi_error.h"
#include "mem.h"
#include "names.h"
#include "symbol_table.h"

struct TffiLibrary {
  atomic_size_t refs;
  void* handle; /* dlopen handle; NULL for the system library */
  char* prefix; /* system library: the prefix given to ffi.SystemLib */
};

TffiLibrary* tffi_library_open(const char* path) {
  /* Lazy binding, as upstream: a library may reference functions it never
   * calls. Local: two kernel libraries must not see each other's symbols. */
  void* handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (handle == NULL) {
    const char* why = dlerror();
    tffi_raise(TFFI_RUNTIME_ERROR, "failed to load dynamic shared library %s: %s", path,
               why ? why : "unknown dlopen error");
    return NULL;
  }
  TffiLibrary* lib = tffi_calloc(1, sizeof *lib);
  if (lib == NULL) {
    dlclose(handle);
    tffi_raise_oom(sizeof *lib);
    return NULL;
  }
  atomic_init(&lib->refs, 1);
  lib->handle = handle;
  return lib;
}

TffiLibrary* tffi_library_system(const char* prefix, size_t len) {
  TffiLibrary* lib = tffi_calloc(1, sizeof *lib);
  char* copy = lib ? tffi_strndup(prefix, len) : NULL;
  if (copy == NULL) {
    tffi_free(lib);
    tffi_raise_oom(len + sizeof *lib);
    return NULL;
  }
  atomic_init(&lib->refs, 1);
  lib->prefix = copy;
  return lib;
}

void tffi_library_retain(TffiLibrary* lib) { atomic_fetch_add(&lib->refs, 1); }

void tffi_library_release(TffiLibrary* lib) {
  if (atomic_fetch_sub(&lib->refs, 1) != 1) return;
  if (lib->handle) dlclose(lib->handle);
  tffi_free(lib->prefix);
  tffi_free(lib);
}

/* The system symbol `<prefix><name>`. */
static int tffi_system_get(const char* prefix, const char* name, void** out) {
  char* full = tffi_prefixed(prefix, name, strlen(name));
  if (full == NULL) return -1;
  *out = tffi_system_symbol(full);
  tffi_free(full);
  return 0;
}

/* The name may or may not carry the library's own prefix: try both. */
static int tffi_system_lookup(TffiLibrary* lib, const char* name, int with_prefix, void** out) {
  const char* kind = with_prefix ? TFFI_SYMBOL_PREFIX : "";
  char* own = tffi_prefixed(kind, lib->prefix, strlen(lib->prefix));
  if (own == NULL) return -1;
  int rc = tffi_system_get(own, name, out);
  tffi_free(own);
  if (rc == 0 && *out == NULL) rc = tffi_system_get(kind, name, out);
  return rc;
}

int tffi_library_symbol(TffiLibrary* lib, const char* name, int with_prefix, void** out) {
  *out = NULL;
  if (lib->handle == NULL) return tffi_system_lookup(lib, name, with_prefix, out);
  if (!with_prefix) {
    *out = dlsym(lib->handle, name);
    return 0;
  }
  char* full = tffi_prefixed(TFFI_SYMBOL_PREFIX, name, strlen(name));
  if (full == NULL) return -1;
  *out = dlsym(lib->handle, full);
  tffi_free(full);
  return 0;
}

/* A `__tvm_ffi_x` that names a variable (the blob, the context pointer,
 * anything else) must not be jumped into. The dynamic symbol entry tells;
 * when the loader cannot say, the symbol is trusted. */
int tffi_library_is_code(void* addr) {
  Dl_info info;
  const ElfW(Sym)* sym = NULL;
  if (dladdr1(addr, &info, (void**)&sym, RTLD_DL_SYMENT) == 0 || sym == NULL) return 1;
  if (info.dli_saddr != addr) return 1;
  int type = ELF64_ST_TYPE(sym->st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
}
