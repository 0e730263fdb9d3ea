/* Clauses of spec/modules.md and spec/library_bin.md at the edges of
 * loading: every allocation of a load failing in turn, context symbols of
 * system libraries, which formats count as shared libraries, and the parts
 * a refusal's message must carry. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>

#include "alloc_fail.h"
#include "module_support.h"

/* A nonzero step returned -1 and raised a MemoryError (or, where `path` is
 * given, the RuntimeError of a dynamic loader that ran out itself, naming
 * the path). */
static void expect_oom_refusal(const ConfAllocWalk* w, const char* what, int rc,
                               const char* path) {
  cr_assert_eq(rc, -1, "%s, allocation %ld failed: returned %d, not -1", what, w->n, rc);
  ConfError err = conf_take_error();
  int loader = path && strcmp(err.kind, "RuntimeError") == 0 &&
               strstr(err.message, path) != NULL;
  cr_assert(strcmp(err.kind, "MemoryError") == 0 || loader,
            "%s, allocation %ld failed: raised %s: %s", what, w->n,
            err.kind[0] ? err.kind : "nothing", err.message);
}

static int armed_call(ConfAllocWalk* w, TVMFFIObjectHandle fn, TVMFFIAny* args, int32_t n,
                      TVMFFIAny* result) {
  *result = mod_none();
  conf_alloc_arm(w);
  int rc = conf_api.TVMFFIFunctionCall(fn, args, n, result);
  conf_alloc_disarm(w);
  return rc;
}

/* After a step that returned 0: nothing raised, and a module with `name`. */
static void expect_module_with(const ConfAllocWalk* w, const char* what, TVMFFIAny* r,
                               const char* name) {
  ConfError err = conf_take_error();
  cr_expect_eq(err.kind[0], '\0', "%s, allocation %ld failed: 0 with %s raised: %s", what,
               w->n, err.kind, err.message);
  int32_t got = r->type_index;
  int found = -1;
  if (got == kTVMFFIModule && r->v_obj != NULL) found = mod_implements(r->v_obj, name, 0);
  mod_release(r);
  cr_assert_eq(got, kTVMFFIModule, "%s, allocation %ld failed: 0 with type index %d", what, w->n,
               got);
  cr_assert_eq(found, 1, "%s, allocation %ld failed: the module lacks %s", what, w->n, name);
}

/* MOD-111: ffi.ModuleLoadFromFile and ffi.Module.load_from_file.so of a
 * shared library, with any allocation failing, return the library module or
 * -1 with MemoryError (or the dynamic loader's RuntimeError naming the
 * path), and load it afterwards. The library stays loaded by a first module
 * throughout, so each step opens a library already mapped. */
TEST(module_edge, MOD_111_load_out_of_memory) {
  const char* path = mod_lib_path("libmod_basic.so");
  TVMFFIObjectHandle keep = mod_load("libmod_basic.so");
  const char* globals[2] = {"ffi.ModuleLoadFromFile", "ffi.Module.load_from_file.so"};
  long points = 0;
  for (int g = 0; g < 2; ++g) {
    TVMFFIObjectHandle fn = mod_global(globals[g]);
    TVMFFIAny args[2] = {mod_str(path), mod_str("so")}, r;
    for (int sticky = 0; sticky < 2; ++sticky) {
      ConfAllocWalk w = conf_alloc_walk(sticky);
      while (conf_alloc_next(&w)) {
        int rc = armed_call(&w, fn, args, g + 1, &r);
        if (rc != 0) {
          expect_oom_refusal(&w, globals[g], rc, path);
          continue;
        }
        expect_module_with(&w, globals[g], &r, "add_one");
      }
      points += w.points;
    }
    cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, g + 1, &r), 0, "%s fails after the walk",
                 globals[g]);
    mod_release(&r);
    API(TVMFFIObjectDecRef)(fn);
  }
  API(TVMFFIObjectDecRef)(keep);
  /* No failed step kept the library open. */
  cr_expect(!mod_is_loaded(path), "libmod_basic.so is still loaded with every module released");
  conf_alloc_done(points, "ffi.ModuleLoadFromFile");
}

static int sys_answer(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 112;
  return 0;
}

/* The variable a system library exposes as its context symbol, and what
 * the host registered for it. */
static void* mod112_slot;
static int mod112_marker;

static void register_prefix_112(const char* prefix) {
  char symbol[128];
  snprintf(symbol, sizeof symbol, "%sconf112_slot", prefix);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, &mod112_slot), 0);
  snprintf(symbol, sizeof symbol, "__tvm_ffi_%sconf112_f", prefix);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, (void*)sys_answer), 0);
}

/* MOD-112: a context symbol reaches a system library too, and running out
 * of memory never skips it: ffi.SystemLib of a new prefix returns a module
 * whose `<prefix>conf112_slot` holds the registered pointer, with nothing
 * raised, or -1 with MemoryError. */
TEST(module_edge, MOD_112_system_lib_context_symbol) {
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf112_slot", &mod112_marker), 0);
  TVMFFIObjectHandle fn = mod_global("ffi.SystemLib");
  register_prefix_112("conf112_plain_");
  TVMFFIAny a = mod_str("conf112_plain_"), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &a, 1, &r));
  mod_release(&r);
  cr_assert_eq(mod112_slot, &mod112_marker, "the system library's context symbol holds %p",
               mod112_slot);
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      char prefix[64], f[96];
      snprintf(prefix, sizeof prefix, "conf112_%d_%ld_", sticky, w.n);
      snprintf(f, sizeof f, "%sconf112_f", prefix);
      register_prefix_112(prefix);
      mod112_slot = NULL;
      a = mod_str(prefix);
      int rc = armed_call(&w, fn, &a, 1, &r);
      if (rc != 0) {
        expect_oom_refusal(&w, "ffi.SystemLib", rc, NULL);
        continue;
      }
      cr_assert_eq(mod112_slot, &mod112_marker,
                   "allocation %ld failed: a module, but its context symbol holds %p", w.n,
                   mod112_slot);
      expect_module_with(&w, "ffi.SystemLib", &r, f);
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  conf_alloc_done(points, "ffi.SystemLib");
}

/* A loader that refuses, saying which format it was called with. */
static int refusing_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)result;
  char msg[128], format[64] = "(not a str)";
  if (n == 2) {
    TVMFFIAny copy = args[1];
    if (copy.type_index == kTVMFFIRawStr) snprintf(format, sizeof format, "%s", copy.v_c_str);
    else if (copy.type_index >= kTVMFFIStaticObjectBegin) API(TVMFFIObjectIncRef)(copy.v_obj);
    if (copy.type_index != kTVMFFIRawStr) mod_take_str(&copy, format, sizeof format);
  }
  snprintf(msg, sizeof msg, "conf113 loader called with %d arguments, format %s", (int)n, format);
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", msg);
  return -1;
}

/* MOD-113: only dll, dylib and dso themselves are taken for so: a format
 * as long as one of them, a part of one, or one that extends one goes to
 * its own loader. */
