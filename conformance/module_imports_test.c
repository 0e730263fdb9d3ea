/* Clauses of spec/modules.md on imports (## Imports): ffi.ModuleImportModule
 * and ffi.ModuleClearImports, the cycle check, what an importer holds, and
 * TVMFFIEnvModLookupFromImports called from inside a library. */
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>

#include "alloc_fail.h"
#include "core_support.h"
#include "module_support.h"

/* MOD-015: ImportModule adds, ClearImports removes. */
TEST(module_imports, MOD_015_import_and_clear) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
  cr_expect_eq(mod_implements(basic, "third_fn", 1), 1);
  TVMFFIAny a = core_obj(basic), r;
  EXPECT_OK(mod_call("ffi.ModuleClearImports", &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone);
  cr_expect_eq(mod_implements(basic, "third_fn", 1), 0);
  cr_expect_eq(mod_implements(basic, "other_fn", 1), 0);
  cr_expect_eq(mod_implements(basic, "add_one", 1), 1);
  mod_release3(basic, other, third);
}

/* MOD-016: a cycle (including importing oneself) is refused with
 * RuntimeError and changes nothing. */
TEST(module_imports, MOD_016_import_cycle_refused) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
  TVMFFIAny a[2] = {core_obj(basic), core_obj(basic)}, r;
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  a[0] = core_obj(third); /* basic -> third already: third -> basic closes it */
  a[1] = core_obj(basic);
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError");
  cr_expect_eq(mod_implements(third, "add_one", 1), 0, "the refused import was kept");
  /* Clearing breaks what would otherwise be a reference cycle on exit. */
  a[0] = core_obj(basic);
  mod_call("ffi.ModuleClearImports", a, 1, &r);
  mod_release3(basic, other, third);
}

/* MOD-021: LookupFromImports from inside the library finds the imports'
 * functions, with the same handle each time. */
TEST(module_imports, MOD_021_lookup_from_imports) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  TVMFFIAny arg = core_c_str("third_fn");
  cr_expect_eq(mod_call_int(call, &arg, 1), 43);
  arg = core_c_str("other_fn");
  cr_expect_eq(mod_call_int(call, &arg, 1), 42);
  TVMFFIObjectHandle twice = mod_get_function(basic, "lookup_twice", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFIOpaquePtr);
  cr_expect_not_null(r.v_ptr);
  API(TVMFFIObjectDecRef)(twice);
  API(TVMFFIObjectDecRef)(call);
  mod_release3(basic, other, third);
}

static int mod022_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 2222;
  return 0;
}

/* MOD-022: the global registry is the fallback. */
TEST(module_imports, MOD_022_lookup_falls_back_to_globals) {
  mod_register_global("conf_test.mod022", mod022_global);
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  TVMFFIAny arg = core_c_str("conf_test.mod022");
  cr_expect_eq(mod_call_int(call, &arg, 1), 2222);
  API(TVMFFIObjectDecRef)(call);
  mod_release3(basic, other, third);
}

/* MOD-023: nothing found: -1 and RuntimeError naming the function. */
TEST(module_imports, MOD_023_lookup_missing_is_runtime_error) {
  TVMFFIObjectHandle basic, other, third;
  mod_load_tree(&basic, &other, &third);
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  TVMFFIAny arg = core_c_str("conf_no_function_has_this_name"), r;
  cr_expect_eq(mod_call_fn(call, &arg, 1, &r), -1);
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"conf_no_function_has_this_name"});
  API(TVMFFIObjectDecRef)(call);
  mod_release3(basic, other, third);
}

/* MOD-030 (siblings): of two imports that both have the name, the first
 * one's function is what TVMFFIEnvModLookupFromImports returns. */
TEST(module_imports, MOD_030_first_sibling_import_wins) {
  TVMFFIObjectHandle basic, other, third; /* other's which: 1, third's: 2 */
  mod_load_tree(&basic, &other, &third);
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIEnvModLookupFromImports)(mod_library_ctx(basic), "which", &fn), 0,
               "not found");
  TVMFFIAny r;
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1, "the second import's function was returned");
  TVMFFIAny q[3] = {core_obj(basic), core_c_str("which"), core_bool(1)};
  EXPECT_OK(mod_call("ffi.ModuleGetFunction", q, 3, &r));
  cr_expect_eq(mod_call_int(r.v_obj, NULL, 0), 1, "ffi.ModuleGetFunction took the second import");
  core_release(&r);
  mod_release3(third, other, basic);
}

