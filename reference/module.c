/* The module object: a library, its imports and the lookup cache behind
 * TVMFFIEnvModLookupFromImports. */
#include "module.h"

#include <tvm/ffi/extra/c_env_api.h>

#include <pthread.h>
#include <string.h>

#include "any.h"
#include "arg.h"
#include "tffi_error.h"
#include "function.h"
#include "mem.h"
#include "names.h"
#include "object.h"
#include "registry.h"
#include "tffi_string.h"
#include "vec.h"

typedef struct {
  char* name;
  TVMFFIObject* fn; /* one reference */
} TffiCacheEntry;

/* Pointers to modules, each holding one reference unless said otherwise. */
typedef struct {
  TVMFFIObject** items;
  size_t n, cap;
} TffiModules;

struct TffiModule {
  TVMFFIObject header;
  TffiLibrary* lib;
  pthread_mutex_t lock; /* guards imports and cache */
  TffiModules imports;
  struct {
    TffiCacheEntry* items;
    size_t n, cap;
  } cache;
};

/* A function taken from a module: the symbol and a reference to the module
 * (which holds the library), so the code outlives the module handle. */
typedef struct {
  TVMFFISafeCallType symbol;
  TVMFFIObject* module;
} TffiBoundSymbol;

int tffi_is_module(const TVMFFIObject* obj) {
  return obj != NULL && obj->type_index == kTVMFFIModule;
}

static void tffi_module_delete(void* self, int flags) {
  TffiModule* m = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (size_t i = 0; i < m->imports.n; ++i) tffi_decref(m->imports.items[i]);
    tffi_free(m->imports.items);
    for (size_t i = 0; i < m->cache.n; ++i) {
      tffi_free(m->cache.items[i].name);
      tffi_decref(m->cache.items[i].fn);
    }
    tffi_free(m->cache.items);
    pthread_mutex_destroy(&m->lock);
    /* Last: functions of the imports above may live in this library. */
    tffi_library_release(m->lib);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(m);
}

TVMFFIObject* tffi_module_new(TffiLibrary* lib) {
  TffiModule* m = tffi_object_alloc(sizeof(TffiModule), kTVMFFIModule, tffi_module_delete);
  if (m == NULL) return NULL;
  pthread_mutex_init(&m->lock, NULL);
  tffi_library_retain(lib);
  m->lib = lib;
  return &m->header;
}

int tffi_module_symbol(TVMFFIObject* mod, const char* name, void** out) {
  return tffi_library_symbol(((TffiModule*)mod)->lib, name, 0, out);
}

static int tffi_bound_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  TffiBoundSymbol* b = self;
  /* Exported functions have no closure: they get a NULL handle. */
  return b->symbol(NULL, args, num_args, result);
}

static void tffi_bound_delete(void* self) {
  TffiBoundSymbol* b = self;
  tffi_decref(b->module);
  tffi_free(b);
}

int tffi_module_get_own_function(TVMFFIObject* mod, const char* name, size_t len,
                                 TVMFFIObject** out) {
  *out = NULL;
  /* A NUL inside the name would silently cut the symbol name short. */
  if (memchr(name, '\0', len) != NULL) return 0;
  char* cname = tffi_prefixed("", name, len);
  if (cname == NULL) return -1;
  void* addr;
  int rc = tffi_library_symbol(((TffiModule*)mod)->lib, cname, 1, &addr);
  tffi_free(cname);
  if (rc != 0) return -1;
  if (addr == NULL || !tffi_library_is_code(addr)) return 0;
  TffiBoundSymbol* b = tffi_malloc(sizeof *b);
  if (b == NULL) return tffi_raise_oom(sizeof *b);
  b->symbol = (TVMFFISafeCallType)addr;
  b->module = mod;
  tffi_incref(mod);
  *out = tffi_function_new(b, tffi_bound_call, tffi_bound_delete);
  if (*out == NULL) {
    tffi_bound_delete(b);
    return -1;
  }
  return 0;
}

/* A snapshot of the imports with references, so that searching them runs
 * unlocked (an import's getter may call back into modules). */
static int tffi_module_snapshot(TffiModule* m, TffiModules* out) {
  *out = (TffiModules){0};
  pthread_mutex_lock(&m->lock);
  int rc = TFFI_VEC_RESERVE(out, m->imports.n);
  for (size_t i = 0; rc == 0 && i < m->imports.n; ++i) {
    out->items[out->n++] = m->imports.items[i];
    tffi_incref(m->imports.items[i]);
  }
  size_t want = m->imports.n;
  pthread_mutex_unlock(&m->lock);
  return rc == 0 ? 0 : tffi_raise_oom(want * sizeof(TVMFFIObject*));
}

static void tffi_modules_free(TffiModules* mods) {
  for (size_t i = 0; i < mods->n; ++i) tffi_decref(mods->items[i]);
  tffi_free(mods->items);
  *mods = (TffiModules){0};
}