TEST(module_edge, MOD_113_only_exact_aliases_fold) {
  static const char* const formats[] = {"abc", "dylix", "dsx", "d", "dl", "dyl", "dlls", "dsoo"};
  TVMFFIObjectHandle loader = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, refusing_loader, NULL, &loader), 0);
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; ++i) {
    char name[96], path[96];
    snprintf(name, sizeof name, "ffi.Module.load_from_file.%s", formats[i]);
    TVMFFIByteArray n = {name, strlen(name)};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, loader, 1), 0);
    snprintf(path, sizeof path, "/no/such/dir/lib.%s", formats[i]);
    TVMFFIObjectHandle mod = NULL;
    cr_expect_eq(mod_load_path(path, &mod), -1, "%s loaded", path);
    ConfError err = conf_take_error();
    cr_expect_str_eq(err.kind, "ValueError", "%s: %s: %s", path, err.kind, err.message);
    /* Not cut at "format": the refusal text after it is exact. */
    char want[64];
    snprintf(want, sizeof want, "format %s", formats[i]);
    const char* at = strstr(err.message, want);
    cr_expect(at != NULL && at[strlen(want)] == '\0',
              "%s did not reach ffi.Module.load_from_file.%s with format %s: %s", path,
              formats[i], formats[i], err.message);
  }
  API(TVMFFIObjectDecRef)(loader);
}

static int count_in(const char* text, const char* part) {
  int n = 0;
  for (const char* at = strstr(text, part); at; at = strstr(at + 1, part)) ++n;
  return n;
}

static void put_u64(unsigned char** at, uint64_t v) {
  for (int i = 0; i < 8; ++i) *(*at)++ = (unsigned char)(v >> (8 * i));
}

/* A one-module blob at `blob`: the root of kind kind[0..len) (no loader),
 * a 1-byte payload. */
static void make_kind_blob(unsigned char* blob, const char* kind, size_t len) {
  unsigned char* at = blob;
  put_u64(&at, 8 + 16 + 8 + 8 + len + 8 + 1); /* nbytes */
  put_u64(&at, 2);                         /* indptr [0, 0]: one module */
  put_u64(&at, 0);
  put_u64(&at, 0);
  put_u64(&at, 0); /* child_indices: none */
  put_u64(&at, len);
  memcpy(at, kind, len);
  at += len;
  put_u64(&at, 1); /* payload: one byte */
  *at = 'p';
}

static __attribute__((aligned(8))) unsigned char long_kind_blob[1024];

/* Makes kind[0..len) the tag followed by 'k's (NUL after), packs a blob of
 * one module of that kind into long_kind_blob and registers it as the
 * system-library symbol `symbol` (a literal: the registry may keep it). */
static void register_long_kind(char* kind, size_t len, const char* tag, const char* symbol) {
  memset(kind, 'k', len);
  memcpy(kind, tag, strlen(tag));
  kind[len] = '\0';
  make_kind_blob(long_kind_blob, kind, len);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, long_kind_blob), 0);
}

/* LIB-086: a kind without a loader is named on its own as well as inside
 * the loader's name ffi.Module.load_from_bytes.<kind> (LIB-006), a long
 * kind (300 bytes) too. */
TEST(module_edge, LIB_086_missing_loader_names_kind) {
  TVMFFIObjectHandle mod;
  cr_assert_eq(mod_load_path(mod_lib_path("libmod_packed_nokind.so"), &mod), -1);
  ConfError err = conf_take_error();
  cr_expect(strstr(err.message, "ffi.Module.load_from_bytes.no_such_kind") != NULL,
            "message: %s", err.message);
  cr_expect_geq(count_in(err.message, "no_such_kind"), 2,
                "the kind is not named apart from the loader's name: %s", err.message);
  char kind[301];
  register_long_kind(kind, 300, "conf086", "conf086___tvm_ffi__library_bin");
  TVMFFIAny a = mod_str("conf086_"), r;
  cr_assert_eq(mod_call("ffi.SystemLib", &a, 1, &r), -1, "a kind without loader was loaded");
  kind[200] = '\0'; /* its first 200 bytes, twice at least */
  ConfError refusal = conf_take_error();
  cr_expect_geq(count_in(refusal.message, kind), 2,
                "the 300-byte kind is not named apart from the loader's name: %.600s",
                refusal.message);
}

/* `word` in `text` with no letter, digit, '_' or '.' right before or after
 * it: "mod" is not found inside "ffi.Module" or "module". */
static int has_word(const char* text, const char* word) {
  size_t n = strlen(word);
  for (const char* at = strstr(text, word); at; at = strstr(at + 1, word)) {
    char before = at == text ? ' ' : at[-1], after = at[n];
    int inner = 0;
    for (const char* c = (const char[]){before, after, 0}; *c; ++c)
      inner |= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
               (*c >= '0' && *c <= '9') || *c == '_' || *c == '.';
    if (!inner) return 1;
  }
  return 0;
}

/* Calls `fn` with `args` and expects a refusal of kind `kind` whose message
 * names fn, position #pos and the parameter `param`; returns the refusal. */
static ConfError expect_names_param(const char* fn, TVMFFIAny* args, int32_t n, int pos,
                               const char* param, const char* kind) {
  TVMFFIAny r;
  cr_expect_eq(mod_call(fn, args, n, &r), -1, "%s accepted a bad argument #%d", fn, pos);
  mod_release(&r);
  char where[8];
  snprintf(where, sizeof where, "#%d", pos);
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, kind, "%s #%d: %s: %s", fn, pos, err.kind, err.message);
  cr_expect(strstr(err.message, fn) != NULL && strstr(err.message, where) != NULL,
            "%s: the message does not name the function and %s: %s", fn, where,
            err.message);
  cr_expect(has_word(err.message, param), "%s: the message does not name %s (%s): %s", fn,
            where, param, err.message);
  return err;
}

/* MOD-114: a refused argument of an ffi.Module* global is named by its
 * parameter as well as its position. */
TEST(module_edge, MOD_114_refusals_name_the_parameter) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  const char* lookups[] = {"ffi.ModuleGetFunction", "ffi.ModuleImplementsFunction",
                           "ffi.ModuleGetFunctionMetadata", "ffi.ModuleGetFunctionDoc"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny a[3] = {mod_int(1), mod_str("add_one"), mod_bool(1)};
    expect_names_param(lookups[i], a, 3, 0, "mod", "TypeError");
    a[0] = mod_obj(mod);
    a[1] = mod_int(2);
    expect_names_param(lookups[i], a, 3, 1, "name", "TypeError");
    a[1] = mod_str("add_one");
    a[2] = mod_str("yes");
    expect_names_param(lookups[i], a, 3, 2, "query_imports", "TypeError");
  }
  TVMFFIAny a[3] = {mod_obj(mod), mod_int(1), mod_str("so")};
  expect_names_param("ffi.ModuleInspectSource", a, 2, 1, "format", "TypeError");
  expect_names_param("ffi.ModuleWriteToFile", a, 3, 1, "file_name", "TypeError");
  a[1] = mod_str("/tmp/conf_mod114_never_written.so");
  a[2] = mod_int(1);
  expect_names_param("ffi.ModuleWriteToFile", a, 3, 2, "format", "TypeError");
  a[1] = mod_int(1);
  expect_names_param("ffi.ModuleImportModule", a, 2, 1, "other", "TypeError");
  TVMFFIAny one[2] = {mod_int(1), mod_obj(mod)};
  expect_names_param("ffi.ModuleImportModule", one, 2, 0, "mod", "TypeError");
  const char* single[] = {"ffi.ModuleGetKind", "ffi.ModuleGetPropertyMask",
                          "ffi.ModuleGetWriteFormats", "ffi.ModuleClearImports",
                          "ffi.ModuleGlobalsAdd", "ffi.ModuleGlobalsRemove"};
  for (int i = 0; i < 6; ++i) expect_names_param(single[i], one, 1, 0, "mod", "TypeError");
  expect_names_param("ffi.ModuleLoadFromFile", one, 1, 0, "file_name", "TypeError");
  expect_names_param("ffi.SystemLib", one, 1, 0, "symbol_prefix", "TypeError");
  TVMFFIAny so[2] = {mod_int(1), mod_str("so")};
  expect_names_param("ffi.Module.load_from_file.so", so, 2, 0, "path", "TypeError");
  so[0] = mod_str("/no/such/lib.so");
  so[1] = mod_int(1);
  expect_names_param("ffi.Module.load_from_file.so", so, 2, 1, "format", "TypeError");
  API(TVMFFIObjectDecRef)(mod);
}

