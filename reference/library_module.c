/* Library modules: shared libraries and the system-library symbol table,
 * the library_bin blob they may carry, and the context symbols the host
 * asks to have filled in every library it loads. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "library_bin.h"
#include "module.h"
#include "object.h"
#include "string.h"
#include "mem.h"

struct TffiLibrary {
  atomic_size_t refs;
  void* handle;  /* dlopen handle; NULL for the system library */
  char* prefix;  /* system library: the prefix given to ffi.SystemLib */
};

/* ---- name -> pointer tables (context symbols, system-library symbols) ---- */

typedef struct {
  char* name;
  void* ptr;
} TffiSymbolEntry;

typedef struct {
  pthread_mutex_t lock;
  TffiSymbolEntry* items;
  size_t n;
} TffiSymbolTable;

static TffiSymbolTable tffi_context_symbols = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};
static TffiSymbolTable tffi_system_symbols = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

/* Sets name -> ptr, replacing an existing entry when `replace`, else
 * appending (context symbols keep every registration, as upstream). */
static int tffi_table_put(TffiSymbolTable* t, const char* name, void* ptr, int replace) {
  int rc = 0;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; replace && i < t->n; ++i) {
    if (strcmp(t->items[i].name, name) == 0) {
      t->items[i].ptr = ptr;
      pthread_mutex_unlock(&t->lock);
      return 0;
    }
  }
  TffiSymbolEntry* more = tffi_realloc(t->items, (t->n + 1) * sizeof *more);
  char* copy = tffi_strdup(name);
  if (more) t->items = more;
  if (more == NULL || copy == NULL) {
    tffi_free(copy);
    rc = tffi_raise_oom(strlen(name) + sizeof *more);
  } else {
    t->items[t->n].name = copy;
    t->items[t->n++].ptr = ptr;
  }
  pthread_mutex_unlock(&t->lock);
  return rc;
}

static void* tffi_table_get(TffiSymbolTable* t, const char* name) {
  void* ptr = NULL;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; i < t->n && ptr == NULL; ++i) {
    if (strcmp(t->items[i].name, name) == 0) ptr = t->items[i].ptr;
  }
  pthread_mutex_unlock(&t->lock);
  return ptr;
}

int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol) {
  if (name == NULL) {
    return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIEnvModRegisterContextSymbol: name is NULL");
  }
  return tffi_table_put(&tffi_context_symbols, name, symbol, 0);
}

int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* ptr) {
  if (name == NULL) {
    return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIEnvModRegisterSystemLibSymbol: name is NULL");
  }
  return tffi_table_put(&tffi_system_symbols, name, ptr, 1);
}

/* ---- libraries ---- */

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

/* System-library lookup: `<a><b>` in the registered table. */
static int tffi_system_get(const char* a, const char* b, void** out) {
  size_t na = strlen(a), nb = strlen(b);
  char* name = tffi_malloc(na + nb + 1);
  if (name == NULL) return tffi_raise_oom(na + nb + 1);
  memcpy(name, a, na);
  memcpy(name + na, b, nb + 1);
  *out = tffi_table_get(&tffi_system_symbols, name);
  tffi_free(name);
  return 0;
}

int tffi_library_symbol(TffiLibrary* lib, const char* name, int with_prefix, void** out) {
  *out = NULL;
  if (lib->handle == NULL) {
    /* The name may or may not carry the library's own prefix: try both. */
    size_t size = sizeof TFFI_SYMBOL_PREFIX + strlen(lib->prefix) + strlen(name);
    char* inner = tffi_malloc(size);
    if (inner == NULL) return tffi_raise_oom(size);
    strcpy(inner, with_prefix ? TFFI_SYMBOL_PREFIX : "");
    strcat(inner, lib->prefix);
    if (tffi_system_get(inner, name, out) != 0 ||
        (*out == NULL && tffi_system_get(with_prefix ? TFFI_SYMBOL_PREFIX : "", name, out) != 0)) {
      tffi_free(inner);
      return -1;
    }
    tffi_free(inner);
    return 0;
  }
  if (!with_prefix) {
    *out = dlsym(lib->handle, name);
    return 0;
  }
  size_t size = sizeof TFFI_SYMBOL_PREFIX + strlen(name);
  char* full = tffi_malloc(size);
  if (full == NULL) return tffi_raise_oom(size);
  strcpy(full, TFFI_SYMBOL_PREFIX);
  strcat(full, name);
  *out = dlsym(lib->handle, full);
  tffi_free(full);
  return 0;
}

/* ---- the library_bin blob ---- */

typedef struct {
  uintptr_t addr;
  uintptr_t end; /* out: end of the PT_LOAD segment holding addr */
} TffiSegmentQuery;