int tffi_module_get_function(TVMFFIObject* mod, const char* name, size_t len, int query_imports,
                             TVMFFIObject** out) {
  if (tffi_module_get_own_function(mod, name, len, out) != 0) return -1;
  if (*out != NULL || !query_imports) return 0;
  TffiModules imports;
  if (tffi_module_snapshot((TffiModule*)mod, &imports) != 0) return -1;
  int rc = 0;
  for (size_t i = 0; i < imports.n && rc == 0 && *out == NULL; ++i) {
    rc = tffi_module_get_function(imports.items[i], name, len, 1, out);
  }
  tffi_modules_free(&imports);
  return rc;
}

/* Calls a metadata or doc getter: no arguments, a string result. */
static int tffi_call_getter(void* addr, const char* symbol, TVMFFIAny* out) {
  TVMFFIAny result = tffi_any_none();
  if (((TVMFFISafeCallType)addr)(NULL, NULL, 0, &result) != 0) return -1;
  size_t size;
  if (tffi_any_str_data(&result, &size) == NULL || result.type_index == kTVMFFIRawStr ||
      result.type_index == kTVMFFIBytes || result.type_index == kTVMFFISmallBytes ||
      result.type_index == kTVMFFIByteArrayPtr) {
    int32_t got = result.type_index;
    tffi_any_release(&result);
    return tffi_raise(TFFI_TYPE_ERROR, "%s returned type index %d, expected a str", symbol,
                      (int)got);
  }
  *out = result;
  return 0;
}

static int tffi_module_own_info(TVMFFIObject* mod, const char* prefix, const char* name, size_t len,
                                TVMFFIAny* out) {
  if (memchr(name, '\0', len) != NULL) return 0;
  char* symbol = tffi_prefixed(prefix, name, len);
  if (symbol == NULL) return -1;
  void* addr;
  int rc = tffi_module_symbol(mod, symbol, &addr);
  if (rc == 0 && addr != NULL && tffi_library_is_code(addr))
    rc = tffi_call_getter(addr, symbol, out);
  tffi_free(symbol);
  return rc;
}

int tffi_module_get_info(TVMFFIObject* mod, const char* prefix, const char* name, size_t len,
                         int query_imports, TVMFFIAny* out) {
  *out = tffi_any_none();
  if (tffi_module_own_info(mod, prefix, name, len, out) != 0) return -1;
  if (out->type_index != kTVMFFINone || !query_imports) return 0;
  TffiModules imports;
  if (tffi_module_snapshot((TffiModule*)mod, &imports) != 0) return -1;
  int rc = 0;
  for (size_t i = 0; i < imports.n && rc == 0 && out->type_index == kTVMFFINone; ++i) {
    rc = tffi_module_get_info(imports.items[i], prefix, name, len, 1, out);
  }
  tffi_modules_free(&imports);
  return rc;
}

/* Appends m to `set` unless present: 1 if added, 0 if present, -1 when out
 * of memory. Linear: import graphs are small. */
static int tffi_modules_add(TffiModules* set, TVMFFIObject* m) {
  for (size_t i = 0; i < set->n; ++i)
    if (set->items[i] == m) return 0;
  return TFFI_VEC_PUSH(set, m) == 0 ? 1 : -1;
}

/* Sets *found when `target` is `from` or reachable from it through imports.
 * Module locks are taken one at a time (snapshots), never nested. `seen`
 * keeps a DAG of shared imports from being walked once per path. */
static int tffi_reaches(TVMFFIObject* from, TVMFFIObject* target, int* found) {
  /* A module that imports nothing (every module a library_bin entry makes,
   * when it is linked) reaches only itself: no walk, no allocation. */
  TffiModule* leaf = (TffiModule*)from;
  pthread_mutex_lock(&leaf->lock);
  size_t direct = leaf->imports.n;
  pthread_mutex_unlock(&leaf->lock);
  if (from == target || direct == 0) {
    *found = from == target;
    return 0;
  }
  TffiModules seen = {0};  /* borrowed: each is also on the stack or done */
  TffiModules stack = {0}; /* holds a reference to each entry */
  int rc = 0;
  *found = 0;
  if (tffi_modules_add(&seen, from) < 0 || tffi_modules_add(&stack, from) < 0)
    rc = tffi_raise_oom(64);
  else
    tffi_incref(from);
  while (stack.n > 0) {
    TVMFFIObject* m = stack.items[--stack.n];
    if (m == target) *found = 1;
    TffiModules imports = {0};
    if (!*found && rc == 0 && tffi_module_snapshot((TffiModule*)m, &imports) != 0) rc = -1;
    for (size_t i = 0; rc == 0 && i < imports.n; ++i) {
      int added = tffi_modules_add(&seen, imports.items[i]);
      if (added == 1) added = tffi_modules_add(&stack, imports.items[i]);
      if (added < 0)
        rc = tffi_raise_oom(seen.cap * sizeof(void*));
      else if (added == 1)
        tffi_incref(imports.items[i]);
    }
    tffi_modules_free(&imports);
    tffi_decref(m);
  }
  tffi_free(seen.items);
  tffi_free(stack.items);
  return rc;
}