/* Calls global `g` (borrowed) and releases what it returns; 0 or 1 on a
 * failure. No cr_ calls: they allocate. */
static int quiet_call(TVMFFIObjectHandle g, TVMFFIAny* args, int32_t n) {
  TVMFFIAny r = mod_none();
  int rc = conf_api.TVMFFIFunctionCall(g, args, n, &r);
  if (rc == 0 && r.type_index >= kTVMFFIStaticObjectBegin && r.v_obj) conf_api.TVMFFIObjectDecRef(r.v_obj);
  if (rc != 0) {
    TVMFFIObjectHandle err = NULL;
    conf_api.TVMFFIErrorMoveFromRaised(&err);
    if (err) conf_api.TVMFFIObjectDecRef(err);
  }
  return rc != 0;
}

typedef struct {
  TVMFFIObjectHandle load, get, doc, import, clear, add, remove, syslib;
  const char *basic, *other;
} Mod115Globals;

/* One round of module work, everything made released again; returns the
 * number of calls that failed. */
static int mod115_round(const Mod115Globals* g) {
  int bad = 0;
  TVMFFIAny path = mod_str(g->basic), r;
  TVMFFIObjectHandle basic = NULL, other = NULL, third = NULL;
  r = mod_none();
  if (conf_api.TVMFFIFunctionCall(g->load, &path, 1, &r) == 0) basic = r.v_obj;
  path = mod_str(g->other);
  r = mod_none();
  if (conf_api.TVMFFIFunctionCall(g->load, &path, 1, &r) == 0) other = r.v_obj;
  r = mod_none();
  if (conf_api.TVMFFIFunctionCall(g->load, &path, 1, &r) == 0) third = r.v_obj;
  if (!basic || !other || !third) return 1;
  TVMFFIAny pair[2] = {mod_obj(basic), mod_obj(other)};
  bad += quiet_call(g->import, pair, 2);
  TVMFFIAny onto_third[2] = {mod_obj(third), mod_obj(basic)}; /* walks basic's imports */
  bad += quiet_call(g->import, onto_third, 2);
  TVMFFIAny lookup[3] = {mod_obj(third), mod_str("other_fn"), mod_bool(1)};
  bad += quiet_call(g->get, lookup, 3);
  bad += quiet_call(g->doc, lookup, 3);
  lookup[0] = mod_obj(basic);
  TVMFFIAny ctx_fn = mod_none();
  lookup[1] = mod_str("get_ctx");
  if (conf_api.TVMFFIFunctionCall(g->get, lookup, 3, &ctx_fn) != 0) return bad + 1;
  TVMFFIAny ctx = mod_none();
  bad += conf_api.TVMFFIFunctionCall(ctx_fn.v_obj, NULL, 0, &ctx) != 0;
  conf_api.TVMFFIObjectDecRef(ctx_fn.v_obj);
  TVMFFIObjectHandle found = NULL; /* borrowed from basic's cache */
  bad += conf_api.TVMFFIEnvModLookupFromImports(ctx.v_ptr, "other_fn", &found) != 0;
  bad += conf_api.TVMFFIEnvModLookupFromImports(ctx.v_ptr, "which", &found) != 0;
  /* A system library's function by its name and by its prefixed name. */
  TVMFFIAny sys[3] = {mod_obj(g->syslib), mod_str("f"), mod_bool(0)};
  bad += quiet_call(g->get, sys, 3);
  sys[1] = mod_str("conf115_f");
  bad += quiet_call(g->get, sys, 3);
  TVMFFIAny one = mod_obj(other);
  bad += quiet_call(g->add, &one, 1);
  bad += quiet_call(g->remove, &one, 1);
  one = mod_obj(third);
  bad += quiet_call(g->clear, &one, 1);
  conf_api.TVMFFIObjectDecRef(third);
  conf_api.TVMFFIObjectDecRef(other);
  conf_api.TVMFFIObjectDecRef(basic);
  return bad;
}

/* MOD-115: module work gives its memory back: 100 rounds of loading
 * modules, importing (through a cycle check that walks imports), looking
 * functions and docs up through imports, TVMFFIEnvModLookupFromImports,
 * pinning and unpinning, clearing imports and releasing every module leave
 * the heap in use (glibc mallinfo2) within 8 bytes a round of where the
 * first round left it. The libraries stay loaded by modules held outside
 * the rounds. */
TEST(module_edge, MOD_115_module_work_gives_memory_back) {
  conf_alloc_require(); /* glibc owns the heap: no sanitizer, no valgrind */
  enum { kRounds = 100 };
  TVMFFIObjectHandle keep_basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle keep_other = mod_load("libmod_other.so");
  Mod115Globals g = {
      mod_global("ffi.ModuleLoadFromFile"), mod_global("ffi.ModuleGetFunction"),
      mod_global("ffi.ModuleGetFunctionDoc"), mod_global("ffi.ModuleImportModule"),
      mod_global("ffi.ModuleClearImports"), mod_global("ffi.ModuleGlobalsAdd"),
      mod_global("ffi.ModuleGlobalsRemove"), NULL, mod_lib_path("libmod_basic.so"),
      mod_lib_path("libmod_other.so")};
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf115_f", (void*)sys_answer),
               0);
  TVMFFIAny prefix = mod_str("conf115_"), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &prefix, 1, &r));
  g.syslib = r.v_obj;
  cr_assert_eq(mod115_round(&g), 0, "the first round failed");
  size_t before = mallinfo2().uordblks;
  int bad = 0;
  for (int i = 0; i < kRounds; ++i) bad += mod115_round(&g);
  size_t after = mallinfo2().uordblks;
  cr_assert_eq(bad, 0, "%d calls failed over %d rounds", bad, kRounds);
  long growth = after > before ? (long)(after - before) : 0;
  cr_expect(growth <= 8 * kRounds, "the heap grew by %ld bytes over %d rounds", growth, kRounds);
  TVMFFIObjectHandle* all[] = {&g.load,   &g.get,      &g.doc,      &g.import, &g.clear,
                               &g.add,    &g.remove,   &g.syslib,   &keep_other, &keep_basic};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) API(TVMFFIObjectDecRef)(*all[i]);
}

/* MOD-116: with query_imports the search goes through an import's imports:
 * top (libmod_basic) imports mid (libmod_basic) which imports leaf
 * (libmod_other); only leaf has other_fn and its doc. */
