#include "library_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "any.h"
#include "tffi_error.h"
#include "function.h"
#include "library_bin.h"
#include "mem.h"
#include "module.h"
#include "names.h"
#include "object.h"
#include "registry.h"
#include "tffi_string.h"
#include "symbol_table.h"

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

/* The loader of the kind last seen in one load. A library_bin holds runs
 * of one kind, and looking the loader up for each entry cost as much as the
 * rest of the entry's work. It is looked up again when the kind changes or
 * when a global function was registered since (a loader may register
 * loaders), so every entry still gets the loader its name has right then. */
typedef struct {
  const char* kind; /* in the blob */
  size_t kind_size;
  uint64_t version;     /* tffi_global_version() before the look-up */
  TVMFFIObject* loader; /* one reference, or NULL */
  char* name;           /* ffi.Module.load_from_bytes.<kind>, in buf or allocated */
  char buf[96];
} TffiLoaderCache;

static void tffi_loader_cache_drop(TffiLoaderCache* c) {
  if (c->loader) tffi_decref(c->loader);
  c->loader = NULL;
  if (c->name) tffi_prefixed_done(c->name, c->buf);
  c->name = NULL;
}

/* Makes c->loader the loader of e's kind; RuntimeError when there is none. */
static int tffi_loader_for(TffiLoaderCache* c, const TffiLibraryBinEntry* e) {
  uint64_t version = tffi_global_version();
  if (c->loader && c->version == version && c->kind_size == e->kind_size &&
      memcmp(c->kind, e->kind, e->kind_size) == 0) {
    return 0;
  }
  tffi_loader_cache_drop(c);
  c->name =
      tffi_prefixed_in(c->buf, sizeof c->buf, "ffi.Module.load_from_bytes.", e->kind, e->kind_size);
  if (c->name == NULL) return -1;
  c->kind = e->kind;
  c->kind_size = e->kind_size;
  c->version = version;
  if (tffi_global_get(c->name, strlen(c->name), &c->loader) != 0) return -1;
  if (c->loader != NULL) return 0;
  return tffi_raise(TFFI_RUNTIME_ERROR,
                    "library_bin: module kind '%.*s' has no loader: %s is not registered",
                    (int)(e->kind_size < 256 ? e->kind_size : 256), e->kind, c->name);
}

/* Calls ffi.Module.load_from_bytes.<kind>(payload) and checks it gave a
 * module. *out is a new reference. */
static int tffi_load_from_bytes(TffiLoaderCache* c, const TffiLibraryBinEntry* e,
                                TVMFFIObject** out) {
  int rc = tffi_loader_for(c, e);
  TVMFFIAny arg = tffi_any_none(), result = tffi_any_none();
  if (rc == 0) {
    rc = tffi_any_from_bytes(kTVMFFIBytes, (const char*)e->payload, e->payload_size, &arg);
  }
  if (rc == 0) rc = TVMFFIFunctionCall(c->loader, &arg, 1, &result);
  if (rc == 0 && (result.type_index != kTVMFFIModule)) {
    rc = tffi_raise(TFFI_TYPE_ERROR, "library_bin: %s returned type index %d, expected a Module",
                    c->name, (int)result.type_index);
  }
  if (rc == 0) {
    *out = result.v_obj;
    result = tffi_any_none();
  }
  tffi_any_release(&result);
  tffi_any_release(&arg);
  return rc;
}

/* Each parent's imports in one step, its child indices read from the blob
 * once (into a buffer on the stack when they are few). The cycle check
 * stays: a loader may give back a module it gave before, so the blob's
 * acyclic tree does not make the module graph acyclic. */
