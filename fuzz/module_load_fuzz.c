/*
 * Fuzz harness: `__tvm_ffi__library_bin` through the module loader of the
 * implementation under test (ffi.ModuleLoadFromFile), then lookups across
 * the import tree it built.
 *
 * The blob lives where a compiler puts it: the `__tvm_ffi__library_bin`
 * symbol of a real shared library (fuzz/module_load_blob.c: 32 KiB, with
 * that ELF size). The harness keeps that library loaded and, for each
 * input, writes the input's bytes (after the first) into the symbol, zeros
 * after them, then asks the runtime to load the library: the runtime
 * dlopens the same object and reads the blob as it would any library's.
 * The bytes after the symbol are poisoned for ASan, so a read past it is a
 * finding at its first byte.
 * Entries of kinds `test` and `fuzz` are handed to loaders registered here,
 * which answer with a module of conformance/testlibs/libmod_other.so (or,
 * for a payload starting with '!', a RuntimeError).
 *
 * After a load the first input byte picks the lookups: ffi.ModuleGetFunction
 * and ffi.ModuleImplementsFunction of a name in the library, one in an
 * import and one nowhere, with query_imports false and true, and
 * TVMFFIEnvModLookupFromImports with the library context the runtime wrote
 * into the library's `__tvm_ffi__library_ctx` (as library code calls it).
 *
 * FUZZ_AVOID=LIB-021,LIB-024,LIB-028,LIB-029 (a campaign's choice, never
 * the replay's) steps around blobs of crash classes a library under test is
 * known to have, so that a campaign against it finds the next instead of
 * the same ones again: LIB-021, fewer than one module (an indptr of 0 or 1
 * entries); LIB-024, an indptr entry past the child indices; LIB-028 (and
 * LIB-027), a vector count or string length larger than the bytes left;
 * LIB-029, an nbytes past the symbol.
 *
 * Checks: a load returns a Module or -1 with a documented error kind; every
 * lookup returns, with a Function or None (MOD-010), ImplementsFunction
 * agreeing with GetFunction (MOD-012), and a failed LookupFromImports is a
 * RuntimeError (MOD-023); loaders get Bytes; everything made is released
 * (LeakSanitizer). An import tree with a cycle must therefore be refused or
 * searched without recursing for ever.
 */
#include "fuzz/impl_api.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"

static const char* const kLoadKinds[] = {"ValueError", "RuntimeError", "MemoryError",
                                         "TypeError",  "IndexError",   NULL};
static const char* const kLookupKinds[] = {"RuntimeError", NULL};
static const char* const kNames[] = {"ping", "which", "no_such_function"};

/* From the sanitizer's interface, when there is one. */
void __asan_poison_memory_region(void const volatile* addr, size_t size) __attribute__((weak));

static uint8_t* g_blob;   /* the symbol's storage */
static void** g_ctx;      /* the library's __tvm_ffi__library_ctx */
static size_t g_capacity; /* its ELF size */
static size_t g_dirty;    /* bytes written by the last input */
static const char* g_template;
static const char* g_leaf;
static TVMFFIObjectHandle g_load, g_get, g_implements;

static TVMFFIObjectHandle global(const char* name) {
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIObjectHandle fn = NULL;
  if (TVMFFIFunctionGetGlobal(&n, &fn) != 0 || fn == NULL) {
    fprintf(stderr, "fuzz module_load: the runtime has no global function %s\n", name);
    exit(1);
  }
  return fn;
}

static TVMFFIAny str_arg(const char* s) {
  TVMFFIAny v;
  memset(&v, 0, sizeof v);
  v.type_index = kTVMFFIRawStr;
  v.v_c_str = s;
  return v;
}

/* ffi.Module.load_from_bytes.test / .fuzz: a module of the leaf library. */
static int leaf_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  FUZZ_CHECK(n == 1, "a loader was called with %d arguments", (int)n);
  size_t size = 0;
  const char* payload = fuzz_str_of(&args[0], &size);
  FUZZ_CHECK(payload != NULL &&
                 (args[0].type_index == kTVMFFISmallBytes || args[0].type_index == kTVMFFIBytes),
             "a loader got type index %d, not Bytes", args[0].type_index);
  if (size > 0 && payload[0] == '!') {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "fuzz loader: this payload is refused");
    return -1;
  }
  TVMFFIAny path = str_arg(g_leaf);
  return TVMFFIFunctionCall(g_load, &path, 1, result);
}