TEST(module_edge, MOD_116_info_search_is_deep) {
  TVMFFIObjectHandle leaf = mod_load("libmod_other.so");
  TVMFFIObjectHandle mid = mod_load("libmod_basic.so");
  TVMFFIObjectHandle top = mod_load("libmod_basic.so");
  TVMFFIAny a[2] = {mod_obj(mid), mod_obj(leaf)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  a[0] = mod_obj(top);
  a[1] = mod_obj(mid);
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  TVMFFIAny q[3] = {mod_obj(top), mod_str("other_fn"), mod_bool(1)};
  EXPECT_OK(mod_call("ffi.ModuleGetFunctionDoc", q, 3, &r));
  char buf[128];
  const char* doc = mod_take_str(&r, buf, sizeof buf);
  cr_expect(doc != NULL && strcmp(doc, "other_fn lives in mod_other.") == 0,
            "the doc of an import's import was not found: %s", doc ? doc : "(not a str)");
  q[2] = mod_bool(0);
  EXPECT_OK(mod_call("ffi.ModuleGetFunctionDoc", q, 3, &r));
  cr_expect_eq(r.type_index, kTVMFFINone, "found without query_imports");
  mod_release(&r);
  cr_expect_eq(mod_implements(top, "other_fn", 1), 1, "an import's import's function not found");
  TVMFFIObjectHandle* all[] = {&top, &mid, &leaf};
  for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(*all[i]);
}

/* A str made by the runtime from `len` bytes (NUL bytes travel whole). */
static TVMFFIAny str_of(const char* data, size_t len) {
  TVMFFIByteArray bytes = {data, len};
  TVMFFIAny s;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &s), 0);
  return s;
}

/* MOD-117: the refusals of loading say what they refuse: a NUL byte in
 * the path or the prefix (named as a parameter), a long path without '.'
 * (shown, not cut to nothing), and WriteToFile of a library module. */
TEST(module_edge, MOD_117_load_refusals_say_what) {
  static const char nul_path[] = "/no/such/dir/lib\0x.so";
  TVMFFIAny args[2] = {str_of(nul_path, sizeof nul_path - 1), mod_str("so")}, r;
  ConfError err =
      expect_names_param("ffi.Module.load_from_file.so", args, 2, 0, "path", "ValueError");
  cr_expect(strstr(err.message, "NUL") != NULL, "the reason is not given: %s", err.message);
  mod_release(&args[0]);
  TVMFFIAny prefix = str_of("conf117_\0x", 10);
  int rc = mod_call("ffi.SystemLib", &prefix, 1, &r);
  mod_release(&r);
  mod_release(&prefix);
  if (rc != 0) { /* refusing is one of the two answers MOD-036 allows */
    err = conf_take_error();
    cr_expect_str_eq(err.kind, "ValueError");
    cr_expect(strstr(err.message, "ffi.SystemLib") && strstr(err.message, "#0") &&
                  has_word(err.message, "symbol_prefix") && strstr(err.message, "NUL"),
              "the refusal does not name ffi.SystemLib, #0, symbol_prefix and NUL: %s",
              err.message);
  }
  static char long_path[5001];
  memset(long_path, 'p', 5000);
  memcpy(long_path, "/tmp/conf117_", 13);
  TVMFFIAny path = mod_str(long_path);
  cr_expect_eq(mod_call("ffi.ModuleLoadFromFile", &path, 1, &r), -1);
  char head[1001];
  memcpy(head, long_path, 1000);
  head[1000] = '\0';
  EXPECT_RAISED(.kind = "RuntimeError", .says = {head});
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny w[3] = {mod_obj(mod), mod_str("/tmp/conf117_never_written.so"), mod_str("so")};
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", w, 3, &r), -1);
  err = conf_take_error();
  cr_expect_str_eq(err.kind, "RuntimeError");
  cr_expect(strstr(err.message, "WriteToFile") && strstr(err.message, "library"),
            "the message does not say that a library module cannot WriteToFile: %s",
            err.message);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-118: a metadata or doc getter returning something other than a str
 * fails the query with a TypeError naming the function and saying a str was
 * expected. */
TEST(module_edge, MOD_118_getter_type_error_says_what) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  const char* queries[2][2] = {{"ffi.ModuleGetFunctionMetadata", "bad_meta"},
                               {"ffi.ModuleGetFunctionDoc", "bytes_doc"}};
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny q[3] = {mod_obj(mod), mod_str(queries[i][1]), mod_bool(0)}, r;
    cr_expect_eq(mod_call(queries[i][0], q, 3, &r), -1, "%s(%s) succeeded", queries[i][0],
                 queries[i][1]);
    mod_release(&r);
    ConfError err = conf_take_error();
    cr_expect_str_eq(err.kind, "TypeError");
    cr_expect(strstr(err.message, queries[i][1]) != NULL && has_word(err.message, "str"),
              "%s: the message does not name %s and say str: %s", queries[i][0], queries[i][1],
              err.message);
  }
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-119: the other ffi.Module* globals with any allocation failing give
 * their result (of the type they give with memory to spare) or -1 with
 * MemoryError. */
TEST(module_edge, MOD_119_module_queries_out_of_memory) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  static const struct {
    const char* fn;
    int32_t n;
  } calls[] = {
      {"ffi.ModuleGetWriteFormats", 1}, {"ffi.ModuleGetKind", 1},
      {"ffi.ModuleGetPropertyMask", 1}, {"ffi.ModuleInspectSource", 2},
      {"ffi.ModuleClearImports", 1},    {"ffi.ModuleGetFunctionMetadata", 3},
      {"ffi.ModuleGlobalsRemove", 1},
  };
  TVMFFIAny args[3] = {mod_obj(mod), mod_str("add_one"), mod_bool(0)}, r;
  long points = 0;
  for (size_t c = 0; c < sizeof calls / sizeof calls[0]; ++c) {
    TVMFFIObjectHandle fn = mod_global(calls[c].fn);
    EXPECT_OK(mod_call_fn(fn, args, calls[c].n, &r));
    int32_t want = r.type_index == kTVMFFISmallStr ? kTVMFFIStr : r.type_index;
    mod_release(&r);
    for (int sticky = 0; sticky < 2; ++sticky) {
      ConfAllocWalk w = conf_alloc_walk(sticky);
      while (conf_alloc_next(&w)) {
        int rc = armed_call(&w, fn, args, calls[c].n, &r);
        if (rc != 0) {
          expect_oom_refusal(&w, calls[c].fn, rc, NULL);
          continue;
        }
        int32_t got = r.type_index == kTVMFFISmallStr ? kTVMFFIStr : r.type_index;
        mod_release(&r);
        cr_assert_eq(got, want, "%s, allocation %ld failed: type index %d, not %d", calls[c].fn,
                     w.n, got, want);
        ConfError err = conf_take_error();
        cr_assert_eq(err.kind[0], '\0', "%s, allocation %ld failed: 0 with %s raised",
                     calls[c].fn, w.n, err.kind);
      }
      points += w.points;
    }
    API(TVMFFIObjectDecRef)(fn);
  }
  API(TVMFFIObjectDecRef)(mod);
  conf_alloc_done(points, "ffi.ModuleGetWriteFormats");
}

static int sys_one(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 1;
  return 0;
}

static int sys_two(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 2;
  return 0;
}

