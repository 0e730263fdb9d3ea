/* Clauses of spec/modules.md on how modules are wired together and handed
 * out: what releasing a module releases, imports and their cycle check,
 * the ffi.Module* globals' argument errors, host loaders, pinned modules,
 * the system library's context symbol and re-registered symbols. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <strings.h>

#include "core_support.h"
#include "module_support.h"

static void release_all(TVMFFIObjectHandle* mods, int n) {
  for (int i = 0; i < n; ++i)
    if (mods[i]) API(TVMFFIObjectDecRef)(mods[i]);
}

static int import_module(TVMFFIObjectHandle mod, TVMFFIObjectHandle other) {
  TVMFFIAny a[2] = {mod_obj(mod), mod_obj(other)}, r;
  return mod_call("ffi.ModuleImportModule", a, 2, &r);
}

static void clear_imports(TVMFFIObjectHandle mod) {
  TVMFFIAny a = mod_obj(mod), r;
  EXPECT_OK(mod_call("ffi.ModuleClearImports", &a, 1, &r));
}

/* Calls libmod_basic's call_import(name): TVMFFIEnvModLookupFromImports from
 * inside the library, then the function found; -1 leaves the error raised. */
static int lookup_call(TVMFFIObjectHandle basic, const char* name, TVMFFIAny* r) {
  TVMFFIObjectHandle call = mod_get_function(basic, "call_import", 0);
  cr_assert_not_null(call);
  TVMFFIAny arg = mod_str(name);
  int rc = mod_call_fn(call, &arg, 1, r);
  API(TVMFFIObjectDecRef)(call);
  return rc;
}

/* MOD-027: a module holds its imports, and the functions
 * TVMFFIEnvModLookupFromImports found through them, only as long as it
 * lives: releasing it lets the imported library go. */
TEST(module_wiring, MOD_027_release_drops_imports) {
  const char* other_path = mod_lib_path("libmod_other.so");
  const char* third_path = mod_lib_path("libmod_third.so");
  cr_assert(!mod_is_loaded(other_path) && !mod_is_loaded(third_path));
  TVMFFIObjectHandle m[3] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so"),
                             mod_load("libmod_third.so")};
  EXPECT_OK(import_module(m[0], m[1]));
  EXPECT_OK(import_module(m[0], m[2]));
  TVMFFIAny r;
  EXPECT_OK(lookup_call(m[0], "other_fn", &r));
  cr_expect_eq(r.v_int64, 42);
  /* A second function found, from the second import: both are held. */
  EXPECT_OK(lookup_call(m[0], "third_fn", &r));
  cr_expect_eq(r.v_int64, 43);
  release_all(&m[1], 2);
  cr_expect(mod_is_loaded(other_path), "an imported library was unloaded while imported");
  cr_expect(mod_is_loaded(third_path), "an imported library was unloaded while imported");
  /* Still reachable from the importer after the host let go. */
  cr_expect_eq(mod_implements(m[0], "third_fn", 1), 1);
  API(TVMFFIObjectDecRef)(m[0]);
  cr_expect(!mod_is_loaded(other_path), "libmod_other.so stays loaded after its importer went");
  cr_expect(!mod_is_loaded(third_path), "libmod_third.so stays loaded after its importer went");
}

static int info_call(const char* global, TVMFFIObjectHandle mod, const char* name, int qi,
                     char* buf, size_t cap) {
  TVMFFIAny args[3] = {mod_obj(mod), mod_str(name), mod_bool(qi)}, r;
  EXPECT_OK(mod_call(global, args, 3, &r));
  if (r.type_index == kTVMFFINone) return 0;
  cr_assert_not_null(mod_take_str(&r, buf, cap), "%s(%s) returned type index %d", global, name,
                     r.type_index);
  return 1;
}

/* MOD-028: metadata and doc queries search imports like
 * ffi.ModuleGetFunction: own first, imports only with query_imports. */
TEST(module_wiring, MOD_028_info_queries_search_imports) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(import_module(m[0], m[1]));
  char buf[256];
  cr_expect_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "other_fn", 0, buf, sizeof buf), 0,
               "an import's doc was found without query_imports");
  cr_assert_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "other_fn", 1, buf, sizeof buf), 1,
               "the import's doc was not found with query_imports");
  cr_expect_str_eq(buf, "other_fn lives in mod_other.");
  cr_assert_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "add_one", 1, buf, sizeof buf), 1);
  cr_expect_str_eq(buf, "Returns its integer argument plus one.");
  cr_assert_eq(info_call("ffi.ModuleGetFunctionMetadata", m[0], "add_one", 1, buf, sizeof buf), 1);
  cr_expect_str_eq(buf, "{\"arg_types\": [\"int\"], \"ret\": \"int\"}");
  EXPECT_OK(info_call("ffi.ModuleGetFunctionMetadata", m[0], "other_fn", 1, buf, sizeof buf));
  EXPECT_OK(info_call("ffi.ModuleGetFunctionDoc", m[0], "nothing_here", 1, buf, sizeof buf));
  clear_imports(m[0]);
  cr_expect_eq(info_call("ffi.ModuleGetFunctionDoc", m[0], "other_fn", 1, buf, sizeof buf), 0,
               "the doc of a cleared import was still found");
  release_all(m, 2);
}