static int tffi_link_imports(const TffiLibraryBinView* bin, TVMFFIObject** modules) {
  uint64_t few[32];
  for (size_t i = 0; i < bin->num_modules; ++i) {
    size_t first = (size_t)tffi_library_bin_indptr(bin, i);
    size_t n = (size_t)tffi_library_bin_indptr(bin, i + 1) - first;
    if (n == 0) continue;
    uint64_t* index = n <= sizeof few / sizeof few[0] ? few : tffi_malloc(n * sizeof *index);
    if (index == NULL) return tffi_raise_oom(n * sizeof *index);
    for (size_t k = 0; k < n; ++k) index[k] = tffi_library_bin_child(bin, first + k);
    int rc = tffi_module_import_list(modules[i], modules, index, n);
    if (index != few) tffi_free(index);
    if (rc != 0) return -1;
  }
  return 0;
}

/* Makes the module of every entry, in entry order, walking the entries of
 * the checked blob once. */
static int tffi_build_modules(TffiLibrary* lib, const TffiLibraryBinView* bin,
                              TVMFFIObject** modules, void** ctx_slot) {
  TffiLoaderCache cache = {0};
  int rc = 0;
  size_t at = bin->entries_at;
  for (size_t i = 0; i < bin->num_modules && rc == 0; ++i) {
    TffiLibraryBinEntry e;
    at = tffi_library_bin_entry(bin, at, &e);
    if (!e.is_lib) {
      rc = tffi_load_from_bytes(&cache, &e, &modules[i]);
      continue;
    }
    modules[i] = tffi_module_new(lib);
    if (modules[i] == NULL)
      rc = -1;
    else if (ctx_slot)
      *ctx_slot = modules[i];
  }
  tffi_loader_cache_drop(&cache);
  return rc == 0 ? tffi_link_imports(bin, modules) : -1;
}

static int tffi_process_blob(TffiLibrary* lib, const uint8_t* blob, void** ctx_slot,
                             TVMFFIObject** out) {
  size_t extent = tffi_symbol_extent(blob);
  if (extent == 0) {
    return tffi_raise(TFFI_VALUE_ERROR,
                      "library_bin: the size of " TFFI_SYMBOL_LIBRARY_BIN " cannot be determined");
  }
  TffiLibraryBinView bin;
  if (tffi_library_bin_check(blob, extent, &bin) != 0) return -1;
  /* The modules made so far, each one reference (on the stack for a few). */
  TVMFFIObject* few[8] = {NULL};
  size_t n = bin.num_modules;
  TVMFFIObject** modules = n <= sizeof few / sizeof few[0] ? few : tffi_calloc(n, sizeof *modules);
  int rc = modules ? tffi_build_modules(lib, &bin, modules, ctx_slot)
                   : tffi_raise_oom(n * sizeof *modules);
  if (rc == 0) {
    *out = modules[0];
    modules[0] = NULL;
  }
  /* On failure the context slot must not keep pointing at a freed module. */
  if (rc != 0 && ctx_slot) *ctx_slot = NULL;
  for (size_t i = 0; modules && i < n; ++i) {
    if (modules[i]) tffi_decref(modules[i]);
  }
  if (modules != few) tffi_free(modules);
  return rc;
}

/* Writes a registered context symbol into the library's variable of that
 * name, before anything in the library can run through the ABI. */
static int tffi_set_context_symbol(const char* name, void* ptr, void* data) {
  void* slot;
  if (tffi_library_symbol(data, name, 0, &slot) != 0) return -1;
  if (slot) *(void**)slot = ptr;
  return 0;
}

int tffi_library_module_create(TffiLibrary* lib, TVMFFIObject** out) {
  *out = NULL;
  void* blob;
  void* ctx_symbol;
  if (tffi_library_symbol(lib, TFFI_SYMBOL_LIBRARY_BIN, 0, &blob) != 0 ||
      tffi_library_symbol(lib, TFFI_SYMBOL_LIBRARY_CTX, 0, &ctx_symbol) != 0 ||
      tffi_context_symbols_each(tffi_set_context_symbol, lib) != 0) {
    return -1;
  }
  void** ctx_slot = ctx_symbol;
  if (blob != NULL) return tffi_process_blob(lib, blob, ctx_slot, out);
  *out = tffi_module_new(lib);
  if (*out == NULL) return -1;
  if (ctx_slot) *ctx_slot = *out;
  return 0;
}