/* MOD-120: prefixes of one length are told apart by their text: each
 * ffi.SystemLib module finds its own prefix's f. */
TEST(module_edge, MOD_120_same_length_prefixes_apart) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf120a_f", (void*)sys_one), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf120b_f", (void*)sys_two), 0);
  const char* prefixes[2] = {"conf120a_", "conf120b_"};
  TVMFFIObjectHandle mods[2];
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny a = mod_str(prefixes[i]), r;
    EXPECT_OK(mod_call("ffi.SystemLib", &a, 1, &r));
    mods[i] = r.v_obj;
  }
  cr_expect_neq(mods[0], mods[1], "two prefixes of one length gave one module");
  for (int i = 0; i < 2; ++i) {
    TVMFFIObjectHandle f = mod_get_function(mods[i], "f", 0);
    cr_assert_not_null(f, "%s has no f", prefixes[i]);
    cr_expect_eq(mod_call_int(f, NULL, 0), i + 1, "%s found another prefix's f", prefixes[i]);
    API(TVMFFIObjectDecRef)(f);
    API(TVMFFIObjectDecRef)(mods[i]);
  }
}

static int gives_int(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 121;
  return 0;
}

/* MOD-121: ffi.SystemLib takes at most one argument, and a host loader
 * that returns something other than a module is refused by a TypeError
 * saying a Module was expected. */
TEST(module_edge, MOD_121_system_lib_count_and_loader_type) {
  TVMFFIAny two[2] = {mod_str("conf121_"), mod_str("x")}, r;
  cr_expect_eq(mod_call("ffi.SystemLib", two, 2, &r), -1, "ffi.SystemLib took two arguments");
  mod_release(&r);
  EXPECT_RAISED(.kind = "TypeError", .says = {"ffi.SystemLib"});
  TVMFFIObjectHandle loader = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, gives_int, NULL, &loader), 0);
  static const char name[] = "ffi.Module.load_from_file.conf121";
  TVMFFIByteArray n = {name, sizeof name - 1};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, loader, 1), 0);
  API(TVMFFIObjectDecRef)(loader);
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path("/no/such/lib.conf121", &mod), -1, "an int was taken for a module");
  EXPECT_RAISED(.kind = "TypeError", .says = {"Module"});
}

static __attribute__((aligned(8))) unsigned char ctx_fail_blob[256];
static void* mod122_ctx;

/* MOD-122: a load that fails after making the `_lib` module leaves the
 * library's context variable as it was or NULL, never pointing at the
 * module the failure freed. The blob: `_lib` importing a module of a kind
 * without a loader. */
TEST(module_edge, MOD_122_failed_load_leaves_no_stale_context) {
  static const char kind[] = "conf122_no_loader";
  size_t klen = sizeof kind - 1;
  unsigned char* at = ctx_fail_blob;
  put_u64(&at, 8 + 24 + 8 + 8 + 8 + 4 + 8 + klen + 8 + 1); /* nbytes */
  put_u64(&at, 3); /* indptr [0, 1, 1]: _lib imports module 1 */
  put_u64(&at, 0);
  put_u64(&at, 1);
  put_u64(&at, 1);
  put_u64(&at, 1); /* child_indices [1] */
  put_u64(&at, 1);
  put_u64(&at, 4);
  memcpy(at, "_lib", 4);
  at += 4;
  put_u64(&at, klen);
  memcpy(at, kind, klen);
  at += klen;
  put_u64(&at, 1);
  *at = 'p';
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("conf122___tvm_ffi__library_bin",
                                                          ctx_fail_blob), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("conf122___tvm_ffi__library_ctx",
                                                          &mod122_ctx), 0);
  static int sentinel;
  mod122_ctx = &sentinel;
  TVMFFIAny a = mod_str("conf122_"), r;
  cr_assert_eq(mod_call("ffi.SystemLib", &a, 1, &r), -1, "a kind without a loader was loaded");
  EXPECT_RAISED(.says = {"ffi.Module.load_from_bytes.conf122_no_loader"});
  cr_expect(mod122_ctx == &sentinel || mod122_ctx == NULL,
            "the context variable points at %p, a module the failed load made and freed",
            mod122_ctx);
}

/* MOD-030 (siblings): of two imports that both have the name, the first
 * one's function is what TVMFFIEnvModLookupFromImports returns. */
TEST(module_edge, MOD_030_first_sibling_import_wins) {
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle other = mod_load("libmod_other.so"); /* which: 1 */
  TVMFFIObjectHandle third = mod_load("libmod_third.so"); /* which: 2 */
  TVMFFIAny a[2] = {mod_obj(basic), mod_obj(other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  a[1] = mod_obj(third);
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  TVMFFIObjectHandle get_ctx = mod_get_function(basic, "get_ctx", 0);
  EXPECT_OK(mod_call_fn(get_ctx, NULL, 0, &r));
  API(TVMFFIObjectDecRef)(get_ctx);
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIEnvModLookupFromImports)(r.v_ptr, "which", &fn), 0, "not found");
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1, "the second import's function was returned");
  TVMFFIAny q[3] = {mod_obj(basic), mod_str("which"), mod_bool(1)};
  EXPECT_OK(mod_call("ffi.ModuleGetFunction", q, 3, &r));
  cr_expect_eq(mod_call_int(r.v_obj, NULL, 0), 1, "ffi.ModuleGetFunction took the second import");
  mod_release(&r);
  TVMFFIObjectHandle* all[] = {&third, &other, &basic};
  for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(*all[i]);
}

/* MOD-123: a metadata or doc query of a name holding a NUL byte finds
 * nothing: never the getter of the name cut at the NUL. */
TEST(module_edge, MOD_123_info_name_with_nul_not_cut) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  const char* globals[2] = {"ffi.ModuleGetFunctionDoc", "ffi.ModuleGetFunctionMetadata"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIAny q[3] = {mod_obj(mod), str_of("add_one\0x", 9), mod_bool(1)}, r;
    int rc = mod_call(globals[i], q, 3, &r);
    mod_release(&q[1]);
    EXPECT_OK(rc);
    cr_expect_eq(r.type_index, kTVMFFINone, "%s of \"add_one\\0x\" found add_one's (type %d)",
                 globals[i], r.type_index);
    mod_release(&r);
  }
  API(TVMFFIObjectDecRef)(mod);
}

/* Calls fn(args) with its k-th allocation failing, the result and any
 * error released; 1 when an allocation was made to fail. No cr_ calls. */
static int fail_kth(TVMFFIObjectHandle fn, TVMFFIAny* args, int32_t n, long k, int* rc) {
  TVMFFIAny r = mod_none();
  conf_alloc_fail_nth(k);
  *rc = conf_api.TVMFFIFunctionCall(fn, args, n, &r);
  long failed = conf_alloc_off();
  if (*rc == 0 && r.type_index >= kTVMFFIStaticObjectBegin && r.v_obj)
    conf_api.TVMFFIObjectDecRef(r.v_obj);
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  if (err) conf_api.TVMFFIObjectDecRef(err);
  return failed > 0;
}

/* For each k: once the call with its k-th allocation failing has failed,
 * 20 more such calls leave at most 2 more blocks live. */