static void expect_cycle_refused(TVMFFIObjectHandle mod, TVMFFIObjectHandle other) {
  cr_expect_eq(import_module(mod, other), -1, "a cyclic import was accepted");
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, "RuntimeError");
  cr_expect(strcasestr(err.message, "cyclic dependency") != NULL, "message: %s",
            err.message);
}

/* MOD-029: a cycle through any number of imports is refused with a
 * RuntimeError saying so; shared imports (a diamond) are not a cycle. */
TEST(module_wiring, MOD_029_cycles_and_diamonds) {
  TVMFFIObjectHandle m[3] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so"),
                             mod_load("libmod_third.so")};
  /* basic -> other -> third, and basic -> third directly: a diamond. */
  EXPECT_OK(import_module(m[1], m[2]));
  EXPECT_OK(import_module(m[0], m[1]));
  EXPECT_OK(import_module(m[0], m[2]));
  expect_cycle_refused(m[2], m[0]); /* two levels down */
  expect_cycle_refused(m[2], m[1]);
  expect_cycle_refused(m[1], m[0]);
  expect_cycle_refused(m[2], m[2]);
  cr_expect_eq(mod_implements(m[2], "add_one", 1), 0, "a refused import was kept");
  cr_expect_eq(mod_implements(m[1], "add_one", 1), 0, "a refused import was kept");
  /* The same import twice is no cycle either. */
  EXPECT_OK(import_module(m[0], m[1]));
  TVMFFIObjectHandle fn = mod_get_function(m[0], "which", 1);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 1, "imports were not searched in import order");
  API(TVMFFIObjectDecRef)(fn);
  /* A second module of libmod_basic.so importing the first: the check walks
   * the diamond below it and meets third twice. */
  TVMFFIObjectHandle top = mod_load("libmod_basic.so");
  EXPECT_OK(import_module(top, m[0]));
  cr_expect_eq(mod_implements(top, "third_fn", 1), 1);
  API(TVMFFIObjectDecRef)(top);
  release_all(m, 3);
  /* Nothing the walks touched keeps a reference. */
  cr_expect(!mod_is_loaded(mod_lib_path("libmod_third.so")), "libmod_third.so is still loaded");
  cr_expect(!mod_is_loaded(mod_lib_path("libmod_other.so")), "libmod_other.so is still loaded");
  cr_expect(!mod_is_loaded(mod_lib_path("libmod_basic.so")), "libmod_basic.so is still loaded");
}

/* MOD-126: the refusal of a cycle names the function before the reason. */
TEST(module_wiring, MOD_126_cycle_refusal_names_function) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(import_module(m[0], m[1]));
  TVMFFIObjectHandle pairs[][2] = {{m[1], m[0]}, {m[0], m[0]}};
  for (int i = 0; i < 2; ++i) {
    cr_expect_eq(import_module(pairs[i][0], pairs[i][1]), -1, "a cyclic import was accepted");
    ConfError err = conf_take_error();
    const char* fn = strstr(err.message, "ffi.ModuleImportModule");
    const char* why = strcasestr(err.message, "cyclic dependency");
    cr_expect(fn != NULL && why != NULL && fn < why,
              "the message does not name ffi.ModuleImportModule, then the cyclic dependency: %s",
              err.message);
  }
  release_all(m, 2);
}

/* MOD-030: TVMFFIEnvModLookupFromImports searches the imports, not the
 * module itself, in import order, and each import depth first. */
TEST(module_wiring, MOD_030_lookup_searches_imports_only) {
  TVMFFIObjectHandle m[3] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so"),
                             mod_load("libmod_third.so")};
  TVMFFIAny r;
  cr_expect_eq(lookup_call(m[0], "which", &r), -1, "found with no imports at all");
  EXPECT_RAISED(.kind = "RuntimeError");
  EXPECT_OK(import_module(m[1], m[2]));
  EXPECT_OK(import_module(m[0], m[1]));
  cr_expect_eq(lookup_call(m[0], "add_one", &r), -1, "the module's own function was returned");
  EXPECT_RAISED(.kind = "RuntimeError", .says = {"add_one"});
  EXPECT_OK(lookup_call(m[0], "third_fn", &r));
  cr_expect_eq(r.v_int64, 43, "an import's own import was not searched");
  EXPECT_OK(lookup_call(m[0], "which", &r));
  cr_expect_eq(r.v_int64, 1, "the first import (depth first) must win");
  clear_imports(m[0]);
  clear_imports(m[1]);
  release_all(m, 3);
}

/* MOD-031: wrong argument counts and types of the ffi.Module* globals are
 * TypeError; a wrong type names its position. */