static void register_loader(const char* kind) {
  char name[64];
  snprintf(name, sizeof name, "ffi.Module.load_from_bytes.%s", kind);
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIObjectHandle fn = NULL;
  FUZZ_CHECK(TVMFFIFunctionCreate(NULL, leaf_loader, NULL, &fn) == 0, "TVMFFIFunctionCreate");
  FUZZ_CHECK(TVMFFIFunctionSetGlobal(&n, fn, 1) == 0, "TVMFFIFunctionSetGlobal(%s)", name);
  TVMFFIObjectDecRef(fn);
}

/* Calls a lookup global: (mod, name, query_imports). */
static int lookup(TVMFFIObjectHandle fn, TVMFFIObjectHandle mod, const char* name, int qi,
                  TVMFFIAny* out) {
  TVMFFIAny args[3];
  memset(args, 0, sizeof args);
  args[0].type_index = kTVMFFIModule;
  args[0].v_obj = mod;
  args[1] = str_arg(name);
  args[2].type_index = kTVMFFIBool;
  args[2].v_int64 = qi;
  memset(out, 0, sizeof *out);
  return TVMFFIFunctionCall(fn, args, 3, out);
}

static void check_lookups(TVMFFIObjectHandle mod, TVMFFIObjectHandle ctx, uint8_t flags) {
  for (int k = 0; k < 3; ++k) {
    if (!(flags & (1 << k))) continue;
    for (int qi = 0; qi < 2; ++qi) {
      TVMFFIAny got, impl;
      int rc = lookup(g_get, mod, kNames[k], qi, &got);
      if (rc != 0) fuzz_expect_raised("ffi.ModuleGetFunction", kLoadKinds);
      FUZZ_CLAUSE("MOD-010",
                  rc == 0 && (got.type_index == kTVMFFINone || got.type_index == kTVMFFIFunction),
                  "ffi.ModuleGetFunction(%s, %d) returned %d with type index %d", kNames[k], qi, rc,
                  got.type_index);
      rc = lookup(g_implements, mod, kNames[k], qi, &impl);
      if (rc != 0) fuzz_expect_raised("ffi.ModuleImplementsFunction", kLoadKinds);
      FUZZ_CLAUSE("MOD-012",
                  rc == 0 && impl.type_index == kTVMFFIBool &&
                      impl.v_int64 == (got.type_index == kTVMFFIFunction),
                  "ffi.ModuleImplementsFunction(%s, %d) disagrees with ffi.ModuleGetFunction",
                  kNames[k], qi);
      fuzz_release(&got);
      fuzz_release(&impl);
    }
  }
  for (int k = 0; k < 3 && ctx != NULL; ++k) {
    if (!(flags & (8 << k))) continue;
    TVMFFIObjectHandle fn = NULL;
    int rc = TVMFFIEnvModLookupFromImports(ctx, kNames[k], &fn);
    if (rc != 0) {
      FUZZ_CHECK(rc == -1, "TVMFFIEnvModLookupFromImports returned %d", rc);
      fuzz_expect_raised("TVMFFIEnvModLookupFromImports", kLookupKinds);
    } else {
      fuzz_expect_nothing_raised("TVMFFIEnvModLookupFromImports");
      FUZZ_CHECK(fn != NULL && TVMFFIObjectGetTypeIndex(fn) == kTVMFFIFunction,
                 "TVMFFIEnvModLookupFromImports(%s) gave no Function", kNames[k]);
      /* The module keeps what it found (MOD-034): not ours to release. */
    }
  }
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  static const char* const needed[] = {"TVMFFIFunctionGetGlobal",
                                       "TVMFFIFunctionSetGlobal",
                                       "TVMFFIFunctionCreate",
                                       "TVMFFIFunctionCall",
                                       "TVMFFIEnvModLookupFromImports",
                                       "TVMFFIErrorMoveFromRaised",
                                       "TVMFFIErrorSetRaisedFromCStr",
                                       "TVMFFIObjectDecRef",
                                       NULL};
  fuzz_impl_init("module_load", needed);
  g_template = strdup(conf_library_path("fuzz/libfuzz_module_load_blob.so"));
  g_leaf = strdup(conf_library_path("conformance/testlibs/libmod_other.so"));
  /* Ours to keep: the runtime's loads of it share this one object. */
  void* lib = dlopen(g_template, RTLD_NOW | RTLD_LOCAL);
  g_blob = lib ? dlsym(lib, "__tvm_ffi__library_bin") : NULL;
  Dl_info info;
  const ElfW(Sym)* sym = NULL;
  if (g_blob == NULL || dladdr1(g_blob, &info, (void**)&sym, RTLD_DL_SYMENT) == 0 || sym == NULL) {
    fprintf(stderr, "fuzz module_load: no sized __tvm_ffi__library_bin in %s: %s\n", g_template,
            dlerror());
    exit(1);
  }
  g_capacity = sym->st_size;
  g_ctx = dlsym(lib, "__tvm_ffi__library_ctx");
  uint8_t* guard = dlsym(lib, "fuzz_blob_guard");
  if (guard == g_blob + g_capacity && __asan_poison_memory_region != NULL) {
    __asan_poison_memory_region(guard, 4096);
  } else {
    fprintf(stderr, "fuzz module_load: reads past the blob are not caught (%s)\n",
            __asan_poison_memory_region ? "no guard right after it" : "no AddressSanitizer");
  }
  g_load = global("ffi.ModuleLoadFromFile");
  g_get = global("ffi.ModuleGetFunction");
  g_implements = global("ffi.ModuleImplementsFunction");
  register_loader("test");
  register_loader("fuzz");
  return 0;
}