int tffi_module_import_list(TVMFFIObject* mod, TVMFFIObject* const* pool, const uint64_t* index,
                            size_t n) {
  /* Every check before the appends, with no module lock held: the appends
   * add edges out of mod only, so none of them can make a later child reach
   * mod. The children before a refused one are still imported. */
  int cycle = 0, rc = 0;
  size_t ok = 0;
  for (; ok < n && !cycle && rc == 0; ++ok) rc = tffi_reaches(pool[index[ok]], mod, &cycle);
  if (cycle || rc != 0) --ok;
  TffiModule* m = (TffiModule*)mod;
  size_t pushed = 0;
  pthread_mutex_lock(&m->lock);
  /* Room for all of them at once (one allocation, not one per doubling); if
   * that fails, the appends below take what they can one at a time. */
  (void)TFFI_VEC_RESERVE(&m->imports, m->imports.n + ok);
  for (; pushed < ok && TFFI_VEC_PUSH(&m->imports, pool[index[pushed]]) == 0; ++pushed)
    tffi_incref(pool[index[pushed]]);
  size_t count = m->imports.n;
  pthread_mutex_unlock(&m->lock);
  if (pushed < ok) return tffi_raise_oom((count + 1) * sizeof(TVMFFIObject*));
  if (rc != 0) return -1;
  if (cycle)
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "ffi.ModuleImportModule: importing the module "
                      "would create a cyclic dependency");
  return 0;
}

int tffi_module_import(TVMFFIObject* mod, TVMFFIObject* child) {
  static const uint64_t first = 0;
  return tffi_module_import_list(mod, &child, &first, 1);
}

void tffi_module_clear_imports(TVMFFIObject* mod) {
  TffiModule* m = (TffiModule*)mod;
  pthread_mutex_lock(&m->lock);
  TffiModules old = m->imports;
  m->imports = (TffiModules){0};
  pthread_mutex_unlock(&m->lock);
  tffi_modules_free(&old);
}

static TVMFFIObject* tffi_cache_find(TffiModule* m, const char* name) {
  for (size_t i = 0; i < m->cache.n; ++i) {
    if (strcmp(m->cache.items[i].name, name) == 0) return m->cache.items[i].fn;
  }
  return NULL;
}

/* Stores fn (consuming the reference) unless another thread got there
 * first; returns the cached function either way. Lock held. */
static TVMFFIObject* tffi_cache_put(TffiModule* m, const char* name, TVMFFIObject* fn) {
  TVMFFIObject* have = tffi_cache_find(m, name);
  if (have != NULL) {
    tffi_decref(fn);
    return have;
  }
  TffiCacheEntry entry = {tffi_strdup(name), fn};
  if (entry.name == NULL || TFFI_VEC_PUSH(&m->cache, entry) != 0) {
    tffi_free(entry.name);
    tffi_decref(fn);
    return NULL;
  }
  return fn;
}

int tffi_module_lookup_from_imports(TVMFFIObject* mod, const char* name, TVMFFIObject** out) {
  TffiModule* m = (TffiModule*)mod;
  pthread_mutex_lock(&m->lock);
  *out = tffi_cache_find(m, name);
  pthread_mutex_unlock(&m->lock);
  if (*out) return 0;
  size_t len = strlen(name);
  TffiModules imports;
  if (tffi_module_snapshot(m, &imports) != 0) return -1;
  TVMFFIObject* fn = NULL;
  int rc = 0;
  for (size_t i = 0; i < imports.n && rc == 0 && fn == NULL; ++i) {
    rc = tffi_module_get_function(imports.items[i], name, len, 1, &fn);
  }
  tffi_modules_free(&imports);
  if (rc == 0 && fn == NULL) rc = tffi_global_get(name, len, &fn);
  if (rc != 0) return -1;
  if (fn == NULL) {
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "TVMFFIEnvModLookupFromImports: cannot find function %s in the imported "
                      "modules or global registry",
                      name);
  }
  pthread_mutex_lock(&m->lock);
  *out = tffi_cache_put(m, name, fn);
  pthread_mutex_unlock(&m->lock);
  return *out ? 0 : tffi_raise_oom(strlen(name) + sizeof(TffiCacheEntry));
}

int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                  TVMFFIObjectHandle* out) {
  static const char api[] = "TVMFFIEnvModLookupFromImports";
  if (out == NULL) return tffi_arg_null(api, "out");
  *out = NULL;
  if (!tffi_is_module(library_ctx))
    return tffi_arg_error(TFFI_TYPE_ERROR, api, "library_ctx", "is not a Module object");
  if (func_name == NULL) return tffi_arg_null(api, "func_name");
  TVMFFIObject* fn = NULL;
  int rc = tffi_module_lookup_from_imports(library_ctx, func_name, &fn);
  *out = fn;
  return rc;
}
