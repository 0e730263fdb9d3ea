/* Out-of-memory clauses of spec/modules.md: module lookups, imports and
 * registrations with their 1st, 2nd, ... allocation failing (once, or from
 * there on; see alloc_fail.h). Running out of memory must never read as
 * "not found", and the runtime must work right after. */
#include <stdio.h>

#include "alloc_fail.h"
#include "module_support.h"

/* After a step that returned nonzero: it returned -1, the one error code
 * of a raised error, and the error raised is a MemoryError. */
static void expect_memory_error(const ConfAllocWalk* w, const char* what, int rc) {
  cr_assert_eq(rc, -1, "%s, allocation %ld failed: returned %d, not -1", what, w->n, rc);
  ConfError err = conf_take_error();
  cr_assert_str_eq(err.kind, "MemoryError", "%s, allocation %ld failed: raised %s: %s", what,
                   w->n, err.kind[0] ? err.kind : "nothing", err.message);
}

/* Calls `fn` armed with the walk's failure; the error stays raised. */
static int armed_call(ConfAllocWalk* w, TVMFFIObjectHandle fn, TVMFFIAny* args, int32_t n,
                      TVMFFIAny* result) {
  *result = mod_none();
  conf_alloc_arm(w);
  int rc = conf_api.TVMFFIFunctionCall(fn, args, n, result);
  conf_alloc_disarm(w);
  return rc;
}

static void load_pair(TVMFFIObjectHandle* basic, TVMFFIObjectHandle* other) {
  *basic = mod_load("libmod_basic.so");
  *other = mod_load("libmod_other.so");
  TVMFFIAny a[2] = {mod_obj(*basic), mod_obj(*other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
}

/* A lookup of `name` in `mod` (query_imports true), walked: a Function (a
 * str for the doc query) or a MemoryError, never None. */
static long walk_lookup_in(TVMFFIObjectHandle mod, const char* name, const char* global,
                           int sticky, int32_t want_type) {
  TVMFFIObjectHandle fn = mod_global(global);
  TVMFFIAny args[3] = {mod_obj(mod), mod_str(name), mod_bool(1)}, r;
  ConfAllocWalk w = conf_alloc_walk(sticky);
  while (conf_alloc_next(&w)) {
    int rc = armed_call(&w, fn, args, 3, &r);
    if (rc != 0) {
      expect_memory_error(&w, global, rc);
      continue;
    }
    int32_t got = r.type_index;
    mod_release(&r);
    cr_assert(got == want_type || (want_type == kTVMFFIStr && got == kTVMFFISmallStr),
              "%s(%s), allocation %ld failed: returned type index %d (out of memory read as "
              "not found?)",
              global, name, w.n, got);
  }
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, 3, &r), 0, "%s fails after the walk", global);
  mod_release(&r);
  API(TVMFFIObjectDecRef)(fn);
  return w.points;
}

static long walk_lookup(const char* global, int sticky, int32_t want_type) {
  TVMFFIObjectHandle basic, other;
  load_pair(&basic, &other);
  long points = walk_lookup_in(basic, "other_fn", global, sticky, want_type);
  API(TVMFFIObjectDecRef)(other);
  API(TVMFFIObjectDecRef)(basic);
  return points;
}

static int sys_answer(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 4141;
  return 0;
}

/* MOD-041: ffi.ModuleGetFunction, ffi.ModuleImplementsFunction and
 * ffi.ModuleGetFunctionDoc through imports, and ffi.ModuleGetFunction of a
 * system library, with any allocation failing, return the function (true,
 * the doc) or -1 with MemoryError. */
TEST(module_oom, MOD_041_lookups_out_of_memory) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf41_f", (void*)sys_answer),
               0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf41_g", (void*)sys_answer),
               0);
  TVMFFIAny prefix = mod_str("conf41_"), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &prefix, 1, &r));
  TVMFFIObjectHandle syslib = r.v_obj;
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    points += walk_lookup("ffi.ModuleGetFunction", sticky, kTVMFFIFunction);
    points += walk_lookup("ffi.ModuleImplementsFunction", sticky, kTVMFFIBool);
    points += walk_lookup("ffi.ModuleGetFunctionDoc", sticky, kTVMFFIStr);
    points += walk_lookup_in(syslib, "f", "ffi.ModuleGetFunction", sticky, kTVMFFIFunction);
    points += walk_lookup_in(syslib, "conf41_g", "ffi.ModuleGetFunction", sticky,
                             kTVMFFIFunction);
  }
  API(TVMFFIObjectDecRef)(syslib);
  conf_alloc_done(points, "ffi.ModuleGetFunction");
}

/* MOD-042: ffi.ModuleImportModule with any allocation failing imports the
 * module or returns -1 with MemoryError leaving the imports as they were. */
