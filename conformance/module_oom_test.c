/* Clauses of spec/modules.md on memory (## Memory): every ffi.Module*
 * global and TVMFFIEnvModLookupFromImports with allocations failing (one at a
 * time, or all from some point on), and module work giving its memory
 * back. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>

#include "alloc_fail.h"
#include "module_support.h"

/* MOD-111: ffi.ModuleLoadFromFile and ffi.Module.load_from_file.so of a
 * shared library, with any allocation failing, return the library module or
 * -1 with MemoryError (or the dynamic loader's RuntimeError naming the
 * path), and load it afterwards. The library stays loaded by a first module
 * throughout, so each step opens a library already mapped. */
TEST(module_oom, MOD_111_load_out_of_memory) {
  const char* path = mod_lib_path("libmod_basic.so");
  TVMFFIObjectHandle keep = mod_load("libmod_basic.so");
  const char* globals[2] = {"ffi.ModuleLoadFromFile", "ffi.Module.load_from_file.so"};
  long points = 0;
  for (int g = 0; g < 2; ++g) {
    TVMFFIObjectHandle fn = mod_global(globals[g]);
    TVMFFIAny args[2] = {core_c_str(path), core_c_str("so")}, r;
    for (int sticky = 0; sticky < 2; ++sticky) {
      ConfAllocWalk w = conf_alloc_walk(sticky);
      while (conf_alloc_next(&w)) {
        int rc = mod_armed_call(&w, fn, args, g + 1, &r);
        if (rc != 0) {
          mod_expect_oom_refusal(&w, globals[g], rc, path);
          continue;
        }
        mod_expect_module_with(&w, globals[g], &r, "add_one");
      }
      points += w.points;
    }
    cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, g + 1, &r), 0, "%s fails after the walk",
                 globals[g]);
    core_release(&r);
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

/* Calls global `g` (borrowed) and releases what it returns; 0 or 1 on a
 * failure. No cr_ calls: they allocate. */
static int quiet_call(TVMFFIObjectHandle g, TVMFFIAny* args, int32_t n) {
  TVMFFIAny r = core_none();
  int rc = conf_api.TVMFFIFunctionCall(g, args, n, &r);
  if (rc == 0 && r.type_index >= kTVMFFIStaticObjectBegin && r.v_obj)
    conf_api.TVMFFIObjectDecRef(r.v_obj);
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
  TVMFFIAny path = core_c_str(g->basic), r;
  TVMFFIObjectHandle basic = NULL, other = NULL, third = NULL;
  r = core_none();
  if (conf_api.TVMFFIFunctionCall(g->load, &path, 1, &r) == 0) basic = r.v_obj;
  path = core_c_str(g->other);
  r = core_none();
  if (conf_api.TVMFFIFunctionCall(g->load, &path, 1, &r) == 0) other = r.v_obj;
  r = core_none();
  if (conf_api.TVMFFIFunctionCall(g->load, &path, 1, &r) == 0) third = r.v_obj;
  if (!basic || !other || !third) return 1;
  TVMFFIAny pair[2] = {core_obj(basic), core_obj(other)};
  bad += quiet_call(g->import, pair, 2);
  TVMFFIAny onto_third[2] = {core_obj(third), core_obj(basic)}; /* walks basic's imports */
  bad += quiet_call(g->import, onto_third, 2);
  TVMFFIAny lookup[3] = {core_obj(third), core_c_str("other_fn"), core_bool(1)};
  bad += quiet_call(g->get, lookup, 3);
  bad += quiet_call(g->doc, lookup, 3);
  lookup[0] = core_obj(basic);
  TVMFFIAny ctx_fn = core_none();
  lookup[1] = core_c_str("get_ctx");
  if (conf_api.TVMFFIFunctionCall(g->get, lookup, 3, &ctx_fn) != 0) return bad + 1;
  TVMFFIAny ctx = core_none();
  bad += conf_api.TVMFFIFunctionCall(ctx_fn.v_obj, NULL, 0, &ctx) != 0;
  conf_api.TVMFFIObjectDecRef(ctx_fn.v_obj);
  TVMFFIObjectHandle found = NULL; /* borrowed from basic's cache */
  bad += conf_api.TVMFFIEnvModLookupFromImports(ctx.v_ptr, "other_fn", &found) != 0;
  bad += conf_api.TVMFFIEnvModLookupFromImports(ctx.v_ptr, "which", &found) != 0;
  /* A system library's function by its name and by its prefixed name. */
  TVMFFIAny sys[3] = {core_obj(g->syslib), core_c_str("f"), core_bool(0)};
  bad += quiet_call(g->get, sys, 3);
  sys[1] = core_c_str("conf115_f");
  bad += quiet_call(g->get, sys, 3);
  TVMFFIAny one = core_obj(other);
  bad += quiet_call(g->add, &one, 1);
  bad += quiet_call(g->remove, &one, 1);
  one = core_obj(third);
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
TEST(module_oom, MOD_115_module_work_gives_memory_back) {
  conf_alloc_require(); /* glibc owns the heap: no sanitizer, no valgrind */
  enum { kRounds = 100 };
  TVMFFIObjectHandle keep_basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle keep_other = mod_load("libmod_other.so");
  Mod115Globals g = {mod_global("ffi.ModuleLoadFromFile"),   mod_global("ffi.ModuleGetFunction"),
                     mod_global("ffi.ModuleGetFunctionDoc"), mod_global("ffi.ModuleImportModule"),
                     mod_global("ffi.ModuleClearImports"),   mod_global("ffi.ModuleGlobalsAdd"),
                     mod_global("ffi.ModuleGlobalsRemove"),  NULL,
                     mod_lib_path("libmod_basic.so"),        mod_lib_path("libmod_other.so")};
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf115_f", (void*)sys_answer),
               0);
  TVMFFIAny prefix = core_c_str("conf115_"), r;
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
  TVMFFIObjectHandle* all[] = {&g.load, &g.get,    &g.doc,    &g.import,   &g.clear,
                               &g.add,  &g.remove, &g.syslib, &keep_other, &keep_basic};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) API(TVMFFIObjectDecRef)(*all[i]);
}