/* MOD-034 (kept): once a name was found, looking it up again through the
 * same module gives the kept handle without allocating: it succeeds with
 * every allocation failing. */
TEST(module_imports, MOD_034_found_name_needs_no_memory) {
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle other = mod_load("libmod_other.so");
  TVMFFIAny a[2] = {core_obj(basic), core_obj(other)}, r;
  EXPECT_OK(mod_call("ffi.ModuleImportModule", a, 2, &r));
  void* ctx = mod_library_ctx(basic);
  TVMFFIObjectHandle first = NULL, again = NULL;
  cr_assert_eq(API(TVMFFIEnvModLookupFromImports)(ctx, "which", &first), 0);
  conf_alloc_require();
  conf_alloc_fail_from(0);
  int rc = conf_api.TVMFFIEnvModLookupFromImports(ctx, "which", &again);
  long failed = conf_alloc_off();
  cr_expect_eq(rc, 0, "the second lookup failed (%ld allocations were refused)", failed);
  cr_expect_eq(again, first, "the second lookup gave another handle");
  API(TVMFFIObjectDecRef)(other);
  API(TVMFFIObjectDecRef)(basic);
}

/* MOD-027: a module holds its imports, and the functions
 * TVMFFIEnvModLookupFromImports found through them, only as long as it
 * lives: releasing it lets the imported library go. */
TEST(module_imports, MOD_027_release_drops_imports) {
  const char* other_path = mod_lib_path("libmod_other.so");
  const char* third_path = mod_lib_path("libmod_third.so");
  cr_assert(!mod_is_loaded(other_path) && !mod_is_loaded(third_path));
  TVMFFIObjectHandle m[3] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so"),
                             mod_load("libmod_third.so")};
  EXPECT_OK(mod_import(m[0], m[1]));
  EXPECT_OK(mod_import(m[0], m[2]));
  TVMFFIAny r;
  EXPECT_OK(mod_lookup_call(m[0], "other_fn", &r));
  cr_expect_eq(r.v_int64, 42);
  /* A second function found, from the second import: both are held. */
  EXPECT_OK(mod_lookup_call(m[0], "third_fn", &r));
  cr_expect_eq(r.v_int64, 43);
  mod_release_all(&m[1], 2);
  cr_expect(mod_is_loaded(other_path), "an imported library was unloaded while imported");
  cr_expect(mod_is_loaded(third_path), "an imported library was unloaded while imported");
  /* Still reachable from the importer after the host let go. */
  cr_expect_eq(mod_implements(m[0], "third_fn", 1), 1);
  API(TVMFFIObjectDecRef)(m[0]);
  cr_expect(!mod_is_loaded(other_path), "libmod_other.so stays loaded after its importer went");
  cr_expect(!mod_is_loaded(third_path), "libmod_third.so stays loaded after its importer went");
}

static void expect_cycle_refused(TVMFFIObjectHandle mod, TVMFFIObjectHandle other) {
  cr_expect_eq(mod_import(mod, other), -1, "a cyclic import was accepted");
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, "RuntimeError");
  cr_expect(strcasestr(err.message, "cyclic dependency") != NULL, "message: %s", err.message);
}

/* MOD-029: a cycle through any number of imports is refused with a
 * RuntimeError saying so; shared imports (a diamond) are not a cycle. */