static long walk_failed_calls_keep_nothing(const char* what, TVMFFIObjectHandle fn,
                                           TVMFFIAny* args, int32_t n) {
  long points = 0;
  for (long k = 0; k < CONF_ALLOC_MAX_STEPS; ++k) {
    int rc;
    if (!fail_kth(fn, args, n, k, &rc)) break;
    ++points;
    if (rc == 0) continue; /* this allocation's failure was survived */
    conf_alloc_count_start();
    int changed = 0;
    for (int i = 0; i < 20; ++i) {
      int again;
      fail_kth(fn, args, n, k, &again);
      changed |= again != rc;
    }
    long grown = conf_alloc_count_stop();
    cr_assert_eq(changed, 0, "%s, allocation %ld failing: the same call ended differently", what,
                 k);
    cr_assert_leq(grown, 2, "%s, allocation %ld failing: 20 failed calls kept %ld blocks", what, k,
                  grown);
  }
  return points;
}

/* MOD-124: a load that fails for lack of memory keeps nothing: the same
 * failing call repeated keeps no memory (ffi.SystemLib of a prefix not
 * loaded yet, ffi.ModuleLoadFromFile of a library). */
TEST(module_edge, MOD_124_failed_loads_keep_nothing) {
  conf_alloc_require();
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf124_f", (void*)sys_answer),
               0);
  TVMFFIObjectHandle keep = mod_load("libmod_basic.so");
  TVMFFIObjectHandle sys = mod_global("ffi.SystemLib");
  TVMFFIObjectHandle load = mod_global("ffi.ModuleLoadFromFile");
  TVMFFIAny prefix = mod_str("conf124_"), path = mod_str(mod_lib_path("libmod_basic.so"));
  long points = walk_failed_calls_keep_nothing("ffi.SystemLib", sys, &prefix, 1);
  points += walk_failed_calls_keep_nothing("ffi.ModuleLoadFromFile", load, &path, 1);
  API(TVMFFIObjectDecRef)(load);
  API(TVMFFIObjectDecRef)(sys);
  API(TVMFFIObjectDecRef)(keep);
  conf_alloc_done(points, "ffi.SystemLib");
}

/* MOD-043 (siblings): with any allocation failing, a lookup through a
 * module importing other (which: 1) then third (which: 2) returns the
 * first import's function with nothing raised, or -1 with MemoryError:
 * a failure in the first import never lets the second one's answer
 * through. */
TEST(module_edge, MOD_043_sibling_imports_out_of_memory) {
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle other = mod_load("libmod_other.so");
  TVMFFIObjectHandle third = mod_load("libmod_third.so");
  TVMFFIAny a[2] = {mod_obj(basic), mod_obj(other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  a[1] = mod_obj(third);
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  TVMFFIObjectHandle get_ctx = mod_get_function(basic, "get_ctx", 0);
  EXPECT_OK(mod_call_fn(get_ctx, NULL, 0, &r));
  API(TVMFFIObjectDecRef)(get_ctx);
  void* ctx = r.v_ptr;
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    int found = 0;
    while (!found && conf_alloc_next(&w)) {
      TVMFFIObjectHandle fn = NULL;
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIEnvModLookupFromImports(ctx, "which", &fn);
      conf_alloc_disarm(&w);
      if (rc != 0) {
        expect_oom_refusal(&w, "TVMFFIEnvModLookupFromImports", rc, NULL);
        continue;
      }
      ConfError err = conf_take_error();
      cr_expect_eq(err.kind[0], '\0', "allocation %ld failed: 0 with %s raised", w.n,
                   err.kind);
      cr_assert_not_null(fn, "allocation %ld failed: 0 but no function", w.n);
      cr_assert_eq(mod_call_int(fn, NULL, 0), 1, "allocation %ld failed: the second import's "
                   "function was returned", w.n);
      found = 1; /* now kept by the module: later lookups allocate nothing */
    }
    points += w.points;
    if (!sticky) { /* a fresh module for the sticky walk: nothing kept */
      TVMFFIAny c = mod_obj(basic);
      EXPECT_OK(mod_call("ffi.ModuleClearImports", &c, 1, &r));
      API(TVMFFIObjectDecRef)(basic);
      basic = mod_load("libmod_basic.so");
      a[0] = mod_obj(basic);
      a[1] = mod_obj(other);
      EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
      a[1] = mod_obj(third);
      EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
      get_ctx = mod_get_function(basic, "get_ctx", 0);
      EXPECT_OK(mod_call_fn(get_ctx, NULL, 0, &r));
      API(TVMFFIObjectDecRef)(get_ctx);
      ctx = r.v_ptr;
    }
  }
  TVMFFIObjectHandle* all[] = {&third, &other, &basic};
  for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(*all[i]);
  conf_alloc_done(points, "TVMFFIEnvModLookupFromImports");
}

/* MOD-042 (a module with imports): importing mid, which imports leaf,
 * into top with any allocation failing imports it with nothing left
 * raised, or returns -1 with MemoryError leaving top's imports as they
 * were. The cycle check has a graph to walk here. */
TEST(module_edge, MOD_042_import_of_importer_out_of_memory) {
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    TVMFFIObjectHandle leaf = mod_load("libmod_other.so");
    TVMFFIObjectHandle mid = mod_load("libmod_basic.so");
    TVMFFIObjectHandle top = mod_load("libmod_basic.so");
    TVMFFIAny a[2] = {mod_obj(mid), mod_obj(leaf)}, r;
    EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
    TVMFFIObjectHandle fn = mod_global("ffi.ModuleImportModule");
    a[0] = mod_obj(top);
    a[1] = mod_obj(mid);
    ConfAllocWalk w = conf_alloc_walk(sticky);
    int imported = 0;
    while (!imported && conf_alloc_next(&w)) {
      int rc = armed_call(&w, fn, a, 2, &r);
      if (rc != 0) {
        expect_oom_refusal(&w, "ffi.ModuleImportModule", rc, NULL);
        cr_assert_eq(mod_implements(top, "other_fn", 1), 0,
                     "allocation %ld failed: -1, but the import was kept", w.n);
        continue;
      }
      ConfError err = conf_take_error();
      cr_assert_eq(err.kind[0], '\0', "allocation %ld failed: 0 with %s raised: %s", w.n,
                   err.kind, err.message);
      cr_assert_eq(mod_implements(top, "other_fn", 1), 1,
                   "allocation %ld failed: 0, but leaf is not reached from top", w.n);
      imported = 1;
    }
    points += w.points;
    API(TVMFFIObjectDecRef)(fn);
    TVMFFIAny c = mod_obj(top);
    EXPECT_OK(mod_call("ffi.ModuleClearImports", &c, 1, &r));
    TVMFFIObjectHandle* all[] = {&top, &mid, &leaf};
    for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(*all[i]);
  }
  conf_alloc_done(points, "ffi.ModuleImportModule");
}

static int loader087_deleted;
static void loader087_delete(void* self) {
  (void)self;
  ++loader087_deleted;
}

static int fresh_function(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  return 0;
}

/* LIB-087: a load holds no reference to a ffi.Module.load_from_bytes.<kind>
 * loader once it returns: overriding the global then frees the loader. */