/* MOD-119: the other ffi.Module* globals with any allocation failing give
 * their result (of the type they give with memory to spare) or -1 with
 * MemoryError. */
TEST(module_oom, MOD_119_module_queries_out_of_memory) {
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
  TVMFFIAny args[3] = {core_obj(mod), core_c_str("add_one"), core_bool(0)}, r;
  long points = 0;
  for (size_t c = 0; c < sizeof calls / sizeof calls[0]; ++c) {
    TVMFFIObjectHandle fn = mod_global(calls[c].fn);
    EXPECT_OK(mod_call_fn(fn, args, calls[c].n, &r));
    int32_t want = r.type_index == kTVMFFISmallStr ? kTVMFFIStr : r.type_index;
    core_release(&r);
    for (int sticky = 0; sticky < 2; ++sticky) {
      ConfAllocWalk w = conf_alloc_walk(sticky);
      while (conf_alloc_next(&w)) {
        int rc = mod_armed_call(&w, fn, args, calls[c].n, &r);
        if (rc != 0) {
          mod_expect_oom_refusal(&w, calls[c].fn, rc, NULL);
          continue;
        }
        int32_t got = r.type_index == kTVMFFISmallStr ? kTVMFFIStr : r.type_index;
        core_release(&r);
        cr_assert_eq(got, want, "%s, allocation %ld failed: type index %d, not %d", calls[c].fn,
                     w.n, got, want);
        ConfError err = conf_take_error();
        cr_assert_eq(err.kind[0], '\0', "%s, allocation %ld failed: 0 with %s raised", calls[c].fn,
                     w.n, err.kind);
      }
      points += w.points;
    }
    API(TVMFFIObjectDecRef)(fn);
  }
  API(TVMFFIObjectDecRef)(mod);
  conf_alloc_done(points, "ffi.ModuleGetWriteFormats");
}

/* Calls fn(args) with its k-th allocation failing, the result and any
 * error released; 1 when an allocation was made to fail. No cr_ calls. */
static int fail_kth(TVMFFIObjectHandle fn, TVMFFIAny* args, int32_t n, long k, int* rc) {
  TVMFFIAny r = core_none();
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
static long walk_failed_calls_keep_nothing(const char* what, TVMFFIObjectHandle fn, TVMFFIAny* args,
                                           int32_t n) {
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
TEST(module_oom, MOD_124_failed_loads_keep_nothing) {
  conf_alloc_require();
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf124_f", (void*)sys_answer),
               0);
  TVMFFIObjectHandle keep = mod_load("libmod_basic.so");
  TVMFFIObjectHandle sys = mod_global("ffi.SystemLib");
  TVMFFIObjectHandle load = mod_global("ffi.ModuleLoadFromFile");
  TVMFFIAny prefix = core_c_str("conf124_"), path = core_c_str(mod_lib_path("libmod_basic.so"));
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
TEST(module_oom, MOD_043_sibling_imports_out_of_memory) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
  void* ctx = mod_library_ctx(basic);
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
        mod_expect_oom_refusal(&w, "TVMFFIEnvModLookupFromImports", rc, NULL);
        continue;
      }
      ConfError err = conf_take_error();
      cr_expect_eq(err.kind[0], '\0', "allocation %ld failed: 0 with %s raised", w.n, err.kind);
      cr_assert_not_null(fn, "allocation %ld failed: 0 but no function", w.n);
      cr_assert_eq(mod_call_int(fn, NULL, 0), 1,
                   "allocation %ld failed: the second import's "
                   "function was returned",
                   w.n);
      found = 1; /* now kept by the module: later lookups allocate nothing */
    }
    points += w.points;
    if (!sticky) { /* a fresh module for the sticky walk: nothing kept */
      mod_clear_imports(basic);
      API(TVMFFIObjectDecRef)(basic);
      basic = mod_load("libmod_basic.so");
      EXPECT_OK(mod_import(basic, other));
      EXPECT_OK(mod_import(basic, third));
      ctx = mod_library_ctx(basic);
    }
  }
  mod_release3(third, other, basic);
  conf_alloc_done(points, "TVMFFIEnvModLookupFromImports");
}