TEST(module_wiring, MOD_031_argument_errors) {
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny r;
  static const struct {
    const char* fn;
    int32_t want;
  } counts[] = {
      {"ffi.ModuleGetFunction", 3},        {"ffi.ModuleImplementsFunction", 3},
      {"ffi.ModuleGetFunctionMetadata", 3}, {"ffi.ModuleGetFunctionDoc", 3},
      {"ffi.ModuleGetKind", 1},            {"ffi.ModuleGetPropertyMask", 1},
      {"ffi.ModuleInspectSource", 2},      {"ffi.ModuleGetWriteFormats", 1},
      {"ffi.ModuleWriteToFile", 3},        {"ffi.ModuleImportModule", 2},
      {"ffi.ModuleClearImports", 1},       {"ffi.ModuleGlobalsAdd", 1},
      {"ffi.ModuleGlobalsRemove", 1},      {"ffi.ModuleLoadFromFile", 1},
      {"ffi.Module.load_from_file.so", 2},
  };
  TVMFFIAny many[5] = {mod_obj(mod), mod_str("add_one"), mod_bool(0), mod_str("x"),
                       mod_str("y")};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
    int32_t n = counts[i].want + 1;
    cr_expect_eq(mod_call(counts[i].fn, many, n, &r), -1, "%s accepted %d arguments",
                 counts[i].fn, n);
    ConfError err = conf_take_error();
    cr_expect_str_eq(err.kind, "TypeError", "%s with %d arguments", counts[i].fn, n);
    char want[32], got[32];
    snprintf(want, sizeof want, "expected %d", (int)counts[i].want);
    snprintf(got, sizeof got, "got %d", (int)n);
    cr_expect(strcasestr(err.message, want) != NULL && strstr(err.message, got) != NULL,
              "%s: the message does not say %s, %s: %s", counts[i].fn, want, got,
              err.message);
    mod_release(&r);
  }
  /* A wrong type at each position of (mod, name, query_imports). */
  const char* lookups[] = {"ffi.ModuleGetFunction", "ffi.ModuleImplementsFunction",
                           "ffi.ModuleGetFunctionMetadata", "ffi.ModuleGetFunctionDoc"};
  for (int i = 0; i < 4; ++i) {
    TVMFFIAny a[3] = {mod_obj(mod), mod_int(7), mod_bool(0)};
    cr_expect_eq(mod_call(lookups[i], a, 3, &r), -1, "%s accepted an int name", lookups[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
    a[1] = mod_str("add_one");
    a[2] = mod_str("yes");
    cr_expect_eq(mod_call(lookups[i], a, 3, &r), -1, "%s accepted a str flag", lookups[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#2", "bool", lookups[i]});
    /* None is no bool either (only bool and int are). */
    a[2] = (TVMFFIAny){.type_index = kTVMFFINone};
    cr_expect_eq(mod_call(lookups[i], a, 3, &r), -1, "%s accepted a None flag", lookups[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#2"});
  }
  TVMFFIAny a[3] = {mod_obj(mod), mod_int(3), mod_str("so")};
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1", "ffi.Module"});
  cr_expect_eq(mod_call("ffi.ModuleInspectSource", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
  TVMFFIAny no_mod[2] = {mod_int(3), mod_str("so")};
  cr_expect_eq(mod_call("ffi.ModuleInspectSource", no_mod, 2, &r), -1,
               "ffi.ModuleInspectSource accepted an int module");
  EXPECT_RAISED(.kind = "TypeError", .says = {"#0"});
  a[1] = mod_int(1);
  a[2] = mod_str("so");
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
  a[1] = mod_str("/tmp/conf_never_written.so");
  a[2] = mod_int(1);
  cr_expect_eq(mod_call("ffi.ModuleWriteToFile", a, 3, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#2"});
  TVMFFIAny not_mod = mod_int(5);
  const char* pins[] = {"ffi.ModuleGlobalsAdd", "ffi.ModuleGlobalsRemove", "ffi.ModuleGetKind"};
  for (int i = 0; i < 3; ++i) {
    cr_expect_eq(mod_call(pins[i], &not_mod, 1, &r), -1);
    /* The expected type, with or without backquotes around it. */
    ConfError err = conf_take_error();
    cr_expect((strcasestr(err.message, "expected ffi.Module") != NULL ||
               strcasestr(err.message, "expected `ffi.Module`") != NULL) &&
                  strstr(err.message, "#0"),
              "%s: %s", pins[i], err.message);
  }
  TVMFFIAny path = mod_int(1);
  cr_expect_eq(mod_call("ffi.ModuleLoadFromFile", &path, 1, &r), -1);
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_eq(mod_call("ffi.SystemLib", &path, 1, &r), -1, "ffi.SystemLib accepted an int prefix");
  EXPECT_RAISED(.kind = "TypeError");
  API(TVMFFIObjectDecRef)(mod);
}

static int loader_gives_int(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 31;
  return 0;
}

static int loader_fails(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n, (void)result;
  API(TVMFFIErrorSetRaisedFromCStr)("ValueError", "conf loader: this file is corrupt");
  return -1;
}

static void register_global(const char* name, TVMFFISafeCallType call) {
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, call, NULL, &fn), 0);
  TVMFFIByteArray n = {name, strlen(name)};
  cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fn, 1), 0);
  API(TVMFFIObjectDecRef)(fn);
}

/* MOD-032: a host loader's error comes out of ffi.ModuleLoadFromFile
 * unchanged, and a loader that returns something other than a module makes
 * the load fail with TypeError. */
TEST(module_wiring, MOD_032_host_loader_results) {
  register_global("ffi.Module.load_from_file.conffail", loader_fails);
  register_global("ffi.Module.load_from_file.confint", loader_gives_int);
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path("/tmp/x.conffail", &mod), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"conf loader: this file is corrupt"});
  cr_expect_eq(mod_load_path("/tmp/x.confint", &mod), -1, "an int was accepted as a module");
  EXPECT_RAISED(.kind = "TypeError");
  cr_expect_null(mod);
}

static void pin(const char* global, TVMFFIObjectHandle mod) {
  TVMFFIAny a = mod_obj(mod), r;
  EXPECT_OK(mod_call(global, &a, 1, &r));
  cr_expect_eq(r.type_index, kTVMFFINone, "%s returned type index %d", global, r.type_index);
}

/* MOD-033: ffi.ModuleGlobalsAdd of a module already added keeps one
 * entry, which one ffi.ModuleGlobalsRemove drops; removing a module never
 * added returns None and changes nothing; removing one leaves the others. */
TEST(module_wiring, MOD_033_globals_entries) {
  const char* paths[3] = {mod_lib_path("libmod_basic.so"), mod_lib_path("libmod_other.so"),
                          mod_lib_path("libmod_third.so")};
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle other = mod_load("libmod_other.so");
  TVMFFIObjectHandle third = mod_load("libmod_third.so");
  pin("ffi.ModuleGlobalsRemove", other); /* never added */
  pin("ffi.ModuleGlobalsAdd", basic);
  pin("ffi.ModuleGlobalsAdd", other);
  pin("ffi.ModuleGlobalsAdd", other);
  pin("ffi.ModuleGlobalsAdd", third);
  pin("ffi.ModuleGlobalsRemove", other);
  API(TVMFFIObjectDecRef)(other);
  cr_expect(!mod_is_loaded(paths[1]), "a module added twice stayed pinned after one remove");
  pin("ffi.ModuleGlobalsRemove", basic);
  API(TVMFFIObjectDecRef)(basic);
  cr_expect(!mod_is_loaded(paths[0]), "ffi.ModuleGlobalsRemove did not unpin the first entry");
  API(TVMFFIObjectDecRef)(third);
  cr_expect(mod_is_loaded(paths[2]), "removing other modules unpinned this one");
}

/* MOD-034: TVMFFIEnvModLookupFromImports gives one handle per name: the
 * same one again for a name, different ones for different names. */
TEST(module_wiring, MOD_034_lookup_handles_are_kept) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(import_module(m[0], m[1]));
  TVMFFIObjectHandle twice = mod_get_function(m[0], "lookup_twice", 0);
  TVMFFIAny arg = mod_str("other_fn"), r1, r2;
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r1));
  arg = mod_str("which");
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r2));
  cr_expect_neq(r1.v_ptr, r2.v_ptr, "two names gave one handle");
  arg = mod_str("other_fn");
  EXPECT_OK(mod_call_fn(twice, &arg, 1, &r2));
  cr_expect_eq(r1.v_ptr, r2.v_ptr, "a later lookup gave another handle");
  API(TVMFFIObjectDecRef)(twice);
  release_all(m, 2);
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
TEST(module_wiring, MOD_095_concurrent_lookups_share_one_handle) {
  enum { kRacers = 8, kRounds = 100 };
  int rounds = core_stress_rounds(kRounds);
  for (int round = 0; round < rounds; ++round) {
    TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
    EXPECT_OK(import_module(m[0], m[1]));
    TVMFFIObjectHandle get_ctx = mod_get_function(m[0], "get_ctx", 0);
    TVMFFIAny r;
    EXPECT_OK(mod_call_fn(get_ctx, NULL, 0, &r));
    API(TVMFFIObjectDecRef)(get_ctx);
    pthread_barrier_t gate;
    cr_assert_eq(pthread_barrier_init(&gate, NULL, kRacers), 0);
    Racer racers[kRacers];
    pthread_t threads[kRacers];
    for (int i = 0; i < kRacers; ++i) {
      racers[i] = (Racer){&gate, r.v_ptr, NULL, -9};
      cr_assert_eq(pthread_create(&threads[i], NULL, race_lookup, &racers[i]), 0);
    }
    for (int i = 0; i < kRacers; ++i) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&gate);
    for (int i = 0; i < kRacers; ++i) {
      cr_assert_eq(racers[i].rc, 0, "round %d, thread %d: returned %d", round, i, racers[i].rc);
      cr_assert_eq(racers[i].out, racers[0].out,
                   "round %d: threads 0 and %d got different handles for one name", round, i);
    }
    release_all(m, 2);
  }
}