TEST(module_imports, MOD_029_cycles_and_diamonds) {
  TVMFFIObjectHandle m[3] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so"),
                             mod_load("libmod_third.so")};
  /* basic -> other -> third, and basic -> third directly: a diamond. */
  EXPECT_OK(mod_import(m[1], m[2]));
  EXPECT_OK(mod_import(m[0], m[1]));
  EXPECT_OK(mod_import(m[0], m[2]));
  expect_cycle_refused(m[2], m[0]); /* two levels down */
  expect_cycle_refused(m[2], m[1]);
  expect_cycle_refused(m[1], m[0]);
  expect_cycle_refused(m[2], m[2]);
  cr_expect_eq(mod_implements(m[2], "add_one", 1), 0, "a refused import was kept");
  cr_expect_eq(mod_implements(m[1], "add_one", 1), 0, "a refused import was kept");
  /* The same import twice is no cycle either. */
  EXPECT_OK(mod_import(m[0], m[1]));
  TVMFFIObjectHandle fn = mod_get_function(m[0], "which", 1);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1, "imports were not searched in import order");
  API(TVMFFIObjectDecRef)(fn);
  /* A second module of libmod_basic.so importing the first: the check walks
   * the diamond below it and meets third twice. */
  TVMFFIObjectHandle top = mod_load("libmod_basic.so");
  EXPECT_OK(mod_import(top, m[0]));
  cr_expect_eq(mod_implements(top, "third_fn", 1), 1);
  API(TVMFFIObjectDecRef)(top);
  mod_release_all(m, 3);
  /* Nothing the walks touched keeps a reference. */
  cr_expect(!mod_is_loaded(mod_lib_path("libmod_third.so")), "libmod_third.so is still loaded");
  cr_expect(!mod_is_loaded(mod_lib_path("libmod_other.so")), "libmod_other.so is still loaded");
  cr_expect(!mod_is_loaded(mod_lib_path("libmod_basic.so")), "libmod_basic.so is still loaded");
}

/* MOD-126: the refusal of a cycle names the function before the reason. */
TEST(module_imports, MOD_126_cycle_refusal_names_function) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(mod_import(m[0], m[1]));
  TVMFFIObjectHandle pairs[][2] = {{m[1], m[0]}, {m[0], m[0]}};
  for (int i = 0; i < 2; ++i) {
    cr_expect_eq(mod_import(pairs[i][0], pairs[i][1]), -1, "a cyclic import was accepted");
    ConfError err = conf_take_error();
    const char* fn = strstr(err.message, "ffi.ModuleImportModule");
    const char* why = strcasestr(err.message, "cyclic dependency");
    cr_expect(fn != NULL && why != NULL && fn < why,
              "the message does not name ffi.ModuleImportModule, then the cyclic dependency: %s",
              err.message);
  }
  mod_release_all(m, 2);
}

/* MOD-030: TVMFFIEnvModLookupFromImports searches the imports, not the
 * module itself, in import order, and each import depth first. */
TEST(module_imports, MOD_030_lookup_searches_imports_only) {
  TVMFFIObjectHandle m[3] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so"),
                             mod_load("libmod_third.so")};
  TVMFFIAny r;
  cr_expect_eq(mod_lookup_call(m[0], "which", &r), -1, "found with no imports at all");
  EXPECT_RAISED(.kind = "RuntimeError");
  EXPECT_OK(mod_import(m[1], m[2]));
  EXPECT_OK(mod_import(m[0], m[1]));
  cr_expect_eq(mod_lookup_call(m[0], "add_one", &r), -1, "the module's own function was returned");
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"add_one"});
  EXPECT_OK(mod_lookup_call(m[0], "third_fn", &r));
  cr_expect_eq(r.v_int64, 43, "an import's own import was not searched");
  EXPECT_OK(mod_lookup_call(m[0], "which", &r));
  cr_expect_eq(r.v_int64, 1, "the first import (depth first) must win");
  mod_clear_imports(m[0]);
  mod_clear_imports(m[1]);
  mod_release_all(m, 3);
}

/* MOD-034: TVMFFIEnvModLookupFromImports gives one handle per name: the
 * same one again for a name, different ones for different names. */
TEST(module_imports, MOD_034_lookup_handles_are_kept) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(mod_import(m[0], m[1]));
  TVMFFIObjectHandle twice = mod_get_function(m[0], "lookup_twice", 0);
  TVMFFIAny arg = core_c_str("other_fn"), r1, r2;
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r1));
  arg = core_c_str("which");
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r2));
  cr_expect_neq(r1.v_ptr, r2.v_ptr, "two names gave one handle");
  arg = core_c_str("other_fn");
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r2));
  cr_expect_eq(r1.v_ptr, r2.v_ptr, "a later lookup gave another handle");
  API(TVMFFIObjectDecRef)(twice);
  mod_release_all(m, 2);
}

typedef struct {
  pthread_barrier_t* gate;
  void* ctx;
  TVMFFIObjectHandle out;
  int rc;
} Racer;