TEST(module_oom, MOD_042_import_out_of_memory) {
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
    TVMFFIObjectHandle other = mod_load("libmod_other.so");
    TVMFFIObjectHandle fn = mod_global("ffi.ModuleImportModule");
    TVMFFIAny args[2] = {mod_obj(basic), mod_obj(other)}, r;
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      int rc = armed_call(&w, fn, args, 2, &r);
      if (rc == 0) break; /* imported: the walk is over */
      expect_memory_error(&w, "ffi.ModuleImportModule", rc);
      cr_assert_eq(mod_implements(basic, "other_fn", 1), 0,
                   "allocation %ld failed: the import was kept", w.n);
    }
    points += w.points;
    if (mod_implements(basic, "other_fn", 1) == 0)
      cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, 2, &r), 0, "import fails after the walk");
    cr_assert_eq(mod_implements(basic, "other_fn", 1), 1);
    API(TVMFFIObjectDecRef)(fn);
    API(TVMFFIObjectDecRef)(other);
    API(TVMFFIObjectDecRef)(basic);
  }
  conf_alloc_done(points, "ffi.ModuleImportModule");
}

static void clear_imports_of(TVMFFIObjectHandle mod) {
  TVMFFIAny a = mod_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleClearImports", &a, 1, &r));
}

/* MOD-096: an import that would close a cycle, with any allocation
 * failing, is refused (MemoryError or the cycle's RuntimeError), never
 * made: running out of memory must not cut the cycle check short. The
 * chain is long enough that the check's bookkeeping has to grow. */
TEST(module_oom, MOD_096_cycle_check_out_of_memory) {
  enum { kChain = 10 };
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    TVMFFIObjectHandle m[kChain];
    m[0] = mod_load("libmod_basic.so");
    for (int i = 1; i + 1 < kChain; ++i) m[i] = mod_load("libmod_other.so");
    m[kChain - 1] = mod_load("libmod_third.so");
    TVMFFIAny r;
    for (int i = 0; i + 1 < kChain; ++i) {
      TVMFFIAny a[2] = {mod_obj(m[i]), mod_obj(m[i + 1])};
      cr_assert_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), 0, "link %d", i);
    }
    /* The last importing the first closes the chain into a cycle. */
    TVMFFIObjectHandle fn = mod_global("ffi.ModuleImportModule");
    TVMFFIAny closing[2] = {mod_obj(m[kChain - 1]), mod_obj(m[0])};
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      int rc = armed_call(&w, fn, closing, 2, &r);
      cr_assert_eq(rc, -1, "allocation %ld failed: the cyclic import returned %d", w.n, rc);
      ConfError err = conf_take_error();
      cr_assert(strcmp(err.kind, "MemoryError") == 0 ||
                    strcmp(err.kind, "RuntimeError") == 0,
                "allocation %ld failed: raised %s: %s", w.n, err.kind, err.message);
      cr_assert_eq(mod_implements(m[kChain - 1], "other_fn", 1), 0,
                   "allocation %ld failed: the last module reaches the first one's imports", w.n);
    }
    points += w.points;
    API(TVMFFIObjectDecRef)(fn);
    for (int i = 0; i < kChain; ++i) clear_imports_of(m[i]);
    for (int i = 0; i < kChain; ++i) API(TVMFFIObjectDecRef)(m[i]);
  }
  conf_alloc_done(points, "ffi.ModuleImportModule");
}

/* MOD-043: TVMFFIEnvModLookupFromImports with any allocation failing finds
 * the function or returns -1 with MemoryError, never the RuntimeError of a
 * name that does not exist. */
TEST(module_oom, MOD_043_lookup_from_imports_out_of_memory) {
  long points = 0;
  TVMFFIObjectHandle basic, other;
  load_pair(&basic, &other);
  TVMFFIObjectHandle get_ctx = mod_get_function(basic, "get_ctx", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(get_ctx, NULL, 0, &r));
  void* ctx = r.v_ptr;
  API(TVMFFIObjectDecRef)(get_ctx);
  /* Each walk its own name: a found name may be kept and cost nothing more. */
  const char* names[2] = {"other_fn", "which"};
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      TVMFFIObjectHandle out = NULL;
      conf_alloc_arm(&w);
      int rc = conf_api.TVMFFIEnvModLookupFromImports(ctx, names[sticky], &out);
      conf_alloc_disarm(&w);
      if (rc == 0) {
        cr_assert_not_null(out, "allocation %ld failed: 0 but no function", w.n);
        continue;
      }
      expect_memory_error(&w, "TVMFFIEnvModLookupFromImports", rc);
    }
    points += w.points;
    TVMFFIObjectHandle out = NULL;
    cr_assert_eq(API(TVMFFIEnvModLookupFromImports)(ctx, names[sticky], &out), 0);
    cr_assert_eq(mod_call_int(out, NULL, 0), sticky ? 1 : 42);
  }
  API(TVMFFIObjectDecRef)(other);
  API(TVMFFIObjectDecRef)(basic);
  conf_alloc_done(points, "TVMFFIEnvModLookupFromImports");
}

/* MOD-081: ffi.SystemLib of a new prefix with any allocation failing
 * returns a library module and nothing raised, or -1 with MemoryError, never
 * success without a module. */