/* MOD-042 (a module with imports): importing mid, which imports leaf,
 * into top with any allocation failing imports it with nothing left
 * raised, or returns -1 with MemoryError leaving top's imports as they
 * were. The cycle check has a graph to walk here. */
TEST(module_oom, MOD_042_import_of_importer_out_of_memory) {
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    TVMFFIObjectHandle leaf = mod_load("libmod_other.so");
    TVMFFIObjectHandle mid = mod_load("libmod_basic.so");
    TVMFFIObjectHandle top = mod_load("libmod_basic.so");
    TVMFFIAny a[2] = {core_obj(mid), core_obj(leaf)}, r;
    EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
    TVMFFIObjectHandle fn = mod_global("ffi.ModuleImportModule");
    a[0] = core_obj(top);
    a[1] = core_obj(mid);
    ConfAllocWalk w = conf_alloc_walk(sticky);
    int imported = 0;
    while (!imported && conf_alloc_next(&w)) {
      int rc = mod_armed_call(&w, fn, a, 2, &r);
      if (rc != 0) {
        mod_expect_oom_refusal(&w, "ffi.ModuleImportModule", rc, NULL);
        cr_assert_eq(mod_implements(top, "other_fn", 1), 0,
                     "allocation %ld failed: -1, but the import was kept", w.n);
        continue;
      }
      ConfError err = conf_take_error();
      cr_assert_eq(err.kind[0], '\0', "allocation %ld failed: 0 with %s raised: %s", w.n, err.kind,
                   err.message);
      cr_assert_eq(mod_implements(top, "other_fn", 1), 1,
                   "allocation %ld failed: 0, but leaf is not reached from top", w.n);
      imported = 1;
    }
    points += w.points;
    API(TVMFFIObjectDecRef)(fn);
    TVMFFIAny c = core_obj(top);
    EXPECT_OK(mod_call("ffi.ModuleClearImports", &c, 1, &r));
    TVMFFIObjectHandle* all[] = {&top, &mid, &leaf};
    for (int i = 0; i < 3; ++i) API(TVMFFIObjectDecRef)(*all[i]);
  }
  conf_alloc_done(points, "ffi.ModuleImportModule");
}

/* After a step that returned nonzero: it returned -1, the one error code
 * of a raised error, and the error raised is a MemoryError. */
static void expect_memory_error(const ConfAllocWalk* w, const char* what, int rc) {
  cr_assert_eq(rc, -1, "%s, allocation %ld failed: returned %d, not -1", what, w->n, rc);
  ConfError err = conf_take_error();
  cr_assert_str_eq(err.kind, "MemoryError", "%s, allocation %ld failed: raised %s: %s", what, w->n,
                   err.kind[0] ? err.kind : "nothing", err.message);
}