static void* race_lookup(void* arg) {
  Racer* r = arg;
  pthread_barrier_wait(r->gate);
  r->rc = conf_api.TVMFFIEnvModLookupFromImports(r->ctx, "other_fn", &r->out);
  return NULL;
}

/* MOD-095: lookups of one name racing through a fresh module all get the
 * handle the first one kept. */
TEST(module_imports, MOD_095_concurrent_lookups_share_one_handle) {
  enum { kRacers = 8, kRounds = 100 };
  int rounds = core_stress_rounds(kRounds);
  for (int round = 0; round < rounds; ++round) {
    TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
    EXPECT_OK(mod_import(m[0], m[1]));
    void* ctx = mod_library_ctx(m[0]);
    pthread_barrier_t gate;
    cr_assert_eq(pthread_barrier_init(&gate, NULL, kRacers), 0);
    Racer racers[kRacers];
    pthread_t threads[kRacers];
    for (int i = 0; i < kRacers; ++i) {
      racers[i] = (Racer){&gate, ctx, NULL, -9};
      cr_assert_eq(pthread_create(&threads[i], NULL, race_lookup, &racers[i]), 0);
    }
    for (int i = 0; i < kRacers; ++i) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&gate);
    for (int i = 0; i < kRacers; ++i) {
      cr_assert_eq(racers[i].rc, 0, "round %d, thread %d: returned %d", round, i, racers[i].rc);
      cr_assert_eq(racers[i].out, racers[0].out,
                   "round %d: threads 0 and %d got different handles for one name", round, i);
    }
    mod_release_all(m, 2);
  }
}

/* MOD-040: TVMFFIEnvModLookupFromImports refuses a NULL out (ValueError
 * naming out), a context that is not a module (TypeError naming
 * library_ctx) and a NULL name (ValueError naming func_name). */
TEST(module_imports, MOD_040_lookup_argument_errors) {
  HOSTILE_INPUT("upstream dereferences each argument unchecked");
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  void* ctx = mod_library_ctx(mod);
  TVMFFIObjectHandle out = (void*)1;
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(ctx, "x", NULL), -1);
  EXPECT_RAISED(.kind = "ValueError", .api = "TVMFFIEnvModLookupFromImports", .arg = "out");
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(ctx, NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"func_name"});
  TVMFFIObjectHandle not_module = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, mod_answer_7, NULL, &not_module), 0);
  out = (void*)1;
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(not_module, "x", &out), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"library_ctx", "Module"});
  cr_expect_null(out);
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(NULL, "x", &out), -1);
  EXPECT_RAISED(.says = {"library_ctx"});
  API(TVMFFIObjectDecRef)(not_module);
  API(TVMFFIObjectDecRef)(mod);
}

enum { LEVELS = 30 };

/* MOD-050: the cycle check of ffi.ModuleImportModule visits each module
 * once: imports forming 30 levels of diamonds (2^30 paths from the top)
 * are checked as quickly as a chain. */
TEST(module_imports, MOD_050_cycle_check_visits_each_module_once) {
  TVMFFIObjectHandle a[LEVELS + 1], b[LEVELS + 1];
  for (int i = LEVELS; i >= 0; --i) {
    a[i] = mod_load("libmod_other.so");
    b[i] = mod_load("libmod_other.so");
    if (i == LEVELS) continue;
    TVMFFIObjectHandle below[2] = {a[i + 1], b[i + 1]};
    for (int k = 0; k < 2; ++k) {
      EXPECT_OK(mod_import(a[i], below[k]));
      EXPECT_OK(mod_import(b[i], below[k]));
    }
  }
  TVMFFIObjectHandle top = mod_load("libmod_basic.so");
  EXPECT_OK(mod_import(top, a[0]));
  EXPECT_OK(mod_import(top, b[0]));
  expect_cycle_refused(b[LEVELS], top);
  cr_expect_eq(mod_implements(top, "other_fn", 1), 1);
  mod_clear_imports(top);
  for (int i = 0; i <= LEVELS; ++i) {
    mod_clear_imports(a[i]);
    mod_clear_imports(b[i]);
  }
  mod_release_all(a, LEVELS + 1);
  mod_release_all(b, LEVELS + 1);
  API(TVMFFIObjectDecRef)(top);
}