TEST(module_edge, LIB_087_load_keeps_no_loader) {
  /* testdata/lib_like_kinds.bin: `_lib` importing a `_libx` and a `_lix` module. */
  mod_premade_setup(conf_runfile("conformance/testdata/lib_like_kinds.bin"));
  const char* names[2] = {"ffi.Module.load_from_bytes._libx", "ffi.Module.load_from_bytes._lix"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIObjectHandle loader = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, mod_premade_loader, loader087_delete, &loader),
                 0);
    TVMFFIByteArray n = {names[i], strlen(names[i])};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, loader, 1), 0);
    API(TVMFFIObjectDecRef)(loader);
  }
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("conf087___tvm_ffi__library_bin",
                                                          mod_premade_blob), 0);
  TVMFFIAny a = mod_str("conf087_"), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &a, 1, &r));
  cr_expect_eq(mod_implements(r.v_obj, "other_fn", 1), 1, "the loaders' modules are not imported");
  mod_release(&r);
  TVMFFIObjectHandle fresh = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, fresh_function, NULL, &fresh), 0);
  for (int i = 0; i < 2; ++i) {
    TVMFFIByteArray n = {names[i], strlen(names[i])};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fresh, 1), 0);
  }
  API(TVMFFIObjectDecRef)(fresh);
  cr_expect_eq(loader087_deleted, 2, "%d of the 2 loaders were freed once overridden",
               loader087_deleted);
  API(TVMFFIObjectDecRef)(mod_premade_module);
}

/* MOD-125: a system library's blob registered at an address in no loaded
 * object (heap memory, whose extent nothing records) is refused with
 * ValueError naming __tvm_ffi__library_bin, not read unbounded. The heap
 * copy holds a well-formed blob, so only its unknown extent is refused. */
TEST(module_edge, MOD_125_blob_of_unknown_extent_refused) {
  mod_premade_setup(conf_runfile("conformance/testdata/lib_like_kinds.bin"));
  unsigned char* heap = malloc(sizeof mod_premade_blob);
  cr_assert_not_null(heap);
  memcpy(heap, mod_premade_blob, sizeof mod_premade_blob);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("conf125___tvm_ffi__library_bin", heap),
               0);
  TVMFFIAny a = mod_str("conf125_"), r;
  int rc = mod_call("ffi.SystemLib", &a, 1, &r);
  mod_release(&r);
  cr_expect_eq(rc, -1, "a blob of unknown extent was read");
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, "ValueError", "%s: %s", err.kind, err.message);
  const char* named = strstr(err.message, "__tvm_ffi__library_bin");
  cr_expect(named != NULL, "the message does not name __tvm_ffi__library_bin: %s",
            err.message);
  /* and says why: text other than blanks after the symbol's name */
  const char* why = named ? named + strlen("__tvm_ffi__library_bin") : "";
  while (*why == ' ') ++why;
  cr_expect(*why != '\0', "the message gives no reason after the symbol's name: %s",
            err.message);
  API(TVMFFIObjectDecRef)(mod_premade_module);
  /* heap stays registered for the life of the process. */
}

/* MOD-002 (exact): ffi.ModuleGetKind gives the str of exactly the seven
 * bytes "library", no NUL or anything else after them. */
TEST(module_edge, MOD_002_kind_is_exactly_library) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny a = mod_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleGetKind", &a, 1, &r));
  const char* data = NULL;
  size_t size = 0;
  if (r.type_index == kTVMFFISmallStr) {
    data = r.v_bytes;
    size = r.small_str_len;
  } else if (r.type_index == kTVMFFIStr) {
    TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(r.v_obj);
    data = b->data;
    size = b->size;
  }
  cr_assert_not_null(data, "ffi.ModuleGetKind returned type index %d", r.type_index);
  cr_expect(size == 7 && memcmp(data, "library", 7) == 0, "the kind is %zu bytes: %.*s", size,
            (int)size, data);
  mod_release(&r);
  API(TVMFFIObjectDecRef)(mod);
}

static int by_address(const void* a, const void* b) {
  uintptr_t x = (uintptr_t) * (void* const*)a, y = (uintptr_t) * (void* const*)b;
  return x < y ? -1 : x > y;
}

/* MOD-033 (any position): with three modules pinned, in address order or
 * the reverse, ffi.ModuleGlobalsRemove of the lowest, middle or highest
 * address unpins that module alone. */
TEST(module_edge, MOD_033_remove_pins_only_its_module) {
  const char* files[3] = {"libmod_basic.so", "libmod_other.so", "libmod_third.so"};
  for (int reverse = 0; reverse < 2; ++reverse) {
    for (int target = 0; target < 3; ++target) {
      struct {
        TVMFFIObjectHandle mod;
        const char* path;
      } m[3];
      for (int i = 0; i < 3; ++i) {
        m[i].mod = mod_load(files[i]);
        m[i].path = mod_lib_path(files[i]);
      }
      qsort(m, 3, sizeof m[0], by_address);
      TVMFFIAny a, r;
      for (int k = 0; k < 3; ++k) {
        a = mod_obj(m[reverse ? 2 - k : k].mod);
        EXPECT_OK(mod_call("ffi.ModuleGlobalsAdd", &a, 1, &r));
      }
      for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(m[i].mod); /* pinned only */
      a = mod_obj(m[target].mod);
      EXPECT_OK(mod_call("ffi.ModuleGlobalsRemove", &a, 1, &r));
      for (int i = 0; i < 3; ++i) {
        cr_expect_eq(mod_is_loaded(m[i].path), i != target,
                     "pinned %s, removed the module at address rank %d: rank %d %s",
                     reverse ? "highest first" : "lowest first", target, i,
                     i == target ? "is still pinned" : "was unpinned");
      }
      for (int i = 0; i < 3; ++i) {
        if (i == target || !mod_is_loaded(m[i].path)) continue;
        a = mod_obj(m[i].mod);
        EXPECT_OK(mod_call("ffi.ModuleGlobalsRemove", &a, 1, &r));
      }
    }
  }
}

/* MOD-034 (kept): once a name was found, looking it up again through the
 * same module gives the kept handle without allocating: it succeeds with
 * every allocation failing. */