TEST(module_oom, MOD_081_system_lib_out_of_memory) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf81_f", (void*)sys_answer),
               0);
  TVMFFIObjectHandle fn = mod_global("ffi.SystemLib");
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      char prefix[64]; /* a new prefix each step: a made module is kept */
      snprintf(prefix, sizeof prefix, "conf81_%d_%ld_", sticky, w.n);
      TVMFFIAny a = mod_str(prefix), r;
      int rc = armed_call(&w, fn, &a, 1, &r);
      if (rc != 0) {
        expect_memory_error(&w, "ffi.SystemLib", rc);
        mod_release(&a);
        continue;
      }
      ConfError err = conf_take_error(); /* a 0 leaves nothing raised: no failure swallowed on the way */
      cr_expect_eq(err.kind[0], '\0', "allocation %ld failed: 0 with %s raised: %s", w.n,
                   err.kind, err.message);
      int32_t got = r.type_index;
      int found = -1;
      if (got == kTVMFFIModule && r.v_obj != NULL) found = mod_implements(r.v_obj, "conf81_f", 0);
      mod_release(&r);
      mod_release(&a);
      cr_assert_eq(got, kTVMFFIModule, "allocation %ld failed: 0 with type index %d", w.n, got);
      cr_assert_eq(found, 1, "allocation %ld failed: the module lacks conf81_f", w.n);
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  conf_alloc_done(points, "ffi.SystemLib");
}

/* MOD-082: ffi.ModuleGlobalsAdd with any allocation failing pins the
 * module (0) or returns -1 with MemoryError; a 0 always means pinned. */
TEST(module_oom, MOD_082_globals_add_out_of_memory) {
  const char* path = mod_lib_path("libmod_other.so");
  TVMFFIObjectHandle mod = mod_load("libmod_other.so");
  TVMFFIObjectHandle fn = mod_global("ffi.ModuleGlobalsAdd");
  TVMFFIAny a = mod_obj(mod), r;
  ConfAllocWalk w = conf_alloc_walk(0);
  int pinned = 0;
  while (!pinned && conf_alloc_next(&w)) {
    int rc = armed_call(&w, fn, &a, 1, &r);
    if (rc == 0) {
      pinned = 1;
      break;
    }
    expect_memory_error(&w, "ffi.ModuleGlobalsAdd", rc);
  }
  if (!pinned) cr_assert_eq(API(TVMFFIFunctionCall)(fn, &a, 1, &r), 0, "fails after the walk");
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
  cr_assert(mod_is_loaded(path), "allocation %ld failed: 0 but the module is not pinned", w.n);
  EXPECT_OK(mod_call("ffi.ModuleGlobalsRemove", &a, 1, &r)); /* the runtime's reference */
  cr_expect(!mod_is_loaded(path), "still loaded after ffi.ModuleGlobalsRemove");
  conf_alloc_done(w.points, "ffi.ModuleGlobalsAdd");
}

/* ---- a system library with a library_bin blob ---- */

/* MOD-085: ffi.SystemLib of a new prefix whose `<prefix>__tvm_ffi__library_bin`
 * is registered, with any allocation failing, returns the module tree or -1
 * with MemoryError, never success without a module and never a crash. */
TEST(module_oom, MOD_085_system_lib_blob_out_of_memory) {
  /* testdata/lib_like_kinds.bin: `_lib` importing a `_libx` and a `_lix` module. */
  mod_premade_setup(conf_runfile("conformance/testdata/lib_like_kinds.bin"));
  TVMFFIObjectHandle loader = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, mod_premade_loader, NULL, &loader), 0);
  const char* loader_names[2] = {"ffi.Module.load_from_bytes._libx",
                                 "ffi.Module.load_from_bytes._lix"};
  for (int i = 0; i < 2; ++i) {
    TVMFFIByteArray ln = {loader_names[i], strlen(loader_names[i])};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&ln, loader, 1), 0);
  }
  API(TVMFFIObjectDecRef)(loader);
  TVMFFIObjectHandle fn = mod_global("ffi.SystemLib");
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      char prefix[64], symbol[128];
      snprintf(prefix, sizeof prefix, "conf85_%d_%ld_", sticky, w.n);
      snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
      cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, mod_premade_blob), 0);
      TVMFFIAny a = mod_str(prefix), r;
      int rc = armed_call(&w, fn, &a, 1, &r);
      if (rc != 0) {
        expect_memory_error(&w, "ffi.SystemLib", rc);
        continue;
      }
      int32_t got = r.type_index;
      int found = -1;
      if (got == kTVMFFIModule && r.v_obj != NULL) found = mod_implements(r.v_obj, "other_fn", 1);
      mod_release(&r);
      cr_assert_eq(got, kTVMFFIModule, "allocation %ld failed: 0 with type index %d", w.n, got);
      cr_assert_eq(found, 1, "allocation %ld failed: the _libx module is not imported", w.n);
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod_premade_module);
  conf_alloc_done(points, "ffi.SystemLib");
}