static int tffi_segment_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  TffiSegmentQuery* q = data;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    /* p_memsz: the zero-filled tail of the segment is mapped too. */
    if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr - lo < ph->p_memsz) {
      q->end = lo + ph->p_memsz;
      return 1;
    }
  }
  return 0;
}

/* How many bytes at `blob` may be read: the symbol's st_size from the
 * dynamic symbol table, or, when the symbol has no size (hand-written
 * assembly), up to the end of the loaded segment holding it. 0 when the
 * address belongs to no loaded object. */
static size_t tffi_symbol_extent(const void* blob) {
  Dl_info info;
  const ElfW(Sym)* sym = NULL;
  if (dladdr1(blob, &info, (void**)&sym, RTLD_DL_SYMENT) != 0 && sym != NULL &&
      info.dli_saddr == blob && sym->st_size > 0) {
    return (size_t)sym->st_size;
  }
  TffiSegmentQuery q = {(uintptr_t)blob, 0};
  if (dl_iterate_phdr(tffi_segment_cb, &q) == 0) return 0;
  return q.end - q.addr;
}

/* Calls ffi.Module.load_from_bytes.<kind>(payload) and checks it gave a
 * module. *out is a new reference. */
static int tffi_load_from_bytes(const TffiLibraryBinEntry* e, TVMFFIObject** out) {
  static const char prefix[] = "ffi.Module.load_from_bytes.";
  size_t plen = sizeof prefix - 1;
  char* name = tffi_malloc(plen + e->kind_size + 1);
  if (name == NULL) return tffi_raise_oom(plen + e->kind_size + 1);
  memcpy(name, prefix, plen);
  memcpy(name + plen, e->kind, e->kind_size);
  name[plen + e->kind_size] = '\0';
  TVMFFIObject* loader = NULL;
  int rc = tffi_global_get(name, plen + e->kind_size, &loader);
  if (rc == 0 && loader == NULL) {
    rc = tffi_raise(TFFI_RUNTIME_ERROR,
                    "library_bin: module kind '%.*s' has no loader: %s is not registered",
                    (int)(e->kind_size < 256 ? e->kind_size : 256), e->kind, name);
  }
  TVMFFIAny arg = tffi_any_none(), result = tffi_any_none();
  if (rc == 0) {
    rc = tffi_any_from_bytes(kTVMFFIBytes, (const char*)e->payload, e->payload_size, &arg);
  }
  if (rc == 0) rc = TVMFFIFunctionCall(loader, &arg, 1, &result);
  if (rc == 0 && (result.type_index != kTVMFFIModule)) {
    rc = tffi_raise(TFFI_TYPE_ERROR, "library_bin: %s returned type index %d, expected a Module",
                    name, (int)result.type_index);
  }
  if (rc == 0) {
    *out = result.v_obj;
    result = tffi_any_none();
  }
  tffi_any_release(&result);
  tffi_any_release(&arg);
  if (loader) tffi_decref(loader);
  tffi_free(name);
  return rc;
}

/* Appends without the cycle check: the parser proved the tree acyclic. */
static int tffi_link_imports(const TffiLibraryBin* bin, TVMFFIObject** modules) {
  for (size_t i = 0; i < bin->num_modules; ++i) {
    for (uint64_t j = bin->indptr[i]; j < bin->indptr[i + 1]; ++j) {
      if (tffi_module_import(modules[i], modules[bin->child_indices[j]]) != 0) return -1;
    }
  }
  return 0;
}

static int tffi_build_modules(TffiLibrary* lib, const TffiLibraryBin* bin, TVMFFIObject** modules,
                              void** ctx_slot) {
  for (size_t i = 0; i < bin->num_modules; ++i) {
    const TffiLibraryBinEntry* e = &bin->entries[i];
    if (!e->is_lib) {
      if (tffi_load_from_bytes(e, &modules[i]) != 0) return -1;
      continue;
    }
    modules[i] = tffi_module_new(lib);
    if (modules[i] == NULL) return -1;
    if (ctx_slot) *ctx_slot = modules[i];
  }
  return tffi_link_imports(bin, modules);
}

static int tffi_process_blob(TffiLibrary* lib, const uint8_t* blob, void** ctx_slot,
                             TVMFFIObject** out) {
  size_t extent = tffi_symbol_extent(blob);
  if (extent == 0) {
    return tffi_raise(TFFI_VALUE_ERROR,
                      "library_bin: the size of " TFFI_SYMBOL_LIBRARY_BIN " cannot be determined");
  }
  TffiLibraryBin bin;
  if (tffi_library_bin_parse(blob, extent, &bin) != 0) {
    tffi_library_bin_free(&bin);
    return -1;
  }
  TVMFFIObject** modules = tffi_calloc(bin.num_modules, sizeof *modules);
  int rc = modules ? tffi_build_modules(lib, &bin, modules, ctx_slot)
                   : tffi_raise_oom(bin.num_modules * sizeof *modules);
  if (rc == 0) {
    *out = modules[0];
    modules[0] = NULL;
  }
  /* On failure the context slot must not keep pointing at a freed module. */
  if (rc != 0 && ctx_slot) *ctx_slot = NULL;
  for (size_t i = 0; modules && i < bin.num_modules; ++i) {
    if (modules[i]) tffi_decref(modules[i]);
  }
  tffi_free(modules);
  tffi_library_bin_free(&bin);
  return rc;
}

