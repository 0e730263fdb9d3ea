/* The module object: a library, its imports and the lookup cache behind
 * TVMFFIEnvModLookupFromImports. */
#include "module.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "object.h"
#include "string.h"
#include "mem.h"

typedef struct {
  char* name;
  TVMFFIObject* fn; /* one reference */
} TffiCacheEntry;

struct TffiModule {
  TVMFFIObject header;
  TffiLibrary* lib;
  pthread_mutex_t lock; /* guards imports and cache */
  TVMFFIObject** imports;
  size_t num_imports, cap_imports;
  TffiCacheEntry* cache;
  size_t num_cache;
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

static void tffi_module_drop_imports(TffiModule* m) {
  for (size_t i = 0; i < m->num_imports; ++i) tffi_decref(m->imports[i]);
  m->num_imports = 0;
}

static void tffi_module_delete(void* self, int flags) {
  TffiModule* m = self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    tffi_module_drop_imports(m);
    tffi_free(m->imports);
    for (size_t i = 0; i < m->num_cache; ++i) {
      tffi_free(m->cache[i].name);
      tffi_decref(m->cache[i].fn);
    }
    tffi_free(m->cache);
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

/* Code, not data: a `__tvm_ffi_x` that names a variable (the blob, the
 * context pointer, anything else) must not be jumped into. The dynamic
 * symbol entry tells; when the loader cannot say, the symbol is trusted. */
static int tffi_is_code(void* addr) {
  Dl_info info;
  const ElfW(Sym)* sym = NULL;
  if (dladdr1(addr, &info, (void**)&sym, RTLD_DL_SYMENT) == 0 || sym == NULL) return 1;
  if (info.dli_saddr != addr) return 1;
  int type = ELF64_ST_TYPE(sym->st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
}

static int tffi_bound_call(void* self, const TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* result) {
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
  char* cname = tffi_strndup(name, len);
  if (cname == NULL) return tffi_raise_oom(len + 1);
  void* addr;
  int rc = tffi_library_symbol(((TffiModule*)mod)->lib, cname, 1, &addr);
  tffi_free(cname);
  if (rc != 0) return -1;
  if (addr == NULL || !tffi_is_code(addr)) return 0;
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
static int tffi_module_snapshot(TffiModule* m, TVMFFIObject*** items, size_t* n) {
  pthread_mutex_lock(&m->lock);
  *n = m->num_imports;
  *items = tffi_malloc((*n ? *n : 1) * sizeof(TVMFFIObject*));
  if (*items != NULL) {
    for (size_t i = 0; i < *n; ++i) {
      (*items)[i] = m->imports[i];
      tffi_incref(m->imports[i]);
    }
  }
  pthread_mutex_unlock(&m->lock);
  return *items ? 0 : tffi_raise_oom(*n * sizeof(TVMFFIObject*));
}

static void tffi_snapshot_free(TVMFFIObject** items, size_t n) {
  for (size_t i = 0; i < n; ++i) tffi_decref(items[i]);
  tffi_free(items);
}

int tffi_module_get_function(TVMFFIObject* mod, const char* name, size_t len, int query_imports,
                             TVMFFIObject** out) {
  if (tffi_module_get_own_function(mod, name, len, out) != 0) return -1;
  if (*out != NULL || !query_imports) return 0;
  TVMFFIObject** items;
  size_t n;
  if (tffi_module_snapshot((TffiModule*)mod, &items, &n) != 0) return -1;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0 && *out == NULL; ++i) {
    rc = tffi_module_get_function(items[i], name, len, 1, out);
  }
  tffi_snapshot_free(items, n);
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

static int tffi_module_own_info(TVMFFIObject* mod, const char* prefix, const char* name,
                                size_t len, TVMFFIAny* out) {
  if (memchr(name, '\0', len) != NULL) return 0;
  size_t plen = strlen(prefix);
  char* symbol = tffi_malloc(plen + len + 1);
  if (symbol == NULL) return tffi_raise_oom(plen + len + 1);
  memcpy(symbol, prefix, plen);
  memcpy(symbol + plen, name, len);
  symbol[plen + len] = '\0';
  void* addr;
  int rc = tffi_module_symbol(mod, symbol, &addr);
  if (rc == 0 && addr != NULL && tffi_is_code(addr)) rc = tffi_call_getter(addr, symbol, out);
  tffi_free(symbol);
  return rc;
}

int tffi_module_get_info(TVMFFIObject* mod, const char* prefix, const char* name, size_t len,
                         int query_imports, TVMFFIAny* out) {
  *out = tffi_any_none();
  if (tffi_module_own_info(mod, prefix, name, len, out) != 0) return -1;
  if (out->type_index != kTVMFFINone || !query_imports) return 0;
  TVMFFIObject** items;
  size_t n;
  if (tffi_module_snapshot((TffiModule*)mod, &items, &n) != 0) return -1;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0 && out->type_index == kTVMFFINone; ++i) {
    rc = tffi_module_get_info(items[i], prefix, name, len, 1, out);
  }
  tffi_snapshot_free(items, n);
  return rc;
}

/* Pointer set of modules already visited by tffi_reaches (a DAG of shared
 * imports must not be walked once per path). */
typedef struct {
  TVMFFIObject** items;
  size_t n, cap;
} TffiSeen;

/* Returns 1 if added, 0 if already present, -1 on allocation failure. */
static int tffi_seen_add(TffiSeen* s, TVMFFIObject* m) {
  for (size_t i = 0; i < s->n; ++i) {
    if (s->items[i] == m) return 0;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    TVMFFIObject** more = tffi_realloc(s->items, cap * sizeof *more);
    if (more == NULL) return -1;
    s->items = more;
    s->cap = cap;
  }
  s->items[s->n++] = m;
  return 1;
}

/* Sets *found when `target` is `from` or reachable from it through imports.
 * Module locks are taken one at a time (snapshots), never nested. */
static int tffi_reaches(TVMFFIObject* from, TVMFFIObject* target, int* found) {
  TffiSeen seen = {0};
  TffiSeen stack = {0}; /* holds a reference to each entry */
  int rc = 0;
  *found = 0;
  if (tffi_seen_add(&seen, from) < 0 || tffi_seen_add(&stack, from) < 0) rc = tffi_raise_oom(64);
  else tffi_incref(from);
  while (stack.n > 0) {
    TVMFFIObject* m = stack.items[--stack.n];
    if (m == target) *found = 1;
    TVMFFIObject** items = NULL;
    size_t n = 0;
    if (!*found && rc == 0 && tffi_module_snapshot((TffiModule*)m, &items, &n) != 0) rc = -1;
    for (size_t i = 0; rc == 0 && i < n; ++i) {
      int added = tffi_seen_add(&seen, items[i]);
      if (added == 1) added = tffi_seen_add(&stack, items[i]);
      if (added < 0) rc = tffi_raise_oom(seen.cap * sizeof(void*));
      else if (added == 1) tffi_incref(items[i]);
    }
    if (items) tffi_snapshot_free(items, n);
    tffi_decref(m);
  }
  tffi_free(seen.items);
  tffi_free(stack.items);
  return rc;
}

int tffi_module_import(TVMFFIObject* mod, TVMFFIObject* child) {
  int cycle;
  if (tffi_reaches(child, mod, &cycle) != 0) return -1;
  if (cycle) return tffi_raise(TFFI_RUNTIME_ERROR, "ffi.ModuleImportModule: importing the module "
                                                   "would create a cyclic dependency");
  TffiModule* m = (TffiModule*)mod;
  int rc = 0;
  pthread_mutex_lock(&m->lock);
  if (m->num_imports == m->cap_imports) {
    size_t cap = m->cap_imports ? m->cap_imports * 2 : 4;
    TVMFFIObject** more = tffi_realloc(m->imports, cap * sizeof *more);
    if (more == NULL) rc = tffi_raise_oom(cap * sizeof *more);
    else m->imports = more, m->cap_imports = cap;
  }
  if (rc == 0) {
    tffi_incref(child);
    m->imports[m->num_imports++] = child;
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

void tffi_module_clear_imports(TVMFFIObject* mod) {
  TffiModule* m = (TffiModule*)mod;
  pthread_mutex_lock(&m->lock);
  TVMFFIObject** old = m->imports;
  size_t n = m->num_imports;
  m->imports = NULL;
  m->num_imports = m->cap_imports = 0;
  pthread_mutex_unlock(&m->lock);
  for (size_t i = 0; i < n; ++i) tffi_decref(old[i]);
  tffi_free(old);
}

static TVMFFIObject* tffi_cache_find(TffiModule* m, const char* name) {
  for (size_t i = 0; i < m->num_cache; ++i) {
    if (strcmp(m->cache[i].name, name) == 0) return m->cache[i].fn;
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
  TffiCacheEntry* more = tffi_realloc(m->cache, (m->num_cache + 1) * sizeof *more);
  char* copy = tffi_strdup(name);
  if (more == NULL || copy == NULL) {
    if (more) m->cache = more;
    tffi_free(copy);
    tffi_decref(fn);
    return NULL;
  }
  m->cache = more;
  m->cache[m->num_cache].name = copy;
  m->cache[m->num_cache].fn = fn;
  ++m->num_cache;
  return fn;
}

int tffi_module_lookup_from_imports(TVMFFIObject* mod, const char* name, TVMFFIObject** out) {
  TffiModule* m = (TffiModule*)mod;
  pthread_mutex_lock(&m->lock);
  *out = tffi_cache_find(m, name);
  pthread_mutex_unlock(&m->lock);
  if (*out) return 0;
  size_t len = strlen(name);
  TVMFFIObject** items;
  size_t n;
  if (tffi_module_snapshot(m, &items, &n) != 0) return -1;
  TVMFFIObject* fn = NULL;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0 && fn == NULL; ++i) {
    rc = tffi_module_get_function(items[i], name, len, 1, &fn);
  }
  tffi_snapshot_free(items, n);
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
