#include "library_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "any.h"
#include "error.h"
#include "function.h"
#include "library_bin.h"
#include "mem.h"
#include "module.h"
#include "names.h"
#include "object.h"
#include "registry.h"
#include "string.h"
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

/* Calls ffi.Module.load_from_bytes.<kind>(payload) and checks it gave a
 * module. *out is a new reference. */
static int tffi_load_from_bytes(const TffiLibraryBinEntry* e, TVMFFIObject** out) {
  char buf[96];
  char* name =
      tffi_prefixed_in(buf, sizeof buf, "ffi.Module.load_from_bytes.", e->kind, e->kind_size);
  if (name == NULL) return -1;
  TVMFFIObject* loader = NULL;
  int rc = tffi_global_get(name, strlen(name), &loader);
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
  tffi_prefixed_done(name, buf);
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