/* Writes each registered context symbol into the library's variable of
 * that name, before anything in the library can run through the ABI. */
static int tffi_init_context_symbols(TffiLibrary* lib) {
  int rc = 0;
  pthread_mutex_lock(&tffi_context_symbols.lock);
  for (size_t i = 0; rc == 0 && i < tffi_context_symbols.n; ++i) {
    void* slot;
    rc = tffi_library_symbol(lib, tffi_context_symbols.items[i].name, 0, &slot);
    if (rc == 0 && slot) *(void**)slot = tffi_context_symbols.items[i].ptr;
  }
  pthread_mutex_unlock(&tffi_context_symbols.lock);
  return rc;
}

int tffi_library_module_create(TffiLibrary* lib, TVMFFIObject** out) {
  *out = NULL;
  void* blob;
  void* ctx_symbol;
  if (tffi_library_symbol(lib, TFFI_SYMBOL_LIBRARY_BIN, 0, &blob) != 0 ||
      tffi_library_symbol(lib, TFFI_SYMBOL_LIBRARY_CTX, 0, &ctx_symbol) != 0 ||
      tffi_init_context_symbols(lib) != 0) {
    return -1;
  }
  void** ctx_slot = ctx_symbol;
  if (blob != NULL) return tffi_process_blob(lib, blob, ctx_slot, out);
  *out = tffi_module_new(lib);
  if (*out == NULL) return -1;
  if (ctx_slot) *ctx_slot = *out;
  return 0;
}

/* ---- ffi.SystemLib: one module per prefix, kept for the process ---- */

static pthread_mutex_t tffi_system_lock = PTHREAD_MUTEX_INITIALIZER;
static TffiSymbolEntry* tffi_system_modules; /* name = prefix, ptr = module */
static size_t tffi_num_system_modules;

static int tffi_system_lib_create(const char* prefix, size_t len, TVMFFIObject** out) {
  TffiLibrary* lib = tffi_library_system(prefix, len);
  if (lib == NULL) return -1;
  int rc = tffi_library_module_create(lib, out);
  tffi_library_release(lib);
  if (rc != 0) return -1;
  TffiSymbolEntry* more =
      tffi_realloc(tffi_system_modules, (tffi_num_system_modules + 1) * sizeof *more);
  char* key = tffi_strndup(prefix, len);
  if (more) tffi_system_modules = more;
  if (more == NULL || key == NULL) {
    tffi_free(key);
    tffi_decref(*out);
    *out = NULL;
    return tffi_raise_oom(len + sizeof *more);
  }
  tffi_system_modules[tffi_num_system_modules].name = key;
  tffi_system_modules[tffi_num_system_modules++].ptr = *out;
  tffi_incref(*out); /* the table's own reference */
  return 0;
}

int tffi_system_lib_get(const char* prefix, size_t len, TVMFFIObject** out) {
  if (memchr(prefix, '\0', len) != NULL) {
    return tffi_raise(TFFI_VALUE_ERROR, "ffi.SystemLib: argument #0 (prefix) contains a NUL byte");
  }
  int rc = 0;
  *out = NULL;
  pthread_mutex_lock(&tffi_system_lock);
  for (size_t i = 0; i < tffi_num_system_modules && *out == NULL; ++i) {
    const char* key = tffi_system_modules[i].name;
    if (strlen(key) == len && memcmp(key, prefix, len) == 0) *out = tffi_system_modules[i].ptr;
  }
  if (*out) tffi_incref(*out);
  else rc = tffi_system_lib_create(prefix, len, out);
  pthread_mutex_unlock(&tffi_system_lock);
  return rc;
}

int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                  TVMFFIObjectHandle* out) {
  if (out == NULL) return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIEnvModLookupFromImports: out is NULL");
  *out = NULL;
  if (!tffi_is_module(library_ctx)) {
    return tffi_raise(TFFI_TYPE_ERROR,
                      "TVMFFIEnvModLookupFromImports: library_ctx is not a Module object");
  }
  if (func_name == NULL) {
    return tffi_raise(TFFI_VALUE_ERROR, "TVMFFIEnvModLookupFromImports: func_name is NULL");
  }
  TVMFFIObject* fn = NULL;
  int rc = tffi_module_lookup_from_imports(library_ctx, func_name, &fn);
  *out = fn;
  return rc;
}