TEST(module_edge, MOD_034_found_name_needs_no_memory) {
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle other = mod_load("libmod_other.so");
  TVMFFIAny a[2] = {mod_obj(basic), mod_obj(other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  TVMFFIObjectHandle get_ctx = mod_get_function(basic, "get_ctx", 0);
  EXPECT_OK(mod_call_fn(get_ctx, NULL, 0, &r));
  API(TVMFFIObjectDecRef)(get_ctx);
  TVMFFIObjectHandle first = NULL, again = NULL;
  cr_assert_eq(API(TVMFFIEnvModLookupFromImports)(r.v_ptr, "which", &first), 0);
  conf_alloc_require();
  conf_alloc_fail_from(0);
  int rc = conf_api.TVMFFIEnvModLookupFromImports(r.v_ptr, "which", &again);
  long failed = conf_alloc_off();
  cr_expect_eq(rc, 0, "the second lookup failed (%ld allocations were refused)", failed);
  cr_expect_eq(again, first, "the second lookup gave another handle");
  API(TVMFFIObjectDecRef)(other);
  API(TVMFFIObjectDecRef)(basic);
}

/* LIB-088: loads that fail for want of a loader, in a thread whose stack
 * lies in this binary's static data (below the heap, pthread_attr_setstack)
 * and then on the test's own thread (its stack above the heap), give back
 * everything they allocated: a kind of 120 bytes, too long for any fixed
 * buffer of the loader's name on the stack, leaks nothing over 40 loads.
 * Where the heap lies relative to a thread's stack is up to the process;
 * the runtime may not depend on it. */
#define LIB088_LOADS 40
static _Alignas(4096) unsigned char lib088_stack[1 << 20];

typedef struct {
  int refused; /* loads that returned -1 with an error raised, as they must */
  long live;   /* blocks still allocated after the measured loads */
} Lib088Run;

static int lib088_load_once(void) {
  TVMFFIAny a = mod_str("conf088_"), r;
  TVMFFIObjectHandle fn = NULL;
  TVMFFIByteArray n = {"ffi.SystemLib", 13};
  if (conf_api.TVMFFIFunctionGetGlobal(&n, &fn) != 0 || fn == NULL) return 0;
  int rc = conf_api.TVMFFIFunctionCall(fn, &a, 1, &r);
  conf_api.TVMFFIObjectDecRef(fn);
  if (rc == 0) {
    if (r.type_index >= kTVMFFIStaticObjectBegin && r.v_obj) conf_api.TVMFFIObjectDecRef(r.v_obj);
    return 0;
  }
  TVMFFIObjectHandle err = NULL;
  conf_api.TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) return 0;
  conf_api.TVMFFIObjectDecRef(err);
  return 1;
}

static void* lib088_thread(void* p) {
  Lib088Run* run = p;
  /* Warm-up: whatever a first load and a first error set up per thread. */
  for (int i = 0; i < 3; ++i) run->refused += lib088_load_once();
  conf_alloc_count_start();
  for (int i = 0; i < LIB088_LOADS; ++i) run->refused += lib088_load_once();
  run->live = conf_alloc_count_stop();
  return NULL;
}

TEST(module_edge, LIB_088_failed_loads_leak_nothing_on_any_stack) {
  conf_alloc_require();
  char kind[121];
  register_long_kind(kind, 120, "conf088", "conf088___tvm_ffi__library_bin");
  pthread_attr_t attr;
  cr_assert_eq(pthread_attr_init(&attr), 0);
  cr_assert_eq(pthread_attr_setstack(&attr, lib088_stack, sizeof lib088_stack), 0);
  pthread_t t;
  Lib088Run run = {0, 0};
  cr_assert_eq(pthread_create(&t, &attr, lib088_thread, &run), 0);
  pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
  cr_assert_eq(run.refused, 3 + LIB088_LOADS,
               "%d of %d loads of a kind without a loader returned -1 with an error raised",
               run.refused, 3 + LIB088_LOADS);
  cr_expect_leq(run.live, 0, "%ld blocks still allocated after %d failed loads", run.live,
                LIB088_LOADS);
  /* The same on this thread, whose stack lies above the heap. */
  Lib088Run here = {0, 0};
  lib088_thread(&here);
  cr_assert_eq(here.refused, 3 + LIB088_LOADS,
               "%d of %d loads of a kind without a loader returned -1 with an error raised",
               here.refused, 3 + LIB088_LOADS);
  cr_expect_leq(here.live, 0, "%ld blocks still allocated after %d failed loads on the main stack",
                here.live, LIB088_LOADS);
}

/* LIB-089: kinds of every length around what a loader's name could keep
 * in a small fixed buffer (60 to 129 bytes) and of 1 MiB, each
 * the only module of a system library's blob with no loader registered:
 * each load returns -1 with an error raised, the process survives, and no
 * block is written past the size it was allocated with. */
#define LIB089_HUGE (1 << 20)
static _Alignas(8) unsigned char lib089_blob[LIB089_HUGE + 64];

TEST(module_edge, LIB_089_long_kinds_stay_in_bounds) {
  conf_alloc_require();
  static char kind[LIB089_HUGE];
  memset(kind, 'k', sizeof kind);
  memcpy(kind, "conf089", 7);
  /* 60 to 129 bytes one by one, then 1 MiB. */
  size_t lens[71];
  for (size_t i = 0; i < 70; ++i) lens[i] = 60 + i;
  lens[70] = LIB089_HUGE;
  long before = conf_alloc_overruns();
  for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {
    char prefix[32], symbol[64];
    snprintf(prefix, sizeof prefix, "conf089_%zu_", i);
    snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
    make_kind_blob(lib089_blob, kind, lens[i]);
    cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, lib089_blob), 0);
    TVMFFIAny a = mod_str(prefix), r;
    conf_alloc_guard(1);
    int rc = mod_call("ffi.SystemLib", &a, 1, &r);
    conf_alloc_guard(0);
    cr_expect_eq(rc, -1, "a kind of %zu bytes without a loader was loaded", lens[i]);
    if (rc == 0) mod_release(&r);
    ConfError err = conf_take_error();
    cr_expect_neq(err.kind[0], '\0', "-1 with no error raised for a kind of %zu bytes",
                  lens[i]);
  }
  cr_expect_eq(conf_alloc_overruns() - before, 0,
               "%ld blocks were written past the size they were allocated with",
               conf_alloc_overruns() - before);
}

/* LIB-090: the loader of each kind is the one registered under that exact
 * kind: kinds of 60 to 129 bytes (around any fixed buffer a loader's name
 * might be built in) and of 300 bytes, each the only module of a system
 * library's blob with a loader of its own registered, load through
 * ffi.SystemLib, and each load calls its own loader once. */
static int lib090_calls;
static intptr_t lib090_last;

static int lib090_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args, (void)n;
  lib090_calls++;
  lib090_last = (intptr_t)self;
  API(TVMFFIObjectIncRef)(mod_premade_module);
  *result = mod_obj(mod_premade_module);
  return 0;
}

TEST(module_edge, LIB_090_loader_of_the_exact_kind) {
  mod_premade_module = mod_load("libmod_other.so");
  static char kind[301];
  memset(kind, 'q', 300);
  memcpy(kind, "conf090", 7);
  size_t lens[71];
  for (size_t i = 0; i < 70; ++i) lens[i] = 60 + i;
  lens[70] = 300;
  for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {
    char loader_name[400], prefix[32], symbol[64];
    snprintf(loader_name, sizeof loader_name, "ffi.Module.load_from_bytes.%.*s", (int)lens[i],
             kind);
    TVMFFIObjectHandle fn = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)((void*)(intptr_t)lens[i], lib090_loader, NULL, &fn), 0);
    TVMFFIByteArray ln = {loader_name, strlen(loader_name)};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&ln, fn, 1), 0);
    API(TVMFFIObjectDecRef)(fn);
    snprintf(prefix, sizeof prefix, "conf090_%zu_", i);
    snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
    make_kind_blob(lib089_blob, kind, lens[i]);
    cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, lib089_blob), 0);
    int before = lib090_calls;
    TVMFFIAny a = mod_str(prefix), r;
    int rc = mod_call("ffi.SystemLib", &a, 1, &r);
    EXPECT_OK(rc);
    if (rc == 0) mod_release(&r);
    cr_expect_eq(lib090_calls - before, 1, "a kind of %zu bytes: its loader ran %d times", lens[i],
                 lib090_calls - before);
    cr_expect_eq(lib090_last, (intptr_t)lens[i], "a kind of %zu bytes got the loader of %ld bytes",
                 lens[i], (long)lib090_last);
  }
  API(TVMFFIObjectDecRef)(mod_premade_module);
}