/* MOD-035: a path holding a NUL byte is refused with ValueError; the load
 * never opens the path cut at the NUL. */
TEST(module_wiring, MOD_035_path_with_nul_refused) {
  const char* path = mod_lib_path("libmod_other.so");
  char buf[4200];
  size_t len = (size_t)snprintf(buf, sizeof buf, "%s%cx.so", path, 0);
  TVMFFIByteArray bytes = {buf, len};
  TVMFFIAny arg;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &arg), 0);
  TVMFFIAny args[2] = {arg, mod_str("so")}, r;
  int rc = mod_call("ffi.ModuleLoadFromFile", args, 1, &r);
  mod_release(&r);
  cr_expect_eq(rc, -1, "a path with a NUL byte was loaded");
  EXPECT_RAISED(.kind = "ValueError");
  rc = mod_call("ffi.Module.load_from_file.so", args, 2, &r);
  mod_release(&r);
  cr_expect_eq(rc, -1, "a path with a NUL byte was loaded");
  EXPECT_RAISED(.kind = "ValueError");
  mod_release(&args[0]);
  cr_expect(!mod_is_loaded(path), "the path cut at the NUL was opened");
}

static int sys_answer_7(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 7;
  return 0;
}

static int sys_answer_8(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 8;
  return 0;
}