/* A little-endian u64 of the blob, 0 past its end. */
static uint64_t blob_u64(const uint8_t* blob, size_t n, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && at + i < n; ++i) v |= (uint64_t)blob[at + i] << (8 * i);
  return v;
}

/* Does a length read at `*at` (a count of `unit`-byte items) overrun the
 * `end` of the blob? Moves *at past the items when it does not. */
static int overruns(const uint8_t* blob, size_t n, size_t* at, size_t end, size_t unit) {
  uint64_t count = blob_u64(blob, n, *at);
  *at += 8;
  if (*at > end || count > (end - *at) / unit) return 1;
  *at += count * unit;
  return 0;
}

/* Walks the blob's lengths, as a loader reads them, to the first that
 * overruns (LIB-027, LIB-028). */
static int has_overrun(const uint8_t* blob, size_t n) {
  size_t end = 8 + blob_u64(blob, n, 0), at = 8;
  uint64_t modules = blob_u64(blob, n, 8);
  if (overruns(blob, n, &at, end, 8) || overruns(blob, n, &at, end, 8)) return 1;
  for (uint64_t i = 0; i + 1 < modules && at < end; ++i) {
    size_t kind_at = at + 8;
    if (overruns(blob, n, &at, end, 1)) return 1;
    int lib = blob_u64(blob, n, kind_at - 8) == 4 && kind_at + 4 <= n &&
              memcmp(blob + kind_at, "_lib", 4) == 0;
    if (!lib && overruns(blob, n, &at, end, 1)) return 1;
  }
  return 0;
}

/* Does an indptr entry point past the child indices (LIB-024)? The symbol
 * is zero past the input, so an indptr may run past the input (not past
 * the symbol) and still be read: its entries there are 0. */
static int indptr_past_children(const uint8_t* blob, size_t n, size_t capacity) {
  uint64_t entries = blob_u64(blob, n, 8);
  if (entries > capacity / 8) return 0; /* an overrun, not this class */
  uint64_t children = blob_u64(blob, n, 16 + entries * 8);
  for (uint64_t i = 0; i < entries; ++i) {
    if (blob_u64(blob, n, 16 + i * 8) > children) return 1;
  }
  return 0;
}

/* FUZZ_AVOID's known crash classes (see the top of this file). */
static int avoided(const uint8_t* blob, size_t n, size_t capacity) {
  const char* list = getenv("FUZZ_AVOID");
  if (list == NULL) return 0;
  if (strstr(list, "LIB-029") && blob_u64(blob, n, 0) > capacity - 8) return 1;
  if (strstr(list, "LIB-021") && blob_u64(blob, n, 8) <= 1) return 1;
  if (strstr(list, "LIB-028") && has_overrun(blob, n)) return 1;
  if (strstr(list, "LIB-024") && indptr_past_children(blob, n, capacity)) return 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t flags = data[0];
  size_t n = size - 1 < g_capacity ? size - 1 : g_capacity;
  if (avoided(data + 1, n, g_capacity)) return 0;
  memcpy(g_blob, data + 1, n);
  if (g_dirty > n) memset(g_blob + n, 0, g_dirty - n);
  g_dirty = n;

  TVMFFIAny path = str_arg(g_template), mod;
  memset(&mod, 0, sizeof mod);
  if (g_ctx) *g_ctx = NULL;
  int rc = TVMFFIFunctionCall(g_load, &path, 1, &mod);
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "ffi.ModuleLoadFromFile returned %d", rc);
    fuzz_expect_raised("ffi.ModuleLoadFromFile", kLoadKinds);
    return 0;
  }
  fuzz_expect_nothing_raised("ffi.ModuleLoadFromFile");
  FUZZ_CHECK(mod.type_index == kTVMFFIModule, "ffi.ModuleLoadFromFile gave type index %d",
             mod.type_index);
  check_lookups(mod.v_obj, g_ctx ? *g_ctx : NULL, flags);
  fuzz_release(&mod);
  return 0;
}