static void load_pair(TVMFFIObjectHandle* basic, TVMFFIObjectHandle* other) {
  *basic = mod_load("libmod_basic.so");
  *other = mod_load("libmod_other.so");
  TVMFFIAny a[2] = {core_obj(*basic), core_obj(*other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
}

/* A lookup of `name` in `mod` (query_imports true), walked: a Function (a
 * str for the doc query) or a MemoryError, never None. */
static long walk_lookup_in(TVMFFIObjectHandle mod, const char* name, const char* global, int sticky,
                           int32_t want_type) {
  TVMFFIObjectHandle fn = mod_global(global);
  TVMFFIAny args[3] = {core_obj(mod), core_c_str(name), core_bool(1)}, r;
  ConfAllocWalk w = conf_alloc_walk(sticky);
  while (conf_alloc_next(&w)) {
    int rc = mod_armed_call(&w, fn, args, 3, &r);
    if (rc != 0) {
      expect_memory_error(&w, global, rc);
      continue;
    }
    int32_t got = r.type_index;
    core_release(&r);
    cr_assert(got == want_type || (want_type == kTVMFFIStr && got == kTVMFFISmallStr),
              "%s(%s), allocation %ld failed: returned type index %d (out of memory read as "
              "not found?)",
              global, name, w.n, got);
  }
  cr_assert_eq(API(TVMFFIFunctionCall)(fn, args, 3, &r), 0, "%s fails after the walk", global);
  core_release(&r);
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

/* MOD-041: ffi.ModuleGetFunction, ffi.ModuleImplementsFunction and
 * ffi.ModuleGetFunctionDoc through imports, and ffi.ModuleGetFunction of a
 * system library, with any allocation failing, return the function (true,
 * the doc) or -1 with MemoryError. */
TEST(module_oom, MOD_041_lookups_out_of_memory) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf41_f", (void*)sys_answer),
               0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf41_g", (void*)sys_answer),
               0);
  TVMFFIAny prefix = core_c_str("conf41_"), r;
  EXPECT_OK(mod_call("ffi.SystemLib", &prefix, 1, &r));
  TVMFFIObjectHandle syslib = r.v_obj;
  long points = 0;
  for (int sticky = 0; sticky < 2; ++sticky) {
    points += walk_lookup("ffi.ModuleGetFunction", sticky, kTVMFFIFunction);
    points += walk_lookup("ffi.ModuleImplementsFunction", sticky, kTVMFFIBool);
    points += walk_lookup("ffi.ModuleGetFunctionDoc", sticky, kTVMFFIStr);
    points += walk_lookup_in(syslib, "f", "ffi.ModuleGetFunction", sticky, kTVMFFIFunction);
    points += walk_lookup_in(syslib, "conf41_g", "ffi.ModuleGetFunction", sticky, kTVMFFIFunction);
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
    TVMFFIAny args[2] = {core_obj(basic), core_obj(other)}, r;
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      int rc = mod_armed_call(&w, fn, args, 2, &r);
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
  TVMFFIAny a = core_obj(mod), r;
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
      TVMFFIAny a[2] = {core_obj(m[i]), core_obj(m[i + 1])};
      cr_assert_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), 0, "link %d", i);
    }
    /* The last importing the first closes the chain into a cycle. */
    TVMFFIObjectHandle fn = mod_global("ffi.ModuleImportModule");
    TVMFFIAny closing[2] = {core_obj(m[kChain - 1]), core_obj(m[0])};
    ConfAllocWalk w = conf_alloc_walk(sticky);
    while (conf_alloc_next(&w)) {
      int rc = mod_armed_call(&w, fn, closing, 2, &r);
      cr_assert_eq(rc, -1, "allocation %ld failed: the cyclic import returned %d", w.n, rc);
      ConfError err = conf_take_error();
      cr_assert(strcmp(err.kind, "MemoryError") == 0 || strcmp(err.kind, "RuntimeError") == 0,
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
  void* ctx = mod_library_ctx(basic);
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
      TVMFFIAny a = core_c_str(prefix), r;
      int rc = mod_armed_call(&w, fn, &a, 1, &r);
      if (rc != 0) {
        expect_memory_error(&w, "ffi.SystemLib", rc);
        core_release(&a);
        continue;
      }
      ConfError err =
          conf_take_error(); /* a 0 leaves nothing raised: no failure swallowed on the way */
      cr_expect_eq(err.kind[0], '\0', "allocation %ld failed: 0 with %s raised: %s", w.n, err.kind,
                   err.message);
      int32_t got = r.type_index;
      int found = -1;
      if (got == kTVMFFIModule && r.v_obj != NULL) found = mod_implements(r.v_obj, "conf81_f", 0);
      core_release(&r);
      core_release(&a);
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
  TVMFFIAny a = core_obj(mod), r;
  ConfAllocWalk w = conf_alloc_walk(0);
  int pinned = 0;
  while (!pinned && conf_alloc_next(&w)) {
    int rc = mod_armed_call(&w, fn, &a, 1, &r);
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
      TVMFFIAny a = core_c_str(prefix), r;
      int rc = mod_armed_call(&w, fn, &a, 1, &r);
      if (rc != 0) {
        expect_memory_error(&w, "ffi.SystemLib", rc);
        continue;
      }
      int32_t got = r.type_index;
      int found = -1;
      if (got == kTVMFFIModule && r.v_obj != NULL) found = mod_implements(r.v_obj, "other_fn", 1);
      core_release(&r);
      cr_assert_eq(got, kTVMFFIModule, "allocation %ld failed: 0 with type index %d", w.n, got);
      cr_assert_eq(found, 1, "allocation %ld failed: the _libx module is not imported", w.n);
    }
    points += w.points;
  }
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod_premade_module);
  conf_alloc_done(points, "ffi.SystemLib");
}