static int system_lib(const TVMFFIAny* prefix, TVMFFIObjectHandle* mod) {
  TVMFFIAny r;
  *mod = NULL;
  int rc = mod_call("ffi.SystemLib", (TVMFFIAny*)prefix, 1, &r);
  if (rc == 0) {
    cr_assert_eq(r.type_index, kTVMFFIModule, "ffi.SystemLib returned type index %d",
                 r.type_index);
    *mod = r.v_obj;
  }
  return rc;
}

/* MOD-036: ffi.SystemLib of a prefix holding a NUL byte never stands for
 * the prefix cut at the NUL: it fails with ValueError, or gives another
 * module that does not find the cut prefix's symbols. */
TEST(module_wiring, MOD_036_system_prefix_with_nul) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_confnul_f",
                                                          (void*)sys_answer_8), 0);
  TVMFFIAny cut = mod_str("confnul_");
  TVMFFIObjectHandle cut_mod;
  EXPECT_OK(system_lib(&cut, &cut_mod));
  TVMFFIByteArray bytes = {"confnul_\0x", 10};
  TVMFFIAny prefix;
  cr_assert_eq(API(TVMFFIStringFromByteArray)(&bytes, &prefix), 0);
  TVMFFIObjectHandle mod;
  int rc = system_lib(&prefix, &mod);
  mod_release(&prefix);
  if (rc != 0) {
    EXPECT_RAISED(.kind = "ValueError");
  } else {
    cr_expect_neq(mod, cut_mod, "the prefix was cut at the NUL");
    cr_expect_null(mod_get_function(mod, "f", 0), "the prefix was cut at the NUL");
    API(TVMFFIObjectDecRef)(mod);
  }
  API(TVMFFIObjectDecRef)(cut_mod);
}

static void* mod037_ctx;

static int mod037_global(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 3737;
  return 0;
}

/* MOD-037: a system library's `<prefix>__tvm_ffi__library_ctx` symbol, the
 * address of a pointer variable, is set by ffi.SystemLib(prefix) to a
 * value TVMFFIEnvModLookupFromImports accepts. */
TEST(module_wiring, MOD_037_system_lib_context) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("conf37___tvm_ffi__library_ctx",
                                                          &mod037_ctx), 0);
  register_global("conf_test.mod037", mod037_global);
  TVMFFIAny prefix = mod_str("conf37_");
  TVMFFIObjectHandle mod;
  EXPECT_OK(system_lib(&prefix, &mod));
  cr_assert_not_null(mod037_ctx, "the system library's context was not set");
  TVMFFIObjectHandle fn = NULL;
  cr_assert_eq(API(TVMFFIEnvModLookupFromImports)(mod037_ctx, "conf_test.mod037", &fn), 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 3737);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-038: registering a system-library symbol again replaces it: the
 * later pointer is the one a system library finds. */
TEST(module_wiring, MOD_038_system_symbol_replaced) {
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod038",
                                                          (void*)sys_answer_7), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)("__tvm_ffi_conf_mod038",
                                                          (void*)sys_answer_8), 0);
  TVMFFIAny prefix = mod_str("");
  TVMFFIObjectHandle mod;
  EXPECT_OK(system_lib(&prefix, &mod));
  TVMFFIObjectHandle fn = mod_get_function(mod, "conf_mod038", 0);
  cr_assert_not_null(fn);
  cr_expect_eq(mod_call_int(fn, NULL, 0), 8, "the first registration was kept");
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-039: context symbols registered under one name twice are applied in
 * order: a library loaded afterwards holds the later pointer. */
TEST(module_wiring, MOD_039_context_symbol_registered_twice) {
  static int first, second;
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_test_context_slot", &first), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_test_context_slot", &second), 0);
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_no_library_has_this", &first), 0);
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "get_context_slot", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(fn, NULL, 0, &r));
  cr_expect_eq(r.v_ptr, &second, "slot holds %p, registered %p last", r.v_ptr, (void*)&second);
  API(TVMFFIObjectDecRef)(fn);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-040: TVMFFIEnvModLookupFromImports refuses a NULL out (ValueError
 * naming out), a context that is not a module (TypeError naming
 * library_ctx) and a NULL name (ValueError naming func_name). */
TEST(module_wiring, MOD_040_lookup_argument_errors) {
  HOSTILE_INPUT("upstream dereferences each argument unchecked");
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIObjectHandle fn = mod_get_function(mod, "get_ctx", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(fn, NULL, 0, &r));
  void* ctx = r.v_ptr;
  API(TVMFFIObjectDecRef)(fn);
  TVMFFIObjectHandle out = (void*)1;
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(ctx, "x", NULL), -1);
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, "ValueError");
  cr_expect(strstr(err.message, "TVMFFIEnvModLookupFromImports") != NULL &&
                strstr(err.message, "out") != NULL,
            "message: %s", err.message);
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(ctx, NULL, &out), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"func_name"});
  TVMFFIObjectHandle not_module = NULL;
  cr_assert_eq(API(TVMFFIFunctionCreate)(NULL, sys_answer_7, NULL, &not_module), 0);
  out = (void*)1;
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(not_module, "x", &out), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"library_ctx", "Module"});
  cr_expect_null(out);
  cr_expect_eq(API(TVMFFIEnvModLookupFromImports)(NULL, "x", &out), -1);
  EXPECT_RAISED(.says = {"library_ctx"});
  API(TVMFFIObjectDecRef)(not_module);
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-044: the symbol registrations refuse a NULL name with ValueError
 * naming `name`. */
TEST(module_wiring, MOD_044_registration_null_name) {
  HOSTILE_INPUT("upstream makes a string of the NULL name");
  static int marker;
  cr_expect_eq(API(TVMFFIEnvModRegisterContextSymbol)(NULL, &marker), -1);
  ConfError err = conf_take_error();
  cr_expect_str_eq(err.kind, "ValueError");
  cr_expect(strstr(err.message, "TVMFFIEnvModRegisterContextSymbol") != NULL &&
                strstr(err.message, "name") != NULL,
            "message: %s", err.message);
  cr_expect_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(NULL, &marker), -1);
  err = conf_take_error();
  cr_expect_str_eq(err.kind, "ValueError");
  cr_expect(strstr(err.message, "TVMFFIEnvModRegisterSystemLibSymbol") != NULL &&
                strstr(err.message, "name") != NULL,
            "message: %s", err.message);
}

/* MOD-045: an argument tagged as a module whose pointer is NULL is a
 * TypeError naming its position, not a crash. */
TEST(module_wiring, MOD_045_null_module_argument) {
  HOSTILE_INPUT("upstream calls through the NULL module");
  TVMFFIObjectHandle mod = mod_load("libmod_basic.so");
  TVMFFIAny null_mod = mod_none(), r;
  null_mod.type_index = kTVMFFIModule;
  const char* one[] = {"ffi.ModuleGetKind", "ffi.ModuleClearImports", "ffi.ModuleGlobalsAdd"};
  for (int i = 0; i < 3; ++i) {
    cr_expect_eq(mod_call(one[i], &null_mod, 1, &r), -1, "%s accepted a NULL module", one[i]);
    EXPECT_RAISED(.kind = "TypeError", .says = {"#0"});
  }
  TVMFFIAny a[2] = {mod_obj(mod), null_mod};
  cr_expect_eq(mod_call("ffi.ModuleImportModule", a, 2, &r), -1);
  EXPECT_RAISED(.kind = "TypeError", .says = {"#1"});
  API(TVMFFIObjectDecRef)(mod);
}

/* MOD-046: query_imports may be given as an int: nonzero means true. */
TEST(module_wiring, MOD_046_query_imports_as_int) {
  TVMFFIObjectHandle m[2] = {mod_load("libmod_basic.so"), mod_load("libmod_other.so")};
  EXPECT_OK(import_module(m[0], m[1]));
  const int64_t flags[3] = {0, 1, 2};
  for (int i = 0; i < 3; ++i) {
    TVMFFIAny args[3] = {mod_obj(m[0]), mod_str("other_fn"), mod_int(flags[i])}, r;
    EXPECT_OK(mod_call("ffi.ModuleImplementsFunction", args, 3, &r));
    cr_expect_eq(r.type_index, kTVMFFIBool);
    cr_expect_eq(r.v_int64, flags[i] != 0, "query_imports given as the int %lld",
                 (long long)flags[i]);
  }
  clear_imports(m[0]);
  release_all(m, 2);
}

static int mod047_calls;
static char mod047_payload[2][16];

/* ffi.Module.load_from_bytes.testkind for MOD-047: keeps the payload and
 * answers with a module of libmod_other.so. */
static int mod047_loader(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  int k = mod047_calls++;
  if (n != 1 || k >= 2) {
    API(TVMFFIErrorSetRaisedFromCStr)("TypeError", "mod047 loader: want one argument");
    return -1;
  }
  if (args[0].type_index == kTVMFFISmallBytes) {
    memcpy(mod047_payload[k], args[0].v_bytes, args[0].small_str_len);
  } else if (args[0].type_index == kTVMFFIBytes) {
    TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(args[0].v_obj);
    memcpy(mod047_payload[k], b->data, b->size < 15 ? b->size : 15);
  }
  TVMFFIObjectHandle fn = mod_global("ffi.ModuleLoadFromFile");
  TVMFFIAny path = mod_str(mod_lib_path("libmod_other.so"));
  int rc = API(TVMFFIFunctionCall)(fn, &path, 1, result);
  API(TVMFFIObjectDecRef)(fn);
  return rc;
}

/* MOD-047: a `__tvm_ffi__library_bin` symbol without an ELF size (assembly
 * with no .size) is read like a sized one: libmod_packed_unsized.so holds
 * packed.desc's tree and loads as that tree. */
TEST(module_wiring, MOD_047_unsized_library_bin) {
  register_global("ffi.Module.load_from_bytes.testkind", mod047_loader);
  TVMFFIObjectHandle root = mod_load("libmod_packed_unsized.so");
  cr_expect_eq(mod047_calls, 2, "the loader ran %d times for 2 custom entries", mod047_calls);
  cr_expect_str_eq(mod047_payload[0], "payload-one");
  cr_expect_eq(mod_implements(root, "add_one", 0), 1);
  cr_expect_eq(mod_implements(root, "other_fn", 0), 0);
  cr_expect_eq(mod_implements(root, "other_fn", 1), 1);
  API(TVMFFIObjectDecRef)(root);
}

enum { MANY = 40 };

static int answer_index(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)(intptr_t)self;
  return 0;
}

/* MOD-048: many of everything: 40 imports of one module, 40 functions
 * found through TVMFFIEnvModLookupFromImports, 40 pinned modules, 40
 * system-library symbols and context symbols, each kept and told apart. */
TEST(module_wiring, MOD_048_many_of_everything) {
  const char* other_path = mod_lib_path("libmod_other.so");
  TVMFFIObjectHandle basic = mod_load("libmod_basic.so");
  TVMFFIObjectHandle many[MANY];
  for (int i = 0; i < MANY; ++i) {
    many[i] = mod_load("libmod_other.so");
    EXPECT_OK(import_module(basic, many[i]));
    pin("ffi.ModuleGlobalsAdd", many[i]);
  }
  cr_expect_eq(mod_implements(basic, "other_fn", 1), 1);
  for (int i = 0; i < MANY; ++i) {
    char name[64];
    snprintf(name, sizeof name, "conf_test.mod048_%d", i);
    TVMFFIObjectHandle fn = NULL;
    cr_assert_eq(API(TVMFFIFunctionCreate)((void*)(intptr_t)(1000 + i), answer_index, NULL, &fn),
                 0);
    TVMFFIByteArray n = {name, strlen(name)};
    cr_assert_eq(API(TVMFFIFunctionSetGlobal)(&n, fn, 1), 0);
    API(TVMFFIObjectDecRef)(fn);
  }
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < MANY; ++i) {
      char name[64];
      snprintf(name, sizeof name, "conf_test.mod048_%d", i);
      TVMFFIAny r;
      EXPECT_OK(lookup_call(basic, name, &r));
      cr_expect_eq(r.v_int64, 1000 + i, "%s gave %lld", name, (long long)r.v_int64);
    }
  }
  for (int i = 0; i < MANY; ++i) {
    char name[64];
    snprintf(name, sizeof name, "__tvm_ffi_conf48_f%d", i);
    cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(
                     name, i % 2 ? (void*)sys_answer_7 : (void*)sys_answer_8), 0);
    snprintf(name, sizeof name, "conf_mod048_context_%d", i);
    cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)(name, &many[i]), 0);
  }
  static int last;
  cr_assert_eq(API(TVMFFIEnvModRegisterContextSymbol)("conf_test_context_slot", &last), 0);
  TVMFFIAny prefix = mod_str("");
  TVMFFIObjectHandle sys;
  EXPECT_OK(system_lib(&prefix, &sys));
  for (int i = 0; i < MANY; ++i) {
    char name[64];
    snprintf(name, sizeof name, "conf48_f%d", i);
    TVMFFIObjectHandle fn = mod_get_function(sys, name, 0);
    cr_assert_not_null(fn, "%s not found", name);
    cr_expect_eq(mod_call_int(fn, NULL, 0), i % 2 ? 7 : 8, "%s is another symbol", name);
    API(TVMFFIObjectDecRef)(fn);
  }
  API(TVMFFIObjectDecRef)(sys);
  TVMFFIObjectHandle second = mod_load("libmod_basic.so");
  TVMFFIObjectHandle slot = mod_get_function(second, "get_context_slot", 0);
  TVMFFIAny r;
  EXPECT_OK(mod_call_fn(slot, NULL, 0, &r));
  cr_expect_eq(r.v_ptr, &last);
  API(TVMFFIObjectDecRef)(slot);
  API(TVMFFIObjectDecRef)(second);
  clear_imports(basic);
  for (int i = 0; i < MANY; ++i) {
    pin("ffi.ModuleGlobalsRemove", many[MANY - 1 - i]);
    API(TVMFFIObjectDecRef)(many[MANY - 1 - i]);
  }
  cr_expect(!mod_is_loaded(other_path), "a module among many stayed imported or pinned");
  API(TVMFFIObjectDecRef)(basic);
}

/* MOD-049: an unsized `__tvm_ffi__library_bin` claiming 2^40 bytes
 * (libmod_huge_unsized.so) is refused with ValueError: its loaded segment
 * bounds what the loader reads. */
TEST(module_wiring, MOD_049_unsized_blob_bounded_by_segment) {
  HOSTILE_INPUT("an unbounded reader runs off the mapped segment");
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_huge_unsized.so"), &mod), -1,
               "a blob larger than its segment was accepted");
  EXPECT_RAISED(.kind = "ValueError");
  if (mod) API(TVMFFIObjectDecRef)(mod);
}

/* MOD-086: that refusal is the one of nbytes itself (offset 0), as for a
 * sized symbol (LIB-029): the segment's end is the symbol's extent. */
TEST(module_wiring, MOD_086_unsized_blob_nbytes_named) {
  HOSTILE_INPUT("an unbounded reader runs off the mapped segment");
  TVMFFIObjectHandle mod = NULL;
  cr_expect_eq(mod_load_path(mod_lib_path("libmod_huge_unsized.so"), &mod), -1);
  EXPECT_RAISED(.kind = "ValueError", .says = {"offset 0:", "field nbytes:"});
  if (mod) API(TVMFFIObjectDecRef)(mod);
}

enum { LEVELS = 30 };

/* MOD-050: the cycle check of ffi.ModuleImportModule visits each module
 * once: imports forming 30 levels of diamonds (2^30 paths from the top)
 * are checked as quickly as a chain. */
TEST(module_wiring, MOD_050_cycle_check_visits_each_module_once) {
  TVMFFIObjectHandle a[LEVELS + 1], b[LEVELS + 1];
  for (int i = LEVELS; i >= 0; --i) {
    a[i] = mod_load("libmod_other.so");
    b[i] = mod_load("libmod_other.so");
    if (i == LEVELS) continue;
    TVMFFIObjectHandle below[2] = {a[i + 1], b[i + 1]};
    for (int k = 0; k < 2; ++k) {
      EXPECT_OK(import_module(a[i], below[k]));
      EXPECT_OK(import_module(b[i], below[k]));
    }
  }
  TVMFFIObjectHandle top = mod_load("libmod_basic.so");
  EXPECT_OK(import_module(top, a[0]));
  EXPECT_OK(import_module(top, b[0]));
  expect_cycle_refused(b[LEVELS], top);
  cr_expect_eq(mod_implements(top, "other_fn", 1), 1);
  clear_imports(top);
  for (int i = 0; i <= LEVELS; ++i) {
    clear_imports(a[i]);
    clear_imports(b[i]);
  }
  release_all(a, LEVELS + 1);
  release_all(b, LEVELS + 1);
  API(TVMFFIObjectDecRef)(top);
}

/* ---- system-library blobs at the edge of their segment ---- */

typedef struct {
  uintptr_t addr, end;
} SegmentEnd;

static int segment_end_cb(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  SegmentEnd* q = data;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr - lo < ph->p_memsz) {
      q->end = lo + ph->p_memsz;
      return 1;
    }
  }
  return 0;
}

/* One past the last byte of the loaded segment holding `p`. */
static unsigned char* segment_end(const void* p) {
  SegmentEnd q = {(uintptr_t)p, 0};
  cr_assert_neq(dl_iterate_phdr(segment_end_cb, &q), 0, "no loaded segment holds %p", p);
  return (unsigned char*)q.end;
}

/* ffi.SystemLib(prefix) with `<prefix>__tvm_ffi__library_bin` registered as
 * `blob`: must fail with the ValueError of nbytes at offset 0. */
static void expect_blob_past_segment(const char* prefix, void* blob) {
  char symbol[128];
  snprintf(symbol, sizeof symbol, "%s__tvm_ffi__library_bin", prefix);
  cr_assert_eq(API(TVMFFIEnvModRegisterSystemLibSymbol)(symbol, blob), 0);
  TVMFFIAny a = mod_str(prefix), r = mod_none();
  cr_expect_eq(mod_call("ffi.SystemLib", &a, 1, &r), -1, "%s: the blob was accepted", prefix);
  EXPECT_RAISED(.kind = "ValueError", .says = {"offset 0:", "field nbytes:"});
  mod_release(&r);
}

static unsigned char conf87_bss[64];

/* MOD-087: a system-library blob (a registered address) whose nbytes runs
 * one byte past the loaded segment holding it, or which sits on the
 * segment's last byte, is refused as nbytes at offset 0, whatever sized
 * symbol the address lies inside. */
TEST(module_wiring, MOD_087_system_blob_bounded_by_segment) {
  HOSTILE_INPUT("an unbounded reader runs off the mapped segment");
  /* Inside a sized symbol (512 bytes), 16 bytes before its end. */
  void* h = dlopen(mod_lib_path("libmod_blob_env.so"), RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(h, "%s", dlerror());
  unsigned char* sym = dlsym(h, "__tvm_ffi__library_bin");
  cr_assert_not_null(sym);
  unsigned char* blob = sym + 496;
  uint64_t nbytes = (uint64_t)(segment_end(blob) - blob) - 8 + 1;
  memcpy(blob, &nbytes, sizeof nbytes);
  expect_blob_past_segment("conf87a_", blob);
  /* The last byte of this program's segment holding its zeroed data. */
  (void)conf87_bss[0];
  expect_blob_past_segment("conf87b_", segment_end(conf87_bss) - 1);
  dlclose(h);
}
